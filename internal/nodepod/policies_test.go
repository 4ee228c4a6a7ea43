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

package nodepod

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
)

var testCluster = Workload{Namespace: "mgmt-ns", Name: "wl", HostingNamespace: "hosting-ns"}

func TestQuorumMinAvailableKeepsAMajority(t *testing.T) {
	g := NewWithT(t)
	for n, want := range map[int]int32{0: 0, 1: 1, 2: 2, 3: 2, 4: 3, 5: 3, 7: 4} {
		g.Expect(QuorumMinAvailable(n)).To(Equal(want), "n=%d", n)
		if n > 0 {
			// Losing one more node Pod than the budget allows would lose the majority.
			g.Expect(2*(want-1)).To(BeNumerically("<=", n), "n=%d", n)
		}
	}
}

func TestWorkersMinAvailable(t *testing.T) {
	tests := []struct {
		n              int
		maxUnavailable intstr.IntOrString
		want           int32
	}{
		{n: 3, maxUnavailable: intstr.FromInt32(1), want: 2},
		{n: 1, maxUnavailable: intstr.FromInt32(2), want: 0},
		{n: 10, maxUnavailable: intstr.FromString("25%"), want: 7}, // 2.5 rounds up to 3
		{n: 4, maxUnavailable: intstr.FromString("0%"), want: 4},
		{n: 0, maxUnavailable: intstr.FromString("50%"), want: 0},
	}
	for _, tt := range tests {
		g := NewWithT(t)
		got, err := WorkersMinAvailable(tt.n, tt.maxUnavailable)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(got).To(Equal(tt.want), "n=%d maxUnavailable=%s", tt.n, tt.maxUnavailable.String())
	}
	_, err := WorkersMinAvailable(3, intstr.FromString("half"))
	NewWithT(t).Expect(err).To(HaveOccurred())
}

func TestBudgetsSelectTheirRoleOfTheirCluster(t *testing.T) {
	g := NewWithT(t)
	controlPlane, worker := NewPod(testMachine(true)), NewPod(testMachine(false))
	other := testMachine(true)
	other.ClusterName = "other"
	otherPod := NewPod(other)

	cp := NewControlPlaneBudget(testCluster, 2)
	g.Expect(cp.Name).To(Equal("wl-control-plane"))
	g.Expect(cp.Namespace).To(Equal("hosting-ns"))
	g.Expect(cp.Spec.MinAvailable).To(Equal(new(intstr.FromInt32(2))))
	g.Expect(cp.Spec.MaxUnavailable).To(BeNil(), "maxUnavailable needs a controller; node Pods have none")
	g.Expect(selects(g, cp.Spec.Selector, controlPlane)).To(BeTrue())
	g.Expect(selects(g, cp.Spec.Selector, worker)).To(BeFalse())
	g.Expect(selects(g, cp.Spec.Selector, otherPod)).To(BeFalse())

	workers := NewWorkersBudget(testCluster, 1)
	g.Expect(workers.Name).To(Equal("wl-workers"))
	g.Expect(selects(g, workers.Spec.Selector, worker)).To(BeTrue())
	g.Expect(selects(g, workers.Spec.Selector, controlPlane)).To(BeFalse())
	g.Expect(cp.Labels).To(HaveKeyWithValue(infrav1.ManagedByLabel, infrav1.ManagedByValue))
}

func TestNetworkPolicyAdmitsOwnClusterAndAPIClientsOnly(t *testing.T) {
	g := NewWithT(t)
	extra := networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: "192.0.2.0/24"}}
	policy := NewNetworkPolicy(testCluster, []networkingv1.NetworkPolicyPeer{extra})
	own, other := NewPod(testMachine(false)), testMachine(false)
	other.ClusterName = "other"
	otherPod := NewPod(other)

	g.Expect(policy.Name).To(Equal("wl-isolation"))
	g.Expect(policy.Spec.PolicyTypes).To(Equal([]networkingv1.PolicyType{networkingv1.PolicyTypeIngress}))
	g.Expect(selects(g, &policy.Spec.PodSelector, own)).To(BeTrue())
	g.Expect(selects(g, &policy.Spec.PodSelector, otherPod)).To(BeFalse())
	g.Expect(policy.Spec.Ingress).To(HaveLen(2))

	sameCluster := policy.Spec.Ingress[0]
	g.Expect(sameCluster.Ports).To(BeEmpty(), "a cluster's own node Pods reach every port")
	g.Expect(sameCluster.From).To(HaveLen(1))
	g.Expect(sameCluster.From[0].NamespaceSelector).To(BeNil(), "only node Pods of the hosting namespace")
	g.Expect(selects(g, sameCluster.From[0].PodSelector, own)).To(BeTrue())
	g.Expect(selects(g, sameCluster.From[0].PodSelector, otherPod)).To(BeFalse())

	apiServer := policy.Spec.Ingress[1]
	g.Expect(apiServer.Ports).To(HaveLen(1))
	g.Expect(*apiServer.Ports[0].Port).To(Equal(intstr.FromInt32(6443)))
	g.Expect(*apiServer.Ports[0].Protocol).To(Equal(corev1.ProtocolTCP))
	g.Expect(apiServer.From).To(HaveLen(2))
	g.Expect(apiServer.From[0].NamespaceSelector).To(Equal(&metav1.LabelSelector{}), "from every namespace")
	controller := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"control-plane": "controller-manager"}}}
	g.Expect(selects(g, apiServer.From[0].PodSelector, controller)).To(BeTrue())
	g.Expect(selects(g, apiServer.From[0].PodSelector, otherPod)).To(BeFalse(), "no node Pod of another cluster")
	g.Expect(apiServer.From[1]).To(Equal(extra))
}

func TestClusterObjectNamesAreDNSLabels(t *testing.T) {
	g := NewWithT(t)
	for _, name := range []string{"wl", "1cluster", "a-very-long-cluster-name-that-goes-on-and-on-beyond-sixty-three-chars"} {
		for _, object := range []string{ServiceName(name), ControlPlaneBudgetName(name), WorkersBudgetName(name), NetworkPolicyName(name)} {
			g.Expect(len(object)).To(BeNumerically("<=", 63), object)
			g.Expect(object).To(MatchRegexp(`^[a-z]([-a-z0-9]*[a-z0-9])?$`))
		}
	}
	g.Expect(ControlPlaneBudgetName("a")).NotTo(Equal(WorkersBudgetName("a")))
}

func selects(g Gomega, selector *metav1.LabelSelector, pod *corev1.Pod) bool {
	s, err := metav1.LabelSelectorAsSelector(selector)
	g.Expect(err).NotTo(HaveOccurred())
	return s.Matches(labels.Set(pod.Labels))
}

func TestHostingNodePeersAreEachInternalAddressOnce(t *testing.T) {
	g := NewWithT(t)
	node := func(addresses ...corev1.NodeAddress) corev1.Node {
		return corev1.Node{Status: corev1.NodeStatus{Addresses: addresses}}
	}
	internal := func(ip string) corev1.NodeAddress {
		return corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: ip}
	}
	peers := HostingNodePeers([]corev1.Node{
		node(internal("10.251.0.2"), corev1.NodeAddress{Type: corev1.NodeHostName, Address: "b"},
			corev1.NodeAddress{Type: corev1.NodeExternalIP, Address: "203.0.113.9"}),
		node(internal("10.251.0.1"), internal("fd00::1")),
		node(internal("10.251.0.2")), // the same address twice
		node(internal("not-an-address")),
		node(),
	})
	var cidrs []string
	for _, p := range peers {
		g.Expect(p.PodSelector).To(BeNil())
		g.Expect(p.NamespaceSelector).To(BeNil())
		cidrs = append(cidrs, p.IPBlock.CIDR)
	}
	g.Expect(cidrs).To(Equal([]string{"10.251.0.1/32", "10.251.0.2/32", "fd00::1/128"}))
	g.Expect(HostingNodePeers(nil)).To(BeEmpty())
}
