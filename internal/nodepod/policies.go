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
	"fmt"
	"net"
	"slices"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
)

// Workload names a workload cluster's hosting objects: the namespace and name
// of its Cluster API Cluster on the management side, and the hosting namespace.
type Workload struct {
	Namespace, Name  string
	HostingNamespace string
	// OwnerID is the KubernetesCluster's owner ID (infrav1.OwnerIDAnnotation).
	OwnerID string
}

// Owner is who the cluster's own hosting objects belong to.
func (c Workload) Owner() Owner { return Owner{Namespace: c.Namespace, Cluster: c.Name, ID: c.OwnerID} }

// ObjectMeta is the metadata of the cluster's hosting object name.
func (c Workload) ObjectMeta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name: name, Namespace: c.HostingNamespace, Labels: c.Owner().withOwnerID(ClusterLabels(c.Namespace, c.Name)),
		Annotations: c.Owner().annotations(),
	}
}

// QuorumMinAvailable is how many of n control-plane node Pods must stay
// available for etcd to keep its quorum: a majority.
func QuorumMinAvailable(n int) int32 {
	if n <= 0 {
		return 0
	}
	return int32(n/2 + 1)
}

// WorkersMinAvailable is how many of n worker node Pods must stay available
// when at most maxUnavailable (a number, or a percentage of n rounded up) may
// be disrupted. Node Pods have no controller the disruption controller could
// scale a percentage by, so the provider keeps the number in step itself.
func WorkersMinAvailable(n int, maxUnavailable intstr.IntOrString) (int32, error) {
	unavailable, err := intstr.GetScaledValueFromIntOrPercent(&maxUnavailable, n, true)
	if err != nil {
		return 0, err
	}
	return int32(max(0, n-unavailable)), nil
}

// NewControlPlaneBudget renders the PodDisruptionBudget that keeps minAvailable
// of the cluster's control-plane node Pods running.
func NewControlPlaneBudget(c Workload, minAvailable int32) *policyv1.PodDisruptionBudget {
	return newBudget(c.ObjectMeta(ControlPlaneBudgetName(c.Name)), ControlPlaneSelector(c.Namespace, c.Name), minAvailable)
}

// NewWorkersBudget renders the PodDisruptionBudget that keeps minAvailable of
// the cluster's worker node Pods running.
func NewWorkersBudget(c Workload, minAvailable int32) *policyv1.PodDisruptionBudget {
	return newBudget(c.ObjectMeta(WorkersBudgetName(c.Name)), RoleSelector(c.Namespace, c.Name, false), minAvailable)
}

// newBudget uses minAvailable as a number: a percentage or maxUnavailable
// needs the Pods' controller, and node Pods have none.
func newBudget(meta metav1.ObjectMeta, selector map[string]string, minAvailable int32) *policyv1.PodDisruptionBudget {
	return &policyv1.PodDisruptionBudget{
		TypeMeta:   metav1.TypeMeta{APIVersion: "policy/v1", Kind: "PodDisruptionBudget"},
		ObjectMeta: meta,
		Spec: policyv1.PodDisruptionBudgetSpec{
			MinAvailable: ptr.To(intstr.FromInt32(minAvailable)),
			Selector:     &metav1.LabelSelector{MatchLabels: selector},
		},
	}
}

// HostingNodePeers are the hosting nodes' InternalIP addresses as
// NetworkPolicy peers, sorted and each once. NetworkPolicies never apply to
// traffic from the node a Pod runs on, but they do to traffic from the other
// nodes: a client on another hosting node, and a NodePort's clients, whom
// kube-proxy forwards from the receiving node's address. On a hosting cluster
// of several nodes, these must reach the API server port as they do on one.
func HostingNodePeers(nodes []corev1.Node) []networkingv1.NetworkPolicyPeer {
	var cidrs []string
	for _, n := range nodes {
		for _, a := range n.Status.Addresses {
			ip := net.ParseIP(a.Address)
			if a.Type != corev1.NodeInternalIP || ip == nil {
				continue
			}
			bits := 128
			if ip.To4() != nil {
				bits = 32
			}
			cidrs = append(cidrs, fmt.Sprintf("%s/%d", ip, bits))
		}
	}
	slices.Sort(cidrs)
	peers := make([]networkingv1.NetworkPolicyPeer, 0, len(cidrs))
	for _, cidr := range slices.Compact(cidrs) {
		peers = append(peers, networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: cidr}})
	}
	return peers
}

// NewNetworkPolicy renders the NetworkPolicy that isolates the cluster's node
// Pods: they accept traffic from node Pods of the same cluster on every port,
// and on the API server port from Pods of the hosting cluster that are not node
// Pods (the management cluster's controllers when it hosts, tools) and from
// apiServerClients (the spec's, and the hosting nodes: HostingNodePeers).
// Other clusters' node Pods reach neither their API server nor their kubelets.
func NewNetworkPolicy(c Workload, apiServerClients []networkingv1.NetworkPolicyPeer) *networkingv1.NetworkPolicy {
	sameCluster := &metav1.LabelSelector{MatchLabels: ClusterLabels(c.Namespace, c.Name)}
	notNodePods := networkingv1.NetworkPolicyPeer{
		NamespaceSelector: &metav1.LabelSelector{},
		PodSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
			Key: infrav1.NodeRoleLabel, Operator: metav1.LabelSelectorOpDoesNotExist,
		}}},
	}
	apiServerPeers := append([]networkingv1.NetworkPolicyPeer{notNodePods}, apiServerClients...)
	return &networkingv1.NetworkPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "NetworkPolicy"},
		ObjectMeta: c.ObjectMeta(NetworkPolicyName(c.Name)),
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: *sameCluster.DeepCopy(),
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
			Ingress: []networkingv1.NetworkPolicyIngressRule{
				{From: []networkingv1.NetworkPolicyPeer{{PodSelector: sameCluster}}},
				{
					From: apiServerPeers,
					Ports: []networkingv1.NetworkPolicyPort{{
						Protocol: ptr.To(corev1.ProtocolTCP),
						Port:     ptr.To(intstr.FromInt32(apiServerPort)),
					}},
				},
			},
		},
	}
}
