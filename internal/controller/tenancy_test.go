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
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/internal/nodepod"
)

// expectBudget waits until the budget exists with minAvailable want, or,
// with want 0, until it is gone.
func expectBudget(g Gomega, namespace, name string, want int) {
	g.Eventually(func(g Gomega) {
		budget := &policyv1.PodDisruptionBudget{}
		err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: name}, budget)
		if want == 0 {
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "budget %s should be gone: %v", name, err)
			return
		}
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(budget.Spec.MinAvailable).To(HaveValue(Equal(intstr.FromInt32(int32(want)))), "budget %s", name)
	}, 20*time.Second, 100*time.Millisecond).Should(Succeed())
}

func TestDisruptionBudgetsFollowTheMachines(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	tc := newTestCluster(t, g, ns, "pdb", infrav1.KubernetesClusterSpec{
		DisruptionBudgets: infrav1.DisruptionBudgets{WorkersMaxUnavailable: ptr.To(intstr.FromString("50%"))},
	})
	controlPlane, workers := nodepod.ControlPlaneBudgetName("pdb"), nodepod.WorkersBudgetName("pdb")
	expectBudget(g, ns, controlPlane, 0)

	var machines []*testMachine
	for i, want := range []int{1, 2, 2} { // a majority of 1, 2, 3
		machines = append(machines, newTestMachine(g, tc, fmt.Sprintf("pdb-cp-%d", i), machineOptions{controlPlane: true}))
		expectBudget(g, ns, controlPlane, want)
	}
	expectBudget(g, ns, workers, 0)
	for i := range 4 {
		newTestMachine(g, tc, fmt.Sprintf("pdb-md-%d", i), machineOptions{})
	}
	expectBudget(g, ns, workers, 2) // at most 50% of 4 unavailable
	expectBudget(g, ns, controlPlane, 2)

	budget := &policyv1.PodDisruptionBudget{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: controlPlane}, budget)).To(Succeed())
	g.Expect(budget.Spec.Selector.MatchLabels).To(HaveKeyWithValue(infrav1.NodeRoleLabel, infrav1.NodeRoleControlPlane))
	g.Expect(budget.OwnerReferences).To(BeEmpty(), "hosting objects never point at management objects")

	// A scale-down: the budget shrinks as soon as the Machine starts to go.
	g.Expect(env.Client.Delete(ctx, machines[2].machine)).To(Succeed())
	g.Expect(env.Client.Delete(ctx, machines[1].machine)).To(Succeed())
	expectBudget(g, ns, controlPlane, 1)

	eventuallyKubernetesCluster(g, client.ObjectKeyFromObject(tc.kc), func(g Gomega, kc *infrav1.KubernetesCluster) {
		ready := conditionOf(kc.Status.Conditions, infrav1.KubernetesClusterHostingPoliciesReadyCondition)
		g.Expect(ready.Status).To(Equal(metav1.ConditionTrue))
		g.Expect(ready.Message).To(ContainSubstring("PodDisruptionBudget pdb-control-plane keeps 1 of the control-plane node Pods available"))
	})

	// Turned off, the budgets go.
	updateKubernetesCluster(g, tc, func(kc *infrav1.KubernetesCluster) {
		kc.Spec.DisruptionBudgets = infrav1.DisruptionBudgets{ControlPlane: infrav1.ControlPlaneBudgetNone}
	})
	expectBudget(g, ns, controlPlane, 0)
	expectBudget(g, ns, workers, 0)
}

func TestBudgetEditsAreUndone(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	tc := newTestCluster(t, g, ns, "drift", infrav1.KubernetesClusterSpec{})
	newTestMachine(g, tc, "drift-cp-0", machineOptions{controlPlane: true})
	name := nodepod.ControlPlaneBudgetName("drift")
	expectBudget(g, ns, name, 1)

	budget := &policyv1.PodDisruptionBudget{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, budget)).To(Succeed())
	budget.Spec.MinAvailable = ptr.To(intstr.FromInt32(0))
	g.Expect(env.Client.Update(ctx, budget)).To(Succeed())
	edited := budget.Generation
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, budget)).To(Succeed())
		g.Expect(budget.Generation).To(BeNumerically(">", edited), "the provider wrote it back")
		g.Expect(budget.Spec.MinAvailable).To(HaveValue(Equal(intstr.FromInt32(1))))
	}, 20*time.Second, 100*time.Millisecond).Should(Succeed())
}

func TestNetworkPolicyIsKeptAndCanBeTurnedOff(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	client1 := networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: "192.0.2.0/24"}}
	// A hosting node's address is admitted too (HostingNodePeers).
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "hosting-node-iso"}}
	g.Expect(client.IgnoreAlreadyExists(env.Client.Create(ctx, node))).To(Succeed())
	node.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "198.51.100.7"}}
	g.Expect(env.Client.Status().Update(ctx, node)).To(Succeed())
	nodePeer := networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: "198.51.100.7/32"}}
	tc := newTestCluster(t, g, ns, "iso", infrav1.KubernetesClusterSpec{
		NetworkIsolation: infrav1.NetworkIsolation{APIServerClients: []networkingv1.NetworkPolicyPeer{client1}},
	})
	key := client.ObjectKey{Namespace: ns, Name: nodepod.NetworkPolicyName("iso")}
	policy := &networkingv1.NetworkPolicy{}
	g.Eventually(func() error { return env.Client.Get(ctx, key, policy) }, 20*time.Second).Should(Succeed())
	g.Expect(policy.Spec.PodSelector.MatchLabels).To(Equal(nodepod.ClusterLabels(ns, "iso")))
	g.Expect(policy.Spec.Ingress).To(HaveLen(2))
	g.Expect(policy.Spec.Ingress[1].From).To(ContainElement(client1))
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, key, policy)).To(Succeed())
		g.Expect(policy.Spec.Ingress[1].From).To(ContainElement(nodePeer))
	}, 20*time.Second, 100*time.Millisecond).Should(Succeed())

	eventuallyKubernetesCluster(g, client.ObjectKeyFromObject(tc.kc), func(g Gomega, kc *infrav1.KubernetesCluster) {
		g.Expect(kc.Spec.NetworkIsolation.Mode).To(Equal(infrav1.NetworkIsolationEnabled), "defaulted")
		g.Expect(conditionOf(kc.Status.Conditions, infrav1.KubernetesClusterHostingPoliciesReadyCondition).Message).To(ContainSubstring("NetworkPolicy iso-isolation"))
	})
	updateKubernetesCluster(g, tc, func(kc *infrav1.KubernetesCluster) { kc.Spec.NetworkIsolation.Mode = infrav1.NetworkIsolationDisabled })
	g.Eventually(func() bool { return apierrors.IsNotFound(env.Client.Get(ctx, key, policy)) }, 20*time.Second).Should(BeTrue())

	updateKubernetesCluster(g, tc, func(kc *infrav1.KubernetesCluster) { kc.Spec.NetworkIsolation.Mode = infrav1.NetworkIsolationEnabled })
	g.Eventually(func() error { return env.Client.Get(ctx, key, policy) }, 20*time.Second).Should(Succeed())
}

func TestPodSecurityRejectionIsAConditionAtOnce(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	namespace := &corev1.Namespace{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: ns}, namespace)).To(Succeed())
	namespace.Labels["pod-security.kubernetes.io/enforce"] = "baseline"
	g.Expect(env.Client.Update(ctx, namespace)).To(Succeed())

	tc := newTestCluster(t, g, ns, "psa", infrav1.KubernetesClusterSpec{})
	tc.markInfrastructureProvisioned(g)
	tm := newTestMachine(g, tc, "psa-md-0", machineOptions{bootstrapData: true})
	expectRejected(g, tm, "violates PodSecurity", `"baseline:latest"`, "privileged")
	g.Expect(apierrors.IsNotFound(env.Client.Get(ctx, podKey(tc, tm.km.Name), &corev1.Pod{}))).To(BeTrue())
}

func TestExhaustedQuotaIsAConditionAtOnce(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	// The machine's defaulted requests (250m CPU, 1Gi) do not fit; the quota
	// controller does not run here, so the test fills the quota's status.
	hard := corev1.ResourceList{corev1.ResourceRequestsCPU: resource.MustParse("100m")}
	quota := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nodes"}, Spec: corev1.ResourceQuotaSpec{Hard: hard}}
	g.Expect(env.Client.Create(ctx, quota)).To(Succeed())
	quota.Status = corev1.ResourceQuotaStatus{Hard: hard, Used: corev1.ResourceList{corev1.ResourceRequestsCPU: resource.MustParse("0")}}
	g.Expect(env.Client.Status().Update(ctx, quota)).To(Succeed())

	tc := newTestCluster(t, g, ns, "quota", infrav1.KubernetesClusterSpec{})
	tc.markInfrastructureProvisioned(g)
	tm := newTestMachine(g, tc, "quota-md-0", machineOptions{bootstrapData: true})
	expectRejected(g, tm, "exceeded quota: nodes", "requests.cpu=250m")
}

// updateKubernetesCluster changes the KubernetesCluster's latest version; the
// controller writes its status meanwhile, so a conflict means read again.
func updateKubernetesCluster(g Gomega, tc *testCluster, mutate func(*infrav1.KubernetesCluster)) {
	g.Eventually(func() error {
		kc := &infrav1.KubernetesCluster{}
		if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(tc.kc), kc); err != nil {
			return err
		}
		mutate(kc)
		return env.Client.Update(context.Background(), kc)
	}, 10*time.Second, 100*time.Millisecond).Should(Succeed())
}

// expectRejected waits (briefly: the rejection is reported on the first
// attempt) for the machine's PodProvisioned condition to say PodRejected
// with the hosting cluster's own words.
func expectRejected(g Gomega, tm *testMachine, words ...string) {
	km := &infrav1.KubernetesMachine{}
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(tm.km), km)).To(Succeed())
		condition := conditionOf(km.Status.Conditions, infrav1.KubernetesMachinePodProvisionedCondition)
		g.Expect(condition.Reason).To(Equal(infrav1.KubernetesMachinePodRejectedReason))
		for _, word := range words {
			g.Expect(condition.Message).To(ContainSubstring(word))
		}
	}, 5*time.Second, 100*time.Millisecond).Should(Succeed())
}

// TestHostingNodeChangesReachTheCluster: a hosting Node that joins later, in
// a new zone, becomes a failure domain and is admitted by the NetworkPolicy
// without anything else of the cluster changing (the Node watch).
func TestHostingNodeChangesReachTheCluster(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	tc := newTestCluster(t, g, ns, "grows", infrav1.KubernetesClusterSpec{})
	key := client.ObjectKey{Namespace: ns, Name: nodepod.NetworkPolicyName("grows")}
	eventuallyKubernetesCluster(g, client.ObjectKeyFromObject(tc.kc), func(g Gomega, kc *infrav1.KubernetesCluster) {
		g.Expect(kc.Status.Initialization.Provisioned).To(HaveValue(BeTrue()))
		g.Expect(env.Client.Get(ctx, key, &networkingv1.NetworkPolicy{})).To(Succeed())
	})

	zone := "zone-" + ns // unique: Nodes are shared by every test
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "late-" + ns, Labels: map[string]string{corev1.LabelTopologyZone: zone}}}
	g.Expect(env.Client.Create(ctx, node)).To(Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), node) })
	eventuallyKubernetesCluster(g, client.ObjectKeyFromObject(tc.kc), func(g Gomega, kc *infrav1.KubernetesCluster) {
		g.Expect(kc.Status.FailureDomains).To(ContainElement(HaveField("Name", zone)))
	})

	node.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "198.51.100.99"}}
	g.Expect(env.Client.Status().Update(ctx, node)).To(Succeed())
	nodePeer := networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: "198.51.100.99/32"}}
	g.Eventually(func(g Gomega) {
		policy := &networkingv1.NetworkPolicy{}
		g.Expect(env.Client.Get(ctx, key, policy)).To(Succeed())
		g.Expect(policy.Spec.Ingress[1].From).To(ContainElement(nodePeer))
	}, 20*time.Second, 100*time.Millisecond).Should(Succeed())
}
