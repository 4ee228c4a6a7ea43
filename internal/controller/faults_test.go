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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/internal/nodepod"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/test/envtest"
)

// outage is how long the hosting cluster's API server is away.
const outage = 60 * time.Second

// TestHostingOutageDuringProvisioning cuts the connection to a remote hosting
// cluster for 60 s while one machine runs and another gets its bootstrap
// data: the conditions say the hosting cluster is unreachable, nothing on it
// is deleted or created meanwhile, and both machines are provisioned once it
// is back.
func TestHostingOutageDuringProvisioning(t *testing.T) {
	g := NewWithT(t)
	proxy := startRemoteProxy(t, g)
	kubeconfig, err := remote.KubeconfigThrough(proxy, nil)
	g.Expect(err).NotTo(HaveOccurred())
	tc, hostingNamespace := newRemoteTestCluster(t, g, "outage", kubeconfig)
	tc.markInfrastructureProvisioned(g)
	running, runningPod := runningRemoteMachine(g, tc, hostingNamespace, "outage-md-0")
	pending := newTestMachine(g, tc, "outage-md-1", machineOptions{})

	proxy.Cut()
	cut := time.Now()
	pending.giveBootstrapData(g, "worker-join.yaml")
	eventuallyKubernetesCluster(g, client.ObjectKeyFromObject(tc.kc), func(g Gomega, kc *infrav1.KubernetesCluster) {
		g.Expect(conditionOf(kc.Status.Conditions, infrav1.KubernetesClusterHostingClusterReachableCondition).Reason).
			To(Equal(infrav1.KubernetesClusterHostingClusterUnreachableReason))
	})
	eventuallyKubernetesMachine(g, client.ObjectKeyFromObject(pending.km), func(g Gomega, km *infrav1.KubernetesMachine) {
		g.Expect(conditionOf(km.Status.Conditions, infrav1.KubernetesMachinePodProvisionedCondition).Reason).
			To(Equal(infrav1.KubernetesClusterHostingClusterUnreachableReason))
	})
	t.Logf("the conditions reported the outage after %s", time.Since(cut).Round(100*time.Millisecond))
	g.Consistently(func(g Gomega) {
		expectPods(g, hostingNamespace, map[string]types.UID{runningPod.Name: runningPod.UID})
	}, outage-time.Since(cut), time.Second).Should(Succeed(), "nothing changes on the hosting cluster during the outage")

	proxy.Restore()
	back := time.Now()
	pendingPod := eventuallyPod(g, remote.Client, client.ObjectKey{Namespace: hostingNamespace, Name: nodepod.PodName(pending.km.Name)})
	setPodRunning(g, remote.Client, pendingPod, true, time.Now())
	for _, km := range []*infrav1.KubernetesMachine{running.km, pending.km} {
		eventuallyKubernetesMachine(g, client.ObjectKeyFromObject(km), func(g Gomega, km *infrav1.KubernetesMachine) {
			g.Expect(conditionOf(km.Status.Conditions, clusterv1.ReadyCondition).Status).To(Equal(metav1.ConditionTrue))
		})
	}
	t.Logf("both machines Ready %s after the hosting cluster came back", time.Since(back).Round(100*time.Millisecond))
	expectPods(g, hostingNamespace, map[string]types.UID{runningPod.Name: runningPod.UID, pendingPod.Name: pendingPod.UID})
}

// TestKubeconfigRotation rotates the hosting cluster's kubeconfig Secret to a
// new user reached by another address, then cuts the old address: the
// provider works on through the new one without a blip. A broken kubeconfig
// is then a condition, and no node Pod is deleted.
func TestKubeconfigRotation(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	oldProxy, newProxy := startRemoteProxy(t, g), startRemoteProxy(t, g)
	kubeconfig, err := remote.KubeconfigThrough(oldProxy, nil)
	g.Expect(err).NotTo(HaveOccurred())
	tc, hostingNamespace := newRemoteTestCluster(t, g, "rotate", kubeconfig)
	tc.markInfrastructureProvisioned(g)
	first, firstPod := runningRemoteMachine(g, tc, hostingNamespace, "rotate-md-0")

	rotated, err := remote.AddUser("rotated-" + tc.namespace)
	g.Expect(err).NotTo(HaveOccurred())
	setKubeconfig(g, tc.namespace, mustKubeconfig(g, func() ([]byte, error) { return remote.KubeconfigThrough(newProxy, rotated) }))
	g.Eventually(newProxy.Connections, 20*time.Second, 100*time.Millisecond).Should(BeNumerically(">", 0), "the client is rebuilt")
	oldProxy.Cut()
	second, secondPod := runningRemoteMachine(g, tc, hostingNamespace, "rotate-md-1")
	g.Consistently(func(g Gomega) {
		kc := &infrav1.KubernetesCluster{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(tc.kc), kc)).To(Succeed())
		g.Expect(conditionOf(kc.Status.Conditions, infrav1.KubernetesClusterHostingClusterReachableCondition).Status).To(Equal(metav1.ConditionTrue))
	}, 3*time.Second, 200*time.Millisecond).Should(Succeed(), "no disruption")

	setKubeconfig(g, tc.namespace, []byte("not a kubeconfig"))
	eventuallyKubernetesCluster(g, client.ObjectKeyFromObject(tc.kc), func(g Gomega, kc *infrav1.KubernetesCluster) {
		g.Expect(conditionOf(kc.Status.Conditions, infrav1.KubernetesClusterHostingClusterReachableCondition).Reason).
			To(Equal(infrav1.KubernetesClusterHostingClusterInvalidReason))
	})
	pods := map[string]types.UID{firstPod.Name: firstPod.UID, secondPod.Name: secondPod.UID}
	g.Consistently(func(g Gomega) { expectPods(g, hostingNamespace, pods) }, 3*time.Second, 200*time.Millisecond).Should(Succeed())
	for _, tm := range []*testMachine{first, second} {
		km := &infrav1.KubernetesMachine{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(tm.km), km)).To(Succeed())
		g.Expect(km.DeletionTimestamp.IsZero()).To(BeTrue())
	}
}

// startRemoteProxy forwards a loopback port to the remote hosting cluster's
// API server for the test's duration.
func startRemoteProxy(t *testing.T, g Gomega) *envtest.Proxy {
	address, err := remote.APIServerAddress()
	g.Expect(err).NotTo(HaveOccurred())
	proxy, err := envtest.StartProxy(address)
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = proxy.Close() })
	return proxy
}

// runningRemoteMachine creates a worker whose node Pod runs Ready on the remote
// hosting cluster, and waits until it is provisioned.
func runningRemoteMachine(g Gomega, tc *testCluster, hostingNamespace, name string) (*testMachine, *corev1.Pod) {
	tm := newTestMachine(g, tc, name, machineOptions{bootstrapData: true})
	pod := eventuallyPod(g, remote.Client, client.ObjectKey{Namespace: hostingNamespace, Name: nodepod.PodName(name)})
	setPodRunning(g, remote.Client, pod, true, time.Now())
	eventuallyKubernetesMachine(g, client.ObjectKeyFromObject(tm.km), func(g Gomega, km *infrav1.KubernetesMachine) {
		g.Expect(conditionOf(km.Status.Conditions, clusterv1.ReadyCondition).Status).To(Equal(metav1.ConditionTrue))
	})
	return tm, pod
}

// expectPods checks, on the hosting cluster itself, that exactly these Pods
// (by name and UID) are there and none is being deleted.
func expectPods(g Gomega, namespace string, want map[string]types.UID) {
	pods := &corev1.PodList{}
	g.Expect(remote.Client.List(context.Background(), pods, client.InNamespace(namespace))).To(Succeed())
	got := map[string]types.UID{}
	for _, pod := range pods.Items {
		g.Expect(pod.DeletionTimestamp.IsZero()).To(BeTrue(), "Pod %s is being deleted", pod.Name)
		got[pod.Name] = pod.UID
	}
	g.Expect(got).To(Equal(want))
}

// setKubeconfig replaces the value of the namespace's "hosting" Secret.
func setKubeconfig(g Gomega, namespace string, kubeconfig []byte) {
	ctx := context.Background()
	secret := &corev1.Secret{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "hosting"}, secret)).To(Succeed())
	secret.Data["value"] = kubeconfig
	g.Expect(env.Client.Update(ctx, secret)).To(Succeed())
}

func mustKubeconfig(g Gomega, build func() ([]byte, error)) []byte {
	kubeconfig, err := build()
	g.Expect(err).NotTo(HaveOccurred())
	return kubeconfig
}
