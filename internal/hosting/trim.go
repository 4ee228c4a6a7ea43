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

package hosting

import (
	corev1 "k8s.io/api/core/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
)

// The caches keep of the objects they hold only what the provider reads from
// them: at a thousand machines, whole node Pods and bootstrap Secrets were
// most of the manager's memory. A reader that needs more reads live.

// trimmerOf is the cache transform of a kind the provider creates on hosting
// clusters: nil (managedFields stripped, nothing else) for the kinds it
// compares with what it wants (Services, budgets, policies, claims).
func trimmerOf(obj client.Object) toolscache.TransformFunc {
	switch obj.(type) {
	case *corev1.Pod:
		return TrimPod
	case *corev1.Secret:
		return TrimSecret
	}
	return nil
}

// trimDefault is the transform of every other kind: Machines are trimmed
// (TrimMachine), the rest lose their managedFields.
func trimDefault(obj any) (any, error) {
	if _, ok := obj.(*clusterv1.Machine); ok {
		return TrimMachine(obj)
	}
	return stripManagedFields(obj)
}

var stripManagedFields = cache.TransformStripManagedFields()

// TrimNode keeps of a hosting Node only what the provider reads: its name, its
// zone (the failure domains) and its addresses (a NodePort endpoint). Cached
// whole, the Nodes of a large hosting cluster (images, conditions, capacity)
// would cost the manager more memory than its own objects.
func TrimNode(obj any) (any, error) {
	node, ok := obj.(*corev1.Node)
	if !ok {
		return obj, nil
	}
	trimmed := &corev1.Node{}
	trimmed.Name, trimmed.UID, trimmed.ResourceVersion = node.Name, node.UID, node.ResourceVersion
	if zone, ok := node.Labels[corev1.LabelTopologyZone]; ok {
		trimmed.Labels = map[string]string{corev1.LabelTopologyZone: zone}
	}
	trimmed.Status.Addresses = node.Status.Addresses
	return trimmed, nil
}

// TrimPod keeps of a node Pod its metadata and its status: the provider
// creates node Pods and never updates them, and reads back only who owns one,
// whether it is being deleted, and how it runs or ended. The spec (the
// container, its volumes, affinity and tolerations) is what most of a Pod
// weighs.
func TrimPod(obj any) (any, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	trimmed := &corev1.Pod{ObjectMeta: pod.ObjectMeta, Status: pod.Status}
	trimmed.ManagedFields = nil
	return trimmed, nil
}

// TrimSecret drops the data of the provider's own Secrets (the node bootstrap
// Secrets, which only the node Pod reads): the provider looks at them only for
// who owns them. Other Secrets (Cluster API's bootstrap data, hosting
// kubeconfigs) keep their data, which the provider reads.
func TrimSecret(obj any) (any, error) {
	secret, ok := obj.(*corev1.Secret)
	if !ok {
		return obj, nil
	}
	secret.ManagedFields = nil
	if secret.Labels[infrav1.ManagedByLabel] == infrav1.ManagedByValue {
		secret.Data, secret.StringData = nil, nil
	}
	return secret, nil
}

// TrimMachine keeps of a Cluster API Machine its metadata, its spec and the
// Node it names: the provider reads nothing else of a Machine's status, and
// never writes Machines. Its conditions (v1beta2 and the deprecated v1beta1
// ones) are most of a Machine's weight.
func TrimMachine(obj any) (any, error) {
	machine, ok := obj.(*clusterv1.Machine)
	if !ok {
		return obj, nil
	}
	trimmed := &clusterv1.Machine{ObjectMeta: machine.ObjectMeta, Spec: machine.Spec}
	trimmed.ManagedFields = nil
	trimmed.Status.NodeRef = machine.Status.NodeRef
	return trimmed, nil
}
