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

package bootstrap

import (
	"bytes"
	"errors"
	"path/filepath"
	"testing"

	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/test/fuzzseed"
)

// FuzzRender checks that any input either renders deterministically or fails
// with ErrInvalidCloudConfig, and never panics. Plain "go test" runs the seeds.
func FuzzRender(f *testing.F) {
	fuzzseed.AddFiles(f, filepath.Join("testdata", "*.yaml"))
	f.Add([]byte("#cloud-config\nruncmd: ['true', [a, 1]]\nwrite_files:\n- path: a\n  encoding: gz+b64\n  content: H4sIAAAAAAAA/wMAAAAAAAAAAAA=\n  permissions: 0640\n"))
	f.Add([]byte("## template: jinja\n#cloud-config\nbootcmd: [[]]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		first, err := Render(data, "", Node{})
		if err != nil {
			if !errors.Is(err, ErrInvalidCloudConfig) {
				t.Fatalf("error does not wrap ErrInvalidCloudConfig: %v", err)
			}
			return
		}
		again, err := Render(data, "", Node{})
		if err != nil || !bytes.Equal(first.Content, again.Content) {
			t.Fatalf("rendering is not deterministic (err %v)", err)
		}
	})
}
