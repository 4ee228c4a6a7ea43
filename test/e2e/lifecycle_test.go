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
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/internal/nodepod"
)

// TestWorkloadClusterLifecycle creates a cluster from the default template
// (1 control plane, 2 workers), runs workloads across its nodes, checks that a
// second cluster's node Pods cannot reach it, and deletes both; every step
// checks the hosting cluster too. Scaling a MachineDeployment up and down is
// Cluster API's MachineDeploymentScaleSpec (test/capi-e2e), and clusterctl
// move its SelfHostedSpec there, which also check that nothing is left on the
// hosting cluster and that a move touches no node Pod.
func TestWorkloadClusterLifecycle(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Minute)
	defer cancel()
	g := NewWithT(t)
	w := startCluster(ctx, t, g, "e2e", 1, 2)

	w.waitAvailable(ctx, t, g, 15*time.Minute)
	g.Eventually(func(g Gomega) { w.expectNodesReady(ctx, g, 3) }).
		WithTimeout(5 * time.Minute).WithPolling(5 * time.Second).Should(Succeed())
	w.expectTimeline(ctx, t, g, 3)
	// The second cluster boots while the steps before the isolation check run.
	other := startCluster(ctx, t, g, "other", 1, 1)

	t.Run("workloads reach each other across nodes and by DNS", func(t *testing.T) {
		expectCrossNodeTraffic(ctx, t, NewWithT(t), w)
	})
	t.Run("kube-proxy's rules are in the node's iptables backend", func(t *testing.T) {
		expectOneIptablesBackend(ctx, t, NewWithT(t), w)
	})
	t.Run("a bootstrap that fails stops the node and is reported with its log", func(t *testing.T) {
		expectBootstrapFailureReported(ctx, t, NewWithT(t), w)
	})
	t.Run("a node Pod deleted behind the provider's back is reported and remediated", func(t *testing.T) {
		expectRemediation(ctx, t, NewWithT(t), w)
	})
	t.Run("draining the hosting node is refused while it would break the control plane's quorum", func(t *testing.T) {
		expectDrainRefused(ctx, t, NewWithT(t), w)
	})
	t.Run("node Pods of one cluster cannot reach another cluster's API server or kubelets", func(t *testing.T) {
		g := NewWithT(t)
		other.waitAvailable(ctx, t, g, 15*time.Minute)
		g.Eventually(func(g Gomega) { other.expectNodesReady(ctx, g, 2) }).
			WithTimeout(5 * time.Minute).WithPolling(5 * time.Second).Should(Succeed())
		expectIsolation(ctx, t, g, w, other)
	})
	t.Run("delete the clusters, leaving nothing on the hosting cluster", func(t *testing.T) {
		g := NewWithT(t)
		deleteClusters(ctx, t, g, other, w)
	})
}

// startCluster creates a cluster of the default template in a namespace of
// its own with the pod network installed, and logs its diagnostics if the
// test fails. It does not wait for the cluster.
func startCluster(ctx context.Context, t *testing.T, g Gomega, name string, controlPlanes, workers int) *workloadCluster {
	t.Helper()
	namespace := newNamespace(ctx, t, g)
	installPodnet(ctx, g, namespace)
	w := createCluster(ctx, t, g, namespace, name, controlPlanes, workers)
	t.Cleanup(func() {
		if t.Failed() {
			dumpDiagnostics(context.Background(), t, w)
		}
	})
	return w
}

// deleteClusters deletes the Clusters, all at once as a user tearing down
// would, and waits until each and everything the provider made for it on the
// hosting cluster are gone.
func deleteClusters(ctx context.Context, t testing.TB, g Gomega, clusters ...*workloadCluster) {
	start := time.Now()
	for _, w := range clusters {
		cluster := &clusterv1.Cluster{}
		g.Expect(env.client.Get(ctx, client.ObjectKey{Namespace: w.namespace, Name: w.name}, cluster)).To(Succeed())
		g.Expect(env.client.Delete(ctx, cluster)).To(Succeed())
	}
	waitClustersGone(ctx, t, g, start, clusters...)
}

// waitClustersGone waits until each Cluster and everything the provider made
// for it on the hosting cluster are gone, logging the time since start.
func waitClustersGone(ctx context.Context, t testing.TB, g Gomega, start time.Time, clusters ...*workloadCluster) {
	for _, w := range clusters {
		g.Eventually(func(g Gomega) {
			err := env.client.Get(ctx, client.ObjectKey{Namespace: w.namespace, Name: w.name}, &clusterv1.Cluster{})
			g.Expect(client.IgnoreNotFound(err)).To(Succeed())
			g.Expect(err).To(HaveOccurred(), "the Cluster still exists")
		}).WithTimeout(10 * time.Minute).WithPolling(5 * time.Second).Should(Succeed())
		pods, secrets := w.hostingObjects(ctx, g)
		g.Expect(pods).To(BeZero(), "node Pods left on the hosting cluster")
		g.Expect(secrets).To(BeZero(), "bootstrap Secrets left on the hosting cluster")
		expectNoServicesOrClaims(ctx, g, w)
		t.Logf("cluster %s/%s deleted %s after the deletions began", w.namespace, w.name, time.Since(start).Round(time.Second))
	}
}

// expectRemediation deletes a worker's node Pod on the hosting cluster: the
// provider reports the loss on the KubernetesMachine, does not recreate the
// Pod and deletes its Node from the workload cluster; the template's
// MachineHealthCheck, finding the Node gone, replaces the Machine at once
// (without waiting out its 5 minutes of Ready=Unknown) with a new one whose
// node becomes Ready.
func expectRemediation(ctx context.Context, t *testing.T, g Gomega, w *workloadCluster) {
	start := time.Now()
	workers := w.machines(ctx, g, client.HasLabels{clusterv1.MachineDeploymentNameLabel})
	g.Expect(workers).NotTo(BeEmpty())
	victim := workers[0]
	pod := &corev1.Pod{}
	g.Expect(env.client.Get(ctx, client.ObjectKey{Namespace: w.namespace,
		Name: nodepod.PodName(victim.Spec.InfrastructureRef.Name)}, pod)).To(Succeed())
	g.Expect(env.client.Delete(ctx, pod)).To(Succeed())
	t.Logf("deleted node Pod %s of Machine %s", pod.Name, victim.Name)

	g.Eventually(func(g Gomega) {
		km := &infrav1.KubernetesMachine{}
		err := env.client.Get(ctx, client.ObjectKey{Namespace: w.namespace, Name: victim.Spec.InfrastructureRef.Name}, km)
		if client.IgnoreNotFound(err) == nil && err != nil {
			return // already remediated
		}
		g.Expect(err).NotTo(HaveOccurred())
		c := meta.FindStatusCondition(km.Status.Conditions, infrav1.KubernetesMachinePodProvisionedCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Reason).To(Equal(infrav1.KubernetesMachinePodLostReason))
	}).WithTimeout(2 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
	g.Eventually(func() bool {
		_, err := w.clients.CoreV1().Nodes().Get(ctx, victim.Status.NodeRef.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	}).WithTimeout(time.Minute).WithPolling(time.Second).Should(BeTrue(), "the lost node Pod's Node leaves the workload cluster")
	t.Logf("Node %s left the workload cluster %s after its node Pod was deleted", victim.Status.NodeRef.Name, time.Since(start).Round(time.Second))

	machines := len(workers) + 1 // and the control plane
	g.Eventually(func(g Gomega) {
		now := w.machines(ctx, g, client.HasLabels{clusterv1.MachineDeploymentNameLabel})
		g.Expect(now).To(HaveLen(len(workers)))
		for _, m := range now {
			g.Expect(m.Name).NotTo(Equal(victim.Name), "the unhealthy Machine is replaced")
		}
		w.expectNodesReady(ctx, g, machines)
		pods, secrets := w.hostingObjects(ctx, g)
		g.Expect(pods).To(Equal(machines), "node Pods on the hosting cluster")
		g.Expect(secrets).To(Equal(machines), "bootstrap Secrets on the hosting cluster")
	}).WithTimeout(10 * time.Minute).WithPolling(5 * time.Second).Should(Succeed())
	t.Logf("Machine %s remediated in %s", victim.Name, time.Since(start).Round(time.Second))
}
