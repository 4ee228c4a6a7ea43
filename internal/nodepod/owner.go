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
	"maps"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
)

// Owner is who a hosting object belongs to: a workload cluster (its management
// namespace and Cluster name) and, for a node Pod, its bootstrap Secret and its
// claims, the KubernetesMachine. Many owners may share one hosting namespace, so
// every write and delete of a hosting object checks Owns first: the provider
// never adopts, updates or deletes an object whose labels name another owner.
type Owner struct {
	Namespace, Cluster string
	// Machine is empty for the cluster's own objects (Service, budgets, NetworkPolicy).
	Machine string
	// ID is the KubernetesCluster's owner ID (infrav1.OwnerIDAnnotation): it tells
	// apart clusters of the same namespace and name on two management clusters.
	ID string
}

// Owns reports whether obj is one of the owner's hosting objects: the provider
// manages it and its labels name this owner. Labels hold names shortened with a
// hash when they are too long for a label value, so they are compared in that
// form. Objects of earlier releases carry the same labels but no owner ID, and
// are owned by their names alone.
func (o Owner) Owns(obj metav1.Object) bool {
	labels := obj.GetLabels()
	_, hasMachine := labels[infrav1.MachineNameLabel]
	if id, ok := labels[infrav1.OwnerIDLabel]; ok && id != o.ID {
		return false
	}
	return labels[infrav1.ManagedByLabel] == infrav1.ManagedByValue &&
		labels[infrav1.ClusterNamespaceLabel] == labelValue(o.Namespace) &&
		labels[clusterv1.ClusterNameLabel] == labelValue(o.Cluster) &&
		hasMachine == (o.Machine != "") &&
		labels[infrav1.MachineNameLabel] == labelValue(o.Machine)
}

// OwnerOf reads who a hosting object belongs to, with full names: from its
// owner annotations, or, on objects of earlier releases, which have none, from
// its labels (whose names were short enough to be label values, or the object
// never got this far).
func OwnerOf(obj metav1.Object) Owner {
	annotations, labels := obj.GetAnnotations(), obj.GetLabels()
	pick := func(annotation, label string) string {
		if value, ok := annotations[annotation]; ok {
			return value
		}
		return labels[label]
	}
	return Owner{
		Namespace: labels[infrav1.ClusterNamespaceLabel], // a namespace name is always a valid label value
		Cluster:   pick(infrav1.ClusterNameAnnotation, clusterv1.ClusterNameLabel),
		Machine:   pick(infrav1.MachineNameAnnotation, infrav1.MachineNameLabel),
	}
}

// withOwnerID adds the owner ID label to labels, when the owner has one.
func (o Owner) withOwnerID(labels map[string]string) map[string]string {
	if o.ID != "" {
		labels[infrav1.OwnerIDLabel] = o.ID
	}
	return labels
}

// annotations are the owner's full names, which labels may hold only shortened.
func (o Owner) annotations() map[string]string {
	annotations := map[string]string{infrav1.ClusterNameAnnotation: o.Cluster}
	if o.Machine != "" {
		annotations[infrav1.MachineNameAnnotation] = o.Machine
	}
	return annotations
}

// withOwnerAnnotations overlays user annotations with the owner's.
func withOwnerAnnotations(user map[string]string, o Owner) map[string]string {
	annotations := maps.Clone(user)
	if annotations == nil {
		annotations = map[string]string{}
	}
	maps.Copy(annotations, o.annotations())
	return annotations
}
