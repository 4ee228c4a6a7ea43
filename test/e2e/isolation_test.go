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
	"fmt"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/internal/nodepod"
)

// kubeletPort is the port of the kubelet inside a node Pod.
const kubeletPort = 10250

// probe is one TCP connection attempt from a node Pod of one cluster.
type probe struct {
	from          corev1.Pod
	what, address string
	port          int
	open          bool // what the NetworkPolicies must allow
}

// expectIsolation connects from node Pods of a and b to each other's API
// server and kubelet, directly and through the control-plane Service: only
// connections within a cluster get through. The hosting cluster enforces the
// provider's NetworkPolicies with kube-network-policies.
func expectIsolation(ctx context.Context, t *testing.T, g Gomega, a, b *workloadCluster) {
	aWorker, aControlPlane := nodePodsByRole(ctx, g, a)
	bWorker, bControlPlane := nodePodsByRole(ctx, g, b)
	bService := &corev1.Service{}
	g.Expect(env.client.Get(ctx, client.ObjectKey{Namespace: b.namespace, Name: nodepod.ServiceName(b.name)}, bService)).To(Succeed())
	probes := []probe{
		{from: aWorker, what: a.name + " API server", address: aControlPlane.Status.PodIP, port: 6443, open: true},
		{from: aWorker, what: a.name + " kubelet of the control plane", address: aControlPlane.Status.PodIP, port: kubeletPort, open: true},
		{from: aWorker, what: b.name + " API server", address: bControlPlane.Status.PodIP, port: 6443},
		{from: aWorker, what: b.name + " API server through its Service", address: bService.Spec.ClusterIP, port: 6443},
		{from: aWorker, what: b.name + " kubelet of the control plane", address: bControlPlane.Status.PodIP, port: kubeletPort},
		{from: aWorker, what: b.name + " kubelet of the worker", address: bWorker.Status.PodIP, port: kubeletPort},
		{from: bWorker, what: a.name + " API server", address: aControlPlane.Status.PodIP, port: 6443},
		{from: bWorker, what: b.name + " API server through its Service", address: bService.Spec.ClusterIP, port: 6443, open: true},
	}
	var report strings.Builder
	for _, p := range probes {
		open := connects(ctx, t, p)
		fmt.Fprintf(&report, "%-28s -> %-46s %-21s %s\n", p.from.Name, p.what, fmt.Sprintf("%s:%d", p.address, p.port), state(open))
		g.Expect(open).To(Equal(p.open), "%s -> %s (%s:%d)", p.from.Name, p.what, p.address, p.port)
	}
	t.Logf("connections between node Pods of %s and %s:\n%s", a.name, b.name, report.String())
	g.Eventually(func(g Gomega) {
		a.expectNodesReady(ctx, g, len(a.nodePods(ctx, g)))
		b.expectNodesReady(ctx, g, len(b.nodePods(ctx, g)))
	}).WithTimeout(time.Minute).WithPolling(5*time.Second).Should(Succeed(), "both clusters keep working")
}

// nodePodsByRole returns a worker's and the control plane's node Pod of w.
func nodePodsByRole(ctx context.Context, g Gomega, w *workloadCluster) (worker, controlPlane corev1.Pod) {
	for _, pod := range w.nodePods(ctx, g) {
		if pod.Labels[infrav1.NodeRoleLabel] == infrav1.NodeRoleControlPlane {
			controlPlane = pod
		} else {
			worker = pod
		}
	}
	g.Expect(worker.Name).NotTo(BeEmpty(), "a worker node Pod of %s", w.name)
	g.Expect(controlPlane.Status.PodIP).NotTo(BeEmpty(), "a control-plane node Pod of %s", w.name)
	return worker, controlPlane
}

// connects opens a TCP connection from inside the node Pod with bash's
// /dev/tcp; a refused or unanswered connection fails within 5 seconds.
func connects(ctx context.Context, t *testing.T, p probe) bool {
	script := fmt.Sprintf("timeout 5 bash -c '</dev/tcp/%s/%d'", p.address, p.port)
	_, err := env.command(ctx, t, nil, "KUBECTL", "exec", "--namespace", p.from.Namespace, p.from.Name,
		"--container", nodepod.NodeContainerName, "--", "bash", "-c", script)
	return err == nil
}

func state(open bool) string {
	if open {
		return "connected"
	}
	return "refused (no answer in 5s)"
}

// expectDrainRefused drains the hosting node of w's control-plane node Pod
// the way an operator would (kubectl drain, limited to that Pod; --force
// because node Pods have no controller, which drain otherwise refuses to
// evict at all, budget or not): with one
// control-plane machine, the provider's PodDisruptionBudget refuses the
// eviction, the Pod keeps running, and the node is uncordoned again.
func expectDrainRefused(ctx context.Context, t *testing.T, g Gomega, w *workloadCluster) {
	_, controlPlane := nodePodsByRole(ctx, g, w)
	node := controlPlane.Spec.NodeName
	t.Cleanup(func() {
		_, _ = env.command(context.Background(), t, nil, "KUBECTL", "uncordon", node)
	})
	selector := labels.SelectorFromSet(nodepod.ControlPlaneSelector(w.namespace, w.name)).String()
	cmd := env.commandWithInput(ctx, t, nil, nil, "KUBECTL", "drain", node, "--pod-selector", selector,
		"--ignore-daemonsets", "--delete-emptydir-data", "--force", "--timeout", "20s")
	out, err := cmd.CombinedOutput()
	t.Logf("kubectl drain %s --pod-selector %s:\n%s", node, selector, out)
	g.Expect(err).To(HaveOccurred(), "the drain must not evict the only control-plane node Pod")
	g.Expect(string(out)).To(ContainSubstring("disruption budget"))
	_, err = env.command(ctx, t, nil, "KUBECTL", "uncordon", node)
	g.Expect(err).NotTo(HaveOccurred())

	after := &corev1.Pod{}
	g.Expect(env.client.Get(ctx, client.ObjectKeyFromObject(&controlPlane), after)).To(Succeed())
	g.Expect(after.UID).To(Equal(controlPlane.UID))
	g.Expect(after.DeletionTimestamp).To(BeNil(), "the control-plane node Pod was not evicted")
	t.Logf("kubectl drain %s of %s was refused; the node Pod runs on (budget %s)", node, controlPlane.Name, nodepod.ControlPlaneBudgetName(w.name))
}
