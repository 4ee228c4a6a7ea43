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

// What wakes a KubernetesCluster: map functions, index and predicates of its watches.

package controller

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/internal/hosting"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/internal/nodepod"
)

// hostingSecretIndex indexes KubernetesClusters by the kubeconfig Secret they use.
const hostingSecretIndex = "spec.hostingCluster.secretName"

func indexKubernetesClusterByHostingSecret(ctx context.Context, mgr ctrl.Manager) error {
	return mgr.GetFieldIndexer().IndexField(ctx, &infrav1.KubernetesCluster{}, hostingSecretIndex, func(obj client.Object) []string {
		kc := obj.(*infrav1.KubernetesCluster)
		if kc.Spec.HostingCluster == nil {
			return nil
		}
		return []string{kc.Spec.HostingCluster.SecretName}
	})
}

// hostingObjectToKubernetesCluster maps a cluster's hosting object (the
// control-plane Service, a PodDisruptionBudget, the NetworkPolicy) to its
// KubernetesCluster through the Cluster it belongs to (nodepod.OwnerOf: full
// names, which labels may hold only shortened).
func (r *KubernetesClusterReconciler) hostingObjectToKubernetesCluster(ctx context.Context, obj client.Object) []reconcile.Request {
	owner := nodepod.OwnerOf(obj)
	namespace, name := owner.Namespace, owner.Cluster
	if namespace == "" || name == "" {
		return nil
	}
	cluster := &clusterv1.Cluster{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, cluster); err != nil {
		return nil
	}
	ref := cluster.Spec.InfrastructureRef
	if ref.Kind != "KubernetesCluster" || ref.APIGroup != infrav1.GroupVersion.Group {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: namespace, Name: ref.Name}}}
}

// machineToKubernetesCluster wakes a deleting KubernetesCluster when one of its
// machines changes or goes away; it works when the Cluster is already gone.
// Clusters that are not deleting are left alone: machine status changes are
// frequent and tell them nothing.
func (r *KubernetesClusterReconciler) machineToKubernetesCluster(ctx context.Context, obj client.Object) []reconcile.Request {
	name := obj.GetLabels()[clusterv1.ClusterNameLabel]
	if name == "" {
		return nil
	}
	return requestsForClusterLabel(ctx, r.Client, &infrav1.KubernetesClusterList{}, obj.GetNamespace(), name, isDeleting)
}

// machineToKubernetesClusterByCount wakes the KubernetesCluster of a Machine
// that came or started to go, so its disruption budgets follow the count.
func (r *KubernetesClusterReconciler) machineToKubernetesClusterByCount(ctx context.Context, obj client.Object) []reconcile.Request {
	name := obj.GetLabels()[clusterv1.ClusterNameLabel]
	if name == "" {
		return nil
	}
	return requestsForClusterLabel(ctx, r.Client, &infrav1.KubernetesClusterList{}, obj.GetNamespace(), name)
}

// machineCountChanged passes the Machine events that change a cluster's count
// of machines by role: creation, deletion, the start of a deletion, and a
// change of the control-plane label. Status updates, the bulk of Machine
// events, pass nothing.
func machineCountChanged() predicate.Funcs {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			_, wasControlPlane := e.ObjectOld.GetLabels()[clusterv1.MachineControlPlaneLabel]
			_, isControlPlane := e.ObjectNew.GetLabels()[clusterv1.MachineControlPlaneLabel]
			return isDeleting(e.ObjectOld) != isDeleting(e.ObjectNew) || wasControlPlane != isControlPlane
		},
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}

func isDeleting(obj client.Object) bool { return !obj.GetDeletionTimestamp().IsZero() }

// requestsForClusterLabel lists the objects of a namespace that carry Cluster
// API's cluster-name label for clusterName and returns a request for each.
// Only objects every filter accepts get a request.
func requestsForClusterLabel(ctx context.Context, c client.Client, list client.ObjectList, namespace, clusterName string, filters ...func(client.Object) bool) []reconcile.Request {
	if err := c.List(ctx, list, client.InNamespace(namespace), client.MatchingLabels{clusterv1.ClusterNameLabel: clusterName}); err != nil {
		return nil
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil
	}
	requests := make([]reconcile.Request, 0, len(items))
	for _, item := range items {
		obj, ok := item.(client.Object)
		if ok && accepted(obj, filters) {
			requests = append(requests, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(obj)})
		}
	}
	return requests
}

// kubeconfigToKubernetesClusters wakes the clusters that use a hosting kubeconfig
// Secret, so a changed kubeconfig rebuilds the hosting client.
func (r *KubernetesClusterReconciler) kubeconfigToKubernetesClusters(ctx context.Context, obj client.Object) []reconcile.Request {
	if _, ok := obj.GetLabels()[hosting.KubeconfigLabel]; !ok {
		return nil
	}
	users := &infrav1.KubernetesClusterList{}
	if err := r.Client.List(ctx, users, client.InNamespace(obj.GetNamespace()), client.MatchingFields{hostingSecretIndex: obj.GetName()}); err != nil {
		return nil
	}
	requests := make([]reconcile.Request, 0, len(users.Items))
	for _, user := range users.Items {
		requests = append(requests, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&user)})
	}
	return requests
}

func accepted(obj client.Object, filters []func(client.Object) bool) bool {
	for _, filter := range filters {
		if !filter(obj) {
			return false
		}
	}
	return true
}

// nodeToLocallyHostedClusters wakes every KubernetesCluster hosted on the
// management cluster when one of its Nodes comes, goes, or changes its zone or
// addresses (nodeTopologyChanged): the failure domains come from the zones,
// and the NetworkPolicy admits the nodes' addresses. Clusters on a remote
// hosting cluster see its Nodes at their next reconcile.
func (r *KubernetesClusterReconciler) nodeToLocallyHostedClusters(ctx context.Context, _ client.Object) []reconcile.Request {
	list := &infrav1.KubernetesClusterList{}
	if err := r.Client.List(ctx, list); err != nil {
		return nil
	}
	var requests []reconcile.Request
	for i := range list.Items {
		if list.Items[i].Spec.HostingCluster == nil {
			requests = append(requests, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
	}
	return requests
}

// nodeTopologyChanged passes Node creations and deletions, and the updates
// that change what the provider keeps of a Node (hosting.TrimNode): its zone
// and its addresses. Status heartbeats pass nothing.
func nodeTopologyChanged() predicate.Funcs {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			old, okOld := e.ObjectOld.(*corev1.Node)
			updated, okNew := e.ObjectNew.(*corev1.Node)
			if !okOld || !okNew {
				return false
			}
			return old.Labels[corev1.LabelTopologyZone] != updated.Labels[corev1.LabelTopologyZone] ||
				!equality.Semantic.DeepEqual(old.Status.Addresses, updated.Status.Addresses)
		},
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}
