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
	"time"

	. "github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
	corev1 "k8s.io/api/core/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
)

// controllerRestarts are the management cluster's containers, other than
// the node Pods', that restarted, as recordControllerRestarts found them.
var controllerRestarts []string

// The summary, after every process has finished: one line per spec that ran,
// with its state and time (the failures last: where and why, shortened, and
// the Machines of each Cluster the failed spec deleted, as they were), the
// management cluster's containers that restarted while the specs ran, and a
// last line "N passed, N failed". A setup node that failed (the suite's
// BeforeSuite, say) counts as a failure. CI keeps only the end of a failed
// run's output, so what explains a failure is printed here, last.
var _ = ReportAfterSuite("summary", func(report Report) {
	passed, failed := 0, 0
	var failures []string // printed after the passed specs, nearer the end
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
		line := fmt.Sprintf("%-8s %7s  %s\n", spec.State, spec.RunTime.Round(time.Second), name)
		if spec.State.Is(types.SpecStateFailureStates) {
			failures = append(failures, line+failureDetails(spec))
			continue
		}
		fmt.Print(line)
	}
	for _, failure := range failures {
		fmt.Print(failure)
	}
	for _, restart := range controllerRestarts {
		fmt.Printf("restarted: %s\n", restart)
	}
	fmt.Printf("%d passed, %d failed\n", passed, failed)
})

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

// machinesAtFailure names the report entries recordMachinesOfFailedSpec adds.
const machinesAtFailure = "machines at failure"

// failureDetails is where and why a failed spec failed and the state of its
// clusters' Machines, a line each, indented under the spec's line.
func failureDetails(spec types.SpecReport) string {
	details := fmt.Sprintf("         at %s: %s\n", spec.Failure.Location, shorten(spec.Failure.Message, 400))
	for _, entry := range spec.ReportEntries {
		if entry.Name == machinesAtFailure {
			details += entry.StringRepresentation()
		}
	}
	return details
}

// recordMachinesOfFailedSpec adds, when the running spec has failed, the
// state of the Cluster's Machines to the spec's report, for the summary: a
// spec deletes its clusters after a failure, and CI keeps no artifacts.
func recordMachinesOfFailedSpec(ctx context.Context, c client.Reader, cluster *clusterv1.Cluster) {
	if !CurrentSpecReport().Failed() {
		return
	}
	machines := &clusterv1.MachineList{}
	if err := c.List(ctx, machines, client.InNamespace(cluster.Namespace),
		client.MatchingLabels{clusterv1.ClusterNameLabel: cluster.Name}); err != nil {
		AddReportEntry(machinesAtFailure, fmt.Sprintf("         Cluster %s: cannot list its Machines: %v\n", cluster.Name, err),
			ReportEntryVisibilityNever)
		return
	}
	AddReportEntry(machinesAtFailure, describeMachines(cluster.Name, machines.Items), ReportEntryVisibilityNever)
}
