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

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
)

// expectNoServicesOrClaims checks that the cluster's control-plane Service,
// its disruption budgets, its NetworkPolicy and its machines'
// PersistentVolumeClaims are gone from the hosting cluster.
func expectNoServicesOrClaims(ctx context.Context, g Gomega, w *workloadCluster) {
	g.Expect(hostingList(ctx, g, w, &corev1.ServiceList{}).Items).To(BeEmpty(), "Services left on the hosting cluster")
	g.Expect(hostingList(ctx, g, w, &corev1.PersistentVolumeClaimList{}).Items).To(BeEmpty(),
		"PersistentVolumeClaims left on the hosting cluster")
	g.Expect(hostingList(ctx, g, w, &policyv1.PodDisruptionBudgetList{}).Items).To(BeEmpty(), "PodDisruptionBudgets left on the hosting cluster")
	g.Expect(hostingList(ctx, g, w, &networkingv1.NetworkPolicyList{}).Items).To(BeEmpty(), "NetworkPolicies left on the hosting cluster")
}

// dumpDiagnostics logs what explains a failure: the Cluster API objects with
// their conditions, the node Pods with their log tails, and the logs of the
// provider's and Cluster API's managers.
func dumpDiagnostics(ctx context.Context, t *testing.T, w *workloadCluster) {
	var b strings.Builder
	machines := &clusterv1.MachineList{}
	if err := env.client.List(ctx, machines, client.InNamespace(w.namespace)); err == nil {
		for _, m := range machines.Items {
			fmt.Fprintf(&b, "Machine %s phase=%s%s\n", m.Name, m.Status.Phase, conditionSummary(m.Status.Conditions))
		}
	}
	kms := &infrav1.KubernetesMachineList{}
	if err := env.client.List(ctx, kms, client.InNamespace(w.namespace)); err == nil {
		for _, m := range kms.Items {
			fmt.Fprintf(&b, "KubernetesMachine %s%s\n", m.Name, conditionSummary(m.Status.Conditions))
		}
	}
	pods := &corev1.PodList{}
	if err := env.client.List(ctx, pods, client.InNamespace(w.namespace)); err == nil {
		for _, p := range pods.Items {
			fmt.Fprintf(&b, "--- Pod %s phase=%s\n%s\n", p.Name, p.Status.Phase, podLogTail(ctx, p.Namespace, p.Name, 40))
		}
	}
	for _, ns := range []string{"capk-system", "capi-system", "capi-kubeadm-bootstrap-system", "capi-kubeadm-control-plane-system"} {
		list, err := env.clients.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			continue
		}
		for _, p := range list.Items {
			fmt.Fprintf(&b, "--- %s/%s phase=%s\n%s\n", ns, p.Name, p.Status.Phase, podLogTail(ctx, ns, p.Name, 30))
		}
	}
	t.Log("diagnostics:\n" + b.String())
}

func podLogTail(ctx context.Context, namespace, name string, lines int64) string {
	raw, err := env.clients.CoreV1().Pods(namespace).GetLogs(name, &corev1.PodLogOptions{TailLines: ptr.To(lines)}).DoRaw(ctx)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	return string(raw)
}
