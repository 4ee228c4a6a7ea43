//go:build e2e

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

package capie2e

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
)

// The summary, after every process has finished: one line per spec that ran,
// with its state and time, and a last line "N passed, N failed". A setup node
// that failed (the suite's BeforeSuite, say) counts as a failure.
var _ = ReportAfterSuite("summary", func(report Report) {
	passed, failed := 0, 0
	for _, spec := range report.SpecReports {
		ranSpec := spec.LeafNodeType == types.NodeTypeIt && !spec.State.Is(types.SpecStateSkipped|types.SpecStatePending)
		if !ranSpec && !spec.State.Is(types.SpecStateFailureStates) {
			continue // a setup node that passed, or a spec that did not run
		}
		if spec.State.Is(types.SpecStatePassed) {
			passed++
		} else {
			failed++
		}
		name := spec.FullText()
		if name == "" {
			name = "[" + spec.LeafNodeType.String() + "]" // a failed setup node: no spec ran after it
		}
		fmt.Printf("%-8s %7s  %s\n", spec.State, spec.RunTime.Round(time.Second), name)
	}
	fmt.Printf("%d passed, %d failed\n", passed, failed)
})
