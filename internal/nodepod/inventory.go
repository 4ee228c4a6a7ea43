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
	"reflect"
	"slices"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Scope says which provider object a hosting object belongs to.
type Scope int

const (
	// MachineScoped objects belong to one KubernetesMachine: its node Pod,
	// bootstrap Secret and claims.
	MachineScoped Scope = iota
	// ClusterScoped objects belong to a KubernetesCluster: its control-plane
	// Service, disruption budgets and network policies.
	ClusterScoped
)

// Kind is one kind of object the provider creates on hosting clusters.
type Kind struct {
	// Name is the kind's name, as messages give it.
	Name  string
	Scope Scope
	// New returns an empty object of the kind, NewList an empty list.
	New     func() client.Object
	NewList func() client.ObjectList
}

// Kinds is the inventory of what the provider creates on hosting clusters, the
// one list that the hosting caches select, the reconcilers watch and the
// leftover checks search.
var Kinds = []Kind{
	{Name: "Pod", Scope: MachineScoped, New: func() client.Object { return &corev1.Pod{} }, NewList: func() client.ObjectList { return &corev1.PodList{} }},
	{Name: "Secret", Scope: MachineScoped, New: func() client.Object { return &corev1.Secret{} }, NewList: func() client.ObjectList { return &corev1.SecretList{} }},
	{Name: "PersistentVolumeClaim", Scope: MachineScoped, New: func() client.Object { return &corev1.PersistentVolumeClaim{} }, NewList: func() client.ObjectList { return &corev1.PersistentVolumeClaimList{} }},
	{Name: "Service", Scope: ClusterScoped, New: func() client.Object { return &corev1.Service{} }, NewList: func() client.ObjectList { return &corev1.ServiceList{} }},
	{Name: "PodDisruptionBudget", Scope: ClusterScoped, New: func() client.Object { return &policyv1.PodDisruptionBudget{} }, NewList: func() client.ObjectList { return &policyv1.PodDisruptionBudgetList{} }},
	{Name: "NetworkPolicy", Scope: ClusterScoped, New: func() client.Object { return &networkingv1.NetworkPolicy{} }, NewList: func() client.ObjectList { return &networkingv1.NetworkPolicyList{} }},
}

// Objects are empty objects of every kind, or of the kinds of the given scope.
func Objects(scopes ...Scope) []client.Object {
	var objects []client.Object
	for _, kind := range Kinds {
		if len(scopes) == 0 || slices.Contains(scopes, kind.Scope) {
			objects = append(objects, kind.New())
		}
	}
	return objects
}

// KindName is obj's kind as messages give it: the inventory's name for a
// hosting kind, the Go type otherwise.
func KindName(obj client.Object) string {
	for _, kind := range Kinds {
		if reflect.TypeOf(kind.New()) == reflect.TypeOf(obj) {
			return kind.Name
		}
	}
	return fmt.Sprintf("%T", obj)
}

// NodeObjects are the machine's node Pod and bootstrap Secret, by namespace
// and name only: what a Get or a Delete needs.
func (m Node) NodeObjects() []client.Object {
	return []client.Object{
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: m.HostingNamespace, Name: m.podName()}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: m.HostingNamespace, Name: BootstrapSecretName(m.podName())}},
	}
}

// Objects are every hosting object of the machine (NodeObjects and a claim per
// volume claim template), by namespace and name only.
func (m Node) Objects() []client.Object {
	objects := m.NodeObjects()
	for _, template := range m.Spec.VolumeClaimTemplates {
		objects = append(objects, &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: m.HostingNamespace, Name: ClaimName(m.podName(), template.Name)}})
	}
	return objects
}

// Objects are the cluster's own hosting objects (its control-plane Service,
// both disruption budgets and its NetworkPolicy), with the metadata that
// deleting them by owner needs.
func (c Workload) Objects() []client.Object {
	return []client.Object{
		&corev1.Service{ObjectMeta: c.ObjectMeta(ServiceName(c.Name))},
		&policyv1.PodDisruptionBudget{ObjectMeta: c.ObjectMeta(ControlPlaneBudgetName(c.Name))},
		&policyv1.PodDisruptionBudget{ObjectMeta: c.ObjectMeta(WorkersBudgetName(c.Name))},
		&networkingv1.NetworkPolicy{ObjectMeta: c.ObjectMeta(NetworkPolicyName(c.Name))},
	}
}
