/*
Copyright 2026 The cluster-api-provider-kubernetes Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Package fuzzseed adds the committed seed files of a fuzz target to its corpus.
package fuzzseed

import (
	"os"
	"path/filepath"
	"testing"
)

// AddFiles adds the content of every file matching pattern (relative to the
// package under test, e.g. "testdata/*.json") as a seed; no match fails.
func AddFiles(f *testing.F, pattern string) {
	f.Helper()
	names, err := filepath.Glob(pattern)
	if err != nil || len(names) == 0 {
		f.Fatalf("no seeds match %s: %v", pattern, err)
	}
	for _, name := range names {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
}
