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
	"context"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
)

// controllerRestarts are the management cluster's containers, other than
// the node Pods', that restarted, as recordControllerRestarts found them.
var controllerRestarts []string

// The summary, after every process has finished: one line per spec that ran,
// with its state and time (and, for a failure, where and why, shortened), the
// management cluster's containers that restarted while the specs ran, and a
// last line "N passed, N failed". A setup node that failed (the suite's
// BeforeSuite, say) counts as a failure. CI keeps only the end of a failed
// run's output, so what explains a failure is printed here, last.
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
		if spec.State.Is(types.SpecStateFailureStates) {
			fmt.Printf("         at %s: %s\n", spec.Failure.Location, shorten(spec.Failure.Message, 400))
		}
	}
	for _, restart := range controllerRestarts {
		fmt.Printf("restarted: %s\n", restart)
	}
	fmt.Printf("%d passed, %d failed\n", passed, failed)
})

// shorten puts message on one line of at most n bytes.
func shorten(message string, n int) string {
	message = strings.Join(strings.Fields(message), " ")
	if len(message) > n {
		return message[:n] + "..."
	}
	return message
}

// recordControllerRestarts keeps, for the summary, every container of the
// management cluster that restarted (the node Pods' aside): a controller or a
// webhook that restarts fails the specs that call it meanwhile.
func recordControllerRestarts(ctx context.Context, c client.Reader) {
	pods := &corev1.PodList{}
	if err := c.List(ctx, pods); err != nil {
		controllerRestarts = append(controllerRestarts, "cannot list the management cluster's Pods: "+err.Error())
		return
	}
	for _, pod := range pods.Items {
		if pod.Labels[infrav1.ManagedByLabel] == infrav1.ManagedByValue {
			continue
		}
		for _, status := range pod.Status.ContainerStatuses {
			if status.RestartCount == 0 {
				continue
			}
			last := ""
			if t := status.LastTerminationState.Terminated; t != nil {
				last = fmt.Sprintf(", last %s (exit %d) at %s", t.Reason, t.ExitCode, t.FinishedAt.Format(time.TimeOnly))
			}
			controllerRestarts = append(controllerRestarts, fmt.Sprintf("%s/%s %s: %d times%s",
				pod.Namespace, pod.Name, status.Name, status.RestartCount, last))
		}
	}
}
