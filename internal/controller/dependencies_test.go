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
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/internal/hosting"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/test/envtest"
)

// TestReconcilersNeverPanicOnMissingDependencies runs both reconcilers with
// each of their dependencies absent, broken or unreachable, on the normal path
// and while being deleted. Each case reaches the condition that says what is
// wrong, and controller-runtime recovers no panic meanwhile (it would, and
// count it in controller_runtime_reconcile_panics_total, without failing
// anything else).
func TestReconcilersNeverPanicOnMissingDependencies(t *testing.T) {
	panicsBefore := reconcilePanics(NewWithT(t))
	tests := []struct {
		name string
		// run sets the case up and waits for what it must show.
		run func(t *testing.T, g Gomega)
	}{
		{"the hosting kubeconfig Secret is absent", func(t *testing.T, g Gomega) {
			tc := newTestCluster(t, g, newNamespace(t), "nosecret", remoteSpec("hosting"))
			expectHostingReason(g, tc, infrav1.KubernetesClusterHostingClusterInvalidReason, `Secret `+tc.namespace+`/hosting not found`)
		}},
		{"the hosting kubeconfig Secret is absent while the cluster is deleted", func(t *testing.T, g Gomega) {
			tc := newTestCluster(t, g, newNamespace(t), "nosecretdel", remoteSpec("hosting"))
			expectHostingReason(g, tc, infrav1.KubernetesClusterHostingClusterInvalidReason, "not found")
			deleteAndExpectReconciles(g, tc.kc)
			expectHostingReason(g, tc, infrav1.KubernetesClusterHostingClusterInvalidReason, "not found")
			createKubeconfigSecret(g, tc.namespace, remote.Kubeconfig) // the fix: the deletion completes
			expectGone(g, tc.kc)
		}},
		{"the hosting kubeconfig Secret has no kubeconfig key", func(t *testing.T, g Gomega) {
			ns := newNamespace(t)
			g.Expect(env.Client.Create(context.Background(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hosting"},
				Data: map[string][]byte{"other": []byte("x")}})).To(Succeed())
			tc := newTestCluster(t, g, ns, "nokey", remoteSpec("hosting"))
			expectHostingReason(g, tc, infrav1.KubernetesClusterHostingClusterInvalidReason, `has no key "value"`)
		}},
		{"the hosting cluster is unreachable while the cluster is deleted", func(t *testing.T, g Gomega) {
			ns := newNamespace(t)
			createKubeconfigSecret(g, ns, deadKubeconfig(g))
			tc := newTestCluster(t, g, ns, "deaddel", remoteSpec("hosting"))
			expectHostingReason(g, tc, infrav1.KubernetesClusterHostingClusterUnreachableReason, "")
			deleteAndExpectReconciles(g, tc.kc)
			expectHostingReason(g, tc, infrav1.KubernetesClusterHostingClusterUnreachableReason, "")
			setKubeconfig(g, ns, remote.Kubeconfig)
			expectGone(g, tc.kc)
		}},
		{"the KubernetesCluster's Cluster is absent", func(t *testing.T, g Gomega) {
			tc := newTestCluster(t, g, newNamespace(t), "nocluster", infrav1.KubernetesClusterSpec{})
			g.Expect(env.Client.Delete(context.Background(), tc.cluster)).To(Succeed())
			g.Expect(env.Client.Delete(context.Background(), tc.kc)).To(Succeed())
			expectGone(g, tc.kc) // a deletion needs no Cluster
		}},
		{"the machine's KubernetesCluster is absent", func(t *testing.T, g Gomega) {
			tc := newTestCluster(t, g, newNamespace(t), "nokc", infrav1.KubernetesClusterSpec{})
			tc.markInfrastructureProvisioned(g)
			deleteWithoutFinalizers(g, tc.kc)
			tm := newTestMachine(g, tc, "nokc-md-0", machineOptions{bootstrapData: true})
			expectMachineWaits(g, tm, "nokc-infra")
			g.Expect(env.Client.Delete(context.Background(), tm.km)).To(Succeed())
			expectGone(g, tm.km) // nothing tells where its node Pod would run: there is none
		}},
		{"the machine's bootstrap data Secret is absent", func(t *testing.T, g Gomega) {
			tc := newTestCluster(t, g, newNamespace(t), "nodata", infrav1.KubernetesClusterSpec{})
			tc.markInfrastructureProvisioned(g)
			tm := newTestMachine(g, tc, "nodata-md-0", machineOptions{})
			g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(tm.machine), tm.machine)).To(Succeed())
			tm.machine.Spec.Bootstrap.DataSecretName = ptr.To("never-written")
			g.Expect(env.Client.Update(context.Background(), tm.machine)).To(Succeed())
			expectMachineWaits(g, tm, "never-written")
			expectNoPod(g, tc, tm)
			g.Expect(env.Client.Delete(context.Background(), tm.km)).To(Succeed())
			expectGone(g, tm.km)
		}},
		{"the machine's hosting kubeconfig Secret is absent", func(t *testing.T, g Gomega) {
			tc := newTestCluster(t, g, newNamespace(t), "mnosecret", remoteSpec("hosting"))
			tc.markInfrastructureProvisioned(g)
			tm := newTestMachine(g, tc, "mnosecret-md-0", machineOptions{bootstrapData: true})
			expectMachineWaits(g, tm, "not found")
			g.Expect(env.Client.Delete(context.Background(), tm.km)).To(Succeed())
			expectGone(g, tm.km) // it never had anything on a hosting cluster
		}},
		{"the machine's hosting kubeconfig breaks while it is deleted", func(t *testing.T, g Gomega) {
			tc, hostingNamespace := newRemoteTestCluster(t, g, "mbroken", remote.Kubeconfig)
			tc.markInfrastructureProvisioned(g)
			tm, _ := runningRemoteMachine(g, tc, hostingNamespace, "mbroken-md-0")
			setKubeconfig(g, tc.namespace, []byte("not a kubeconfig"))
			expectHostingReason(g, tc, infrav1.KubernetesClusterHostingClusterInvalidReason, "")
			g.Expect(env.Client.Delete(context.Background(), tm.km)).To(Succeed())
			expectMachineWaits(g, tm, "invalid hosting kubeconfig")
			setKubeconfig(g, tc.namespace, remote.Kubeconfig)
			expectGone(g, tm.km)
			expectMachineObjectsGone(g, remote.Client, hostingNamespace, tm.km.Name)
		}},
		{"the machine's Machine is absent while it is deleted", func(t *testing.T, g Gomega) {
			tc := newTestCluster(t, g, newNamespace(t), "nomachine", infrav1.KubernetesClusterSpec{})
			tc.markInfrastructureProvisioned(g)
			tm := newTestMachine(g, tc, "nomachine-md-0", machineOptions{bootstrapData: true})
			eventuallyPod(g, env.Client, podKey(tc, tm.km.Name))
			g.Expect(env.Client.Delete(context.Background(), tm.machine)).To(Succeed())
			g.Expect(env.Client.Delete(context.Background(), tm.km)).To(Succeed())
			expectGone(g, tm.km)
			expectMachineObjectsGone(g, env.Client, tc.namespace, tm.km.Name)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.run(t, NewWithT(t)) })
	}
	g := NewWithT(t)
	g.Consistently(func() float64 { return reconcilePanics(g) - panicsBefore }, 2*time.Second, 500*time.Millisecond).
		Should(BeZero(), "controller-runtime recovered a panic of a reconciler")
}

// TestPersistentProblemIsRetriedWithBackoff: a KubernetesCluster whose
// kubeconfig Secret lacks its key is retried, with a backoff that grows, and
// not in a loop.
func TestPersistentProblemIsRetriedWithBackoff(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	g.Expect(env.Client.Create(context.Background(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hosting"},
		Data: map[string][]byte{"other": []byte("x")}})).To(Succeed())
	tc := newTestCluster(t, g, ns, "backoff", remoteSpec("hosting"))
	expectHostingReason(g, tc, infrav1.KubernetesClusterHostingClusterInvalidReason, "has no key")
	key := client.ObjectKeyFromObject(tc.kc)
	early := reconciles.of(key)
	time.Sleep(8 * time.Second)
	late := reconciles.of(key)
	t.Logf("reconciles: %d before the condition, %d more in 8 s", early, late-early)
	// controller-runtime's backoff doubles from 5 ms: about 11 retries reach
	// 8 s; a requeue loop would make hundreds.
	g.Expect(late - early).To(BeNumerically("<=", 15))
	g.Expect(late-early).To(BeNumerically(">=", 1), "the problem is retried")
}

// TestKubeconfigServerURLEndingInASlashStaysReachable: "https://host:port/"
// is a valid server URL; the health probe joins /readyz to it properly, so the
// hosting cluster stays reachable over several probes, and its cluster is
// not reconciled in a loop.
func TestKubeconfigServerURLEndingInASlashStaysReachable(t *testing.T) {
	g := NewWithT(t)
	slashed := *remote.Config
	slashed.Host = strings.TrimSuffix(remote.Config.Host, "/") + "/"
	kubeconfig, err := envtest.KubeconfigFor(&slashed, "")
	g.Expect(err).NotTo(HaveOccurred())
	tc, _ := newRemoteTestCluster(t, g, "slash", kubeconfig)
	eventuallyKubernetesCluster(g, client.ObjectKeyFromObject(tc.kc), func(g Gomega, kc *infrav1.KubernetesCluster) {
		g.Expect(kc.Status.Initialization.Provisioned).To(HaveValue(BeTrue()))
	})
	key := client.ObjectKeyFromObject(tc.kc)
	before := reconciles.of(key)
	g.Consistently(func(g Gomega) {
		kc := &infrav1.KubernetesCluster{}
		g.Expect(env.Client.Get(context.Background(), key, kc)).To(Succeed())
		g.Expect(conditionOf(kc.Status.Conditions, infrav1.KubernetesClusterHostingClusterReachableCondition).Status).To(Equal(metav1.ConditionTrue))
	}, 5*time.Second, 200*time.Millisecond).Should(Succeed(), "5 health probes later")
	g.Expect(reconciles.of(key)-before).To(BeNumerically("<=", 3), "a healthy cluster is left alone")
}

// reconcilePanics is the sum of controller_runtime_reconcile_panics_total over
// every controller of the test manager.
func reconcilePanics(g Gomega) float64 {
	families, err := ctrlmetrics.Registry.Gather()
	g.Expect(err).NotTo(HaveOccurred())
	total := 0.0
	for _, family := range families {
		if family.GetName() != "controller_runtime_reconcile_panics_total" {
			continue
		}
		for _, metric := range family.GetMetric() {
			total += metric.GetCounter().GetValue()
		}
	}
	return total
}

func remoteSpec(secretName string) infrav1.KubernetesClusterSpec {
	return infrav1.KubernetesClusterSpec{HostingCluster: &infrav1.HostingClusterReference{SecretName: secretName}}
}

// createKubeconfigSecret creates the namespace's "hosting" Secret labelled as
// the provider labels it (so that its creation is watched), as a user
// restores it.
func createKubeconfigSecret(g Gomega, namespace string, kubeconfig []byte) {
	g.Expect(env.Client.Create(context.Background(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "hosting",
			Labels: map[string]string{hosting.KubeconfigLabel: "true", clusterv1.ClusterNameLabel: "restored"}},
		Data: map[string][]byte{"value": kubeconfig},
	})).To(Succeed())
}

func deadKubeconfig(g Gomega) []byte {
	dead := *remote.Config
	dead.Host = "https://127.0.0.1:1" // nothing listens there
	kubeconfig, err := envtest.KubeconfigFor(&dead, "")
	g.Expect(err).NotTo(HaveOccurred())
	return kubeconfig
}

func expectHostingReason(g Gomega, tc *testCluster, reason, message string) {
	g.Eventually(func(g Gomega) {
		kc := &infrav1.KubernetesCluster{}
		g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(tc.kc), kc)).To(Succeed())
		condition := conditionOf(kc.Status.Conditions, infrav1.KubernetesClusterHostingClusterReachableCondition)
		g.Expect(condition.Reason).To(Equal(reason))
		g.Expect(condition.Message).To(ContainSubstring(message))
	}, 30*time.Second, 100*time.Millisecond).Should(Succeed())
}

// expectMachineWaits waits for the machine's PodProvisioned condition to be
// False and to say message.
func expectMachineWaits(g Gomega, tm *testMachine, message string) {
	eventuallyKubernetesMachine(g, client.ObjectKeyFromObject(tm.km), func(g Gomega, km *infrav1.KubernetesMachine) {
		condition := conditionOf(km.Status.Conditions, infrav1.KubernetesMachinePodProvisionedCondition)
		g.Expect(condition.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(condition.Message).To(ContainSubstring(message))
		g.Expect(conditionOf(km.Status.Conditions, clusterv1.ReadyCondition).Status).To(Equal(metav1.ConditionFalse))
	})
}

func expectNoPod(g Gomega, tc *testCluster, tm *testMachine) {
	g.Consistently(func() error {
		return env.Client.Get(context.Background(), podKey(tc, tm.km.Name), &corev1.Pod{})
	}, 2*time.Second, 200*time.Millisecond).ShouldNot(Succeed())
}

// deleteAndExpectReconciles deletes a KubernetesCluster and waits until its
// deletion has been reconciled (twice, so the first one is over: one object is
// never reconciled twice at once) without being able to finish.
func deleteAndExpectReconciles(g Gomega, kc *infrav1.KubernetesCluster) {
	key := client.ObjectKeyFromObject(kc)
	before := reconciles.of(key)
	g.Expect(env.Client.Delete(context.Background(), kc)).To(Succeed())
	g.Eventually(func() int { return reconciles.of(key) }, 60*time.Second, 100*time.Millisecond).
		Should(BeNumerically(">=", before+2), "the deletion is reconciled")
	g.Expect(env.Client.Get(context.Background(), key, &infrav1.KubernetesCluster{})).To(Succeed(), "it waits for its hosting cluster")
}

func expectGone(g Gomega, obj client.Object) {
	g.Eventually(func() bool {
		err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), obj)
		return err != nil && client.IgnoreNotFound(err) == nil
	}, 30*time.Second, 100*time.Millisecond).Should(BeTrue(), "%s is deleted", obj.GetName())
}
