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

package controller_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/test/envtest"
)

// TestLostNodePodTakesItsNodeOutOfTheWorkloadCluster: the second API server
// plays the workload cluster, reached through the kubeconfig Secret Cluster
// API writes. A node Pod that is deleted, and one that ends, each take their
// machine's Node with them; a running machine's Node stays.
func TestLostNodePodTakesItsNodeOutOfTheWorkloadCluster(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	tc, deleted, deletedPod := provisionedWorker(t, g, "lost-node", infrav1.KubernetesClusterSpec{})
	ended := newTestMachine(g, tc, "lost-node-md-1", machineOptions{bootstrapData: true})
	endedPod := eventuallyPod(g, env.Client, podKey(tc, ended.km.Name))
	setPodRunning(g, env.Client, endedPod, true, time.Now())
	giveWorkloadKubeconfig(g, tc)
	deletedNode := registerWorkloadNode(g, deleted, "lost-node-deleted")
	endedNode := registerWorkloadNode(g, ended, "lost-node-ended")

	g.Expect(env.Client.Delete(ctx, deletedPod, client.GracePeriodSeconds(0))).To(Succeed())
	eventuallyKubernetesMachine(g, client.ObjectKeyFromObject(deleted.km), func(g Gomega, km *infrav1.KubernetesMachine) {
		g.Expect(conditionOf(km.Status.Conditions, infrav1.KubernetesMachinePodProvisionedCondition).Reason).To(Equal(infrav1.KubernetesMachinePodLostReason))
	})
	g.Eventually(func() bool {
		return apierrors.IsNotFound(remote.Client.Get(ctx, client.ObjectKeyFromObject(deletedNode), &corev1.Node{}))
	}, 10*time.Second, 100*time.Millisecond).Should(BeTrue(), "the deleted node Pod's Node is deleted")
	g.Consistently(func() error {
		return remote.Client.Get(ctx, client.ObjectKeyFromObject(endedNode), &corev1.Node{})
	}, 2*time.Second).Should(Succeed(), "the running machine's Node stays")

	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(endedPod), endedPod)).To(Succeed())
	endedPod.Status.Phase = corev1.PodFailed
	g.Expect(env.Client.Status().Update(ctx, endedPod)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(remote.Client.Get(ctx, client.ObjectKeyFromObject(endedNode), &corev1.Node{}))
	}, 10*time.Second, 100*time.Millisecond).Should(BeTrue(), "the ended node Pod's Node is deleted")
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(endedPod), &corev1.Pod{})).To(Succeed(),
		"the ended node Pod is kept for its log")
}

// TestLostNodeDeletionIsRetriedUntilTheWorkloadAPITakesIt: when the node
// Pod is lost, the workload cluster cannot be reached yet (here: Cluster API
// has not written its kubeconfig Secret; in a drain, the workload API server
// restarts with its node Pod). The provider tries again, without an event that
// claims the Node went, until it can, and then records LostNodeDeleted once.
func TestLostNodeDeletionIsRetriedUntilTheWorkloadAPITakesIt(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	tc, lost, lostPod := provisionedWorker(t, g, "lost-node-retry", infrav1.KubernetesClusterSpec{})
	node := registerWorkloadNode(g, lost, "lost-node-retry")

	g.Expect(env.Client.Delete(ctx, lostPod, client.GracePeriodSeconds(0))).To(Succeed())
	eventuallyKubernetesMachine(g, client.ObjectKeyFromObject(lost.km), func(g Gomega, km *infrav1.KubernetesMachine) {
		g.Expect(conditionOf(km.Status.Conditions, infrav1.KubernetesMachinePodProvisionedCondition).Reason).To(Equal(infrav1.KubernetesMachinePodLostReason))
	})
	g.Consistently(func() error {
		return remote.Client.Get(ctx, client.ObjectKeyFromObject(node), &corev1.Node{})
	}, 2*time.Second).Should(Succeed(), "no workload cluster to reach yet")
	g.Expect(lostNodeEvents(g, tc, lost)).To(BeZero())

	giveWorkloadKubeconfig(g, tc)
	g.Eventually(func() bool {
		return apierrors.IsNotFound(remote.Client.Get(ctx, client.ObjectKeyFromObject(node), &corev1.Node{}))
	}, 20*time.Second, 200*time.Millisecond).Should(BeTrue(), "the Node is deleted on a later try")
	g.Eventually(func() int { return lostNodeEvents(g, tc, lost) }, 5*time.Second).Should(Equal(1))
	g.Consistently(func() int { return lostNodeEvents(g, tc, lost) }, 12*time.Second, time.Second).Should(Equal(1),
		"a Node already gone is no news")
}

// lostNodeEvents counts the machine's LostNodeDeleted Events, a series (the
// recorder's repeats of one event) as its count.
func lostNodeEvents(g Gomega, tc *testCluster, tm *testMachine) int {
	events := &eventsv1.EventList{}
	g.Expect(env.Client.List(context.Background(), events, client.InNamespace(tc.namespace))).To(Succeed())
	count := 0
	for _, event := range events.Items {
		if event.Regarding.Name != tm.km.Name || event.Reason != infrav1.KubernetesMachineLostNodeDeletedEventReason {
			continue
		}
		count++
		if event.Series != nil {
			count += int(event.Series.Count) - 1
		}
	}
	return count
}

// giveWorkloadKubeconfig does what Cluster API does once the control plane is
// up: the Secret <cluster>-kubeconfig, here for the second API server.
func giveWorkloadKubeconfig(g Gomega, tc *testCluster) {
	kubeconfig, err := envtest.KubeconfigFor(remote.Config, "")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(env.Client.Create(context.Background(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: tc.namespace, Name: tc.cluster.Name + "-kubeconfig",
			Labels: map[string]string{clusterv1.ClusterNameLabel: tc.cluster.Name}},
		Type: clusterv1.ClusterSecretType,
		Data: map[string][]byte{"value": kubeconfig},
	})).To(Succeed())
}

// registerWorkloadNode plays the kubelet and Cluster API's Machine controller:
// a Node in the workload cluster, named in the Machine's nodeRef.
func registerWorkloadNode(g Gomega, tm *testMachine, name string) *corev1.Node {
	ctx := context.Background()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	g.Expect(remote.Client.Create(ctx, node)).To(Succeed())
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(tm.machine), tm.machine)).To(Succeed())
	tm.machine.Status.NodeRef = clusterv1.MachineNodeReference{Name: name}
	g.Expect(env.Client.Status().Update(ctx, tm.machine)).To(Succeed())
	return node
}
