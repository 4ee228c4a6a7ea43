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

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// BenchmarkNodeFloor (make bench-nodes) measures a cluster's time to a
// working cluster against its floor, in one run on the e2e environment:
// first the node image started by hand as bare node Pods (the provider's own
// Pod and bootstrap script, no controller), kubeadm init on one, then
// kubeadm join on another, until both Nodes are Ready; then a cluster of
// 1 control plane and 2 workers from the default template until Available.
// Both timelines are written under out/bench-nodes/, and the report puts
// their phases side by side.
func BenchmarkNodeFloor(b *testing.B) {
	g := NewWithT(b)
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
	defer cancel()
	out := filepath.Join("..", "..", "out", "bench-nodes")
	g.Expect(os.MkdirAll(out, 0o755)).To(Succeed())
	for range b.N {
		floor := measureFloor(ctx, b, g, out)
		cluster := measureCluster(ctx, b, g, out)
		reportFloor(b, g, floor, cluster, out)
	}
}

// measureFloor starts the control plane's node Pod, waits until its kubeadm
// init ended, installs the pod network (as the ClusterResourceSet does), then
// starts the worker's and waits until both Nodes are Ready. The namespace is
// deleted afterwards so that the cluster's run has the hosting nodes to itself.
func measureFloor(ctx context.Context, b *testing.B, g Gomega, out string) timelineReport {
	namespace := newNamespace(ctx, b, g)
	f := newFloorRun(g, namespace)
	controlPlane, worker := f.node("floor-control-plane", true), f.node("floor-worker", false)
	f.start(ctx, g, controlPlane, f.controlPlaneConfig(g, controlPlane.Name))
	pod := f.waitBootstrapEnded(ctx, g, controlPlane.Name, 5*time.Minute)
	workload, clients := f.workloadAdmin(ctx, g, pod.Status.PodIP)
	applyPodnet(ctx, g, workload)
	f.start(ctx, g, worker, f.workerConfig(g, worker.Name, pod.Status.PodIP))
	waitNodesReady(ctx, g, clients, 2, 5*time.Minute)
	report, _ := runTimeline(ctx, b, g, out, "floor", namespace, floorCluster, true)
	deleteNamespace(ctx, g, namespace)
	return report
}

// measureCluster creates a cluster of 1 control plane and 2 workers from the
// default template, waits until it is Available, and deletes it.
func measureCluster(ctx context.Context, b *testing.B, g Gomega, out string) timelineReport {
	namespace := newNamespace(ctx, b, g)
	installPodnet(ctx, g, namespace)
	w := createCluster(ctx, b, g, namespace, "bench", 1, 2)
	w.waitAvailable(ctx, b, g, 10*time.Minute)
	report, _ := runTimeline(ctx, b, g, out, "cluster", namespace, w.name, false)
	scaleByOne(ctx, b, g, w, 3)
	deleteClusters(ctx, b, g, w)
	deleteNamespace(ctx, g, namespace)
	return report
}

// scaleByOne adds a replica to the cluster's MachineDeployment and reports
// how long until the workload cluster has one more Ready Node than the
// nodes it had.
func scaleByOne(ctx context.Context, b *testing.B, g Gomega, w *workloadCluster, nodes int) {
	deployments := &clusterv1.MachineDeploymentList{}
	g.Expect(env.client.List(ctx, deployments, client.InNamespace(w.namespace),
		client.MatchingLabels{clusterv1.ClusterNameLabel: w.name})).To(Succeed())
	g.Expect(deployments.Items).To(HaveLen(1))
	md := &deployments.Items[0]
	patch := client.MergeFrom(md.DeepCopy())
	md.Spec.Replicas = ptr.To(*md.Spec.Replicas + 1)
	start := time.Now()
	g.Expect(env.client.Patch(ctx, md, patch)).To(Succeed())
	waitNodesReady(ctx, g, w.clients, nodes+1, 5*time.Minute)
	took := time.Since(start)
	b.Logf("MachineDeployment %s scaled to %d: the new Node Ready %.1f s after the change", md.Name, *md.Spec.Replicas, took.Seconds())
	b.ReportMetric(took.Seconds(), "scale-node-ready-s")
}

func deleteNamespace(ctx context.Context, g Gomega, name string) {
	g.Expect(env.client.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})).To(Succeed())
	g.Eventually(func() bool {
		err := env.client.Get(ctx, client.ObjectKey{Name: name}, &corev1.Namespace{})
		return apierrors.IsNotFound(err)
	}).WithContext(ctx).WithTimeout(3*time.Minute).WithPolling(2*time.Second).Should(BeTrue(), "namespace %s deleted", name)
}

// offset is when the last row of role reached milestone; false if none did.
func (t timelineReport) offset(role, milestone string) (time.Duration, bool) {
	var last time.Duration
	found := false
	for _, r := range t.Rows {
		for _, e := range r.Events {
			if r.Role == role && e.Milestone == milestone {
				last, found = max(last, e.Offset), true
			}
		}
	}
	return last, found
}

// span is the longest phase of that name among the rows of role.
func (t timelineReport) span(role, phase string) (time.Duration, bool) {
	var longest time.Duration
	found := false
	for _, r := range t.Rows {
		for _, s := range r.Spans {
			if r.Role == role && s.Phase == phase {
				longest, found = max(longest, s.End-s.Start), true
			}
		}
	}
	return longest, found
}

// comparedPhases are the report's lines: for each role, when its (last)
// node Pod was created, then each phase of the machine, the longest if
// several; then the cluster's milestones.
var comparedPhases = []struct{ label, role, milestone, phase string }{
	{label: "control plane: node Pod created at", role: "control-plane", milestone: "pod created"},
	{label: "  pod scheduling and start", role: "control-plane", phase: "pod scheduling and start"},
	{label: "  systemd boot (the image)", role: "control-plane", phase: "systemd boot"},
	{label: "  bootstrap (kubeadm init)", role: "control-plane", phase: "bootstrap (kubeadm)"},
	{label: "  node registered to Ready", role: "control-plane", phase: "node ready"},
	{label: "workers: last node Pod created at", role: "worker", milestone: "pod created"},
	{label: "  pod scheduling and start", role: "worker", phase: "pod scheduling and start"},
	{label: "  systemd boot (the image)", role: "worker", phase: "systemd boot"},
	{label: "  bootstrap (kubeadm join)", role: "worker", phase: "bootstrap (kubeadm)"},
	{label: "  node registered to Ready", role: "worker", phase: "node ready"},
	{label: "control plane initialized at", role: "cluster", milestone: "control plane initialized"},
	{label: "Available (floor: every Node Ready) at", role: "cluster", milestone: "cluster available"},
}

func (t timelineReport) value(role, milestone, phase string) string {
	var d time.Duration
	var ok bool
	if milestone != "" {
		d, ok = t.offset(role, milestone)
	} else {
		d, ok = t.span(role, phase)
	}
	if !ok {
		return "-"
	}
	return fmt.Sprintf("%.1f", d.Seconds())
}

// reportFloor prints the phases side by side, reports the times to
// Available and their ratio as benchmark metrics and writes them to
// out/bench-nodes/summary.json.
func reportFloor(b *testing.B, g Gomega, floor, cluster timelineReport, out string) {
	var table strings.Builder
	w := tabwriter.NewWriter(&table, 0, 0, 2, ' ', tabwriter.AlignRight)
	lines := []string{"seconds\tfloor\tcluster\t"}
	for _, p := range comparedPhases {
		lines = append(lines, fmt.Sprintf("%s\t%s\t%s\t", p.label, floor.value(p.role, p.milestone, p.phase),
			cluster.value(p.role, p.milestone, p.phase)))
	}
	_, err := io.WriteString(w, strings.Join(lines, "\n")+"\n")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(w.Flush()).To(Succeed())
	floorEnd, okFloor := floor.offset("cluster", "cluster available")
	available, okCluster := cluster.offset("cluster", "cluster available")
	g.Expect(okFloor && okCluster).To(BeTrue(), "both runs reached their end:\n%s", table.String())
	ratio := available.Seconds() / floorEnd.Seconds()
	b.Logf("time to a working cluster against its floor (1 control plane + 1 worker in sequence by hand; "+
		"1 control plane + 2 workers by Cluster API):\n%s\ncluster Available %.1f s, floor %.1f s: %.2f times the floor",
		table.String(), available.Seconds(), floorEnd.Seconds(), ratio)
	b.ReportMetric(available.Seconds(), "available-s")
	b.ReportMetric(floorEnd.Seconds(), "floor-s")
	b.ReportMetric(ratio, "x-floor")
	summary, err := json.MarshalIndent(map[string]float64{"availableSeconds": available.Seconds(),
		"floorSeconds": floorEnd.Seconds(), "timesTheFloor": ratio}, "", "  ")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(os.WriteFile(filepath.Join(out, "summary.json"), append(summary, '\n'), 0o644)).To(Succeed()) //nolint:gosec // a report
}
