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

package v1beta1

// Labels the provider puts on the objects it creates on a hosting cluster. Hosting
// objects are found by these labels and by name, never by UID, so that they survive
// clusterctl move; Cluster API's cluster.x-k8s.io/cluster-name label carries the
// cluster's name.
const (
	// ClusterNamespaceLabel is the management namespace of the KubernetesCluster; with
	// the cluster name it identifies a workload cluster on a shared hosting cluster.
	ClusterNamespaceLabel = "infrastructure.cluster.x-k8s.io/cluster-namespace"

	// MachineNameLabel is the name of the KubernetesMachine a node Pod, its bootstrap
	// Secret and its PersistentVolumeClaims belong to.
	MachineNameLabel = "infrastructure.cluster.x-k8s.io/kubernetes-machine"

	// NodeRoleLabel is "control-plane" or "worker"; the control-plane Service selects
	// the control-plane node Pods by it.
	NodeRoleLabel = "infrastructure.cluster.x-k8s.io/node-role"

	// NodeRoleControlPlane marks control-plane node Pods.
	NodeRoleControlPlane = "control-plane"

	// NodeRoleWorker marks worker node Pods.
	NodeRoleWorker = "worker"

	// OwnerIDLabel, on a hosting object, is the owner ID of the KubernetesCluster it
	// belongs to (the cluster's annotation of the same key): two management clusters
	// may each have a cluster of the same namespace and name, and the labels above
	// cannot tell them apart. Objects created before it existed lack it.
	OwnerIDLabel = "infrastructure.cluster.x-k8s.io/owner-id"

	// ManagedByLabel is the standard managed-by label; its value is ManagedByValue.
	ManagedByLabel = "app.kubernetes.io/managed-by"

	// ManagedByValue names this provider.
	ManagedByValue = "cluster-api-provider-kubernetes"
)

// Annotations the provider puts on the objects it creates on a hosting cluster:
// the owner's full names, which the labels above hold shortened with a hash when
// they are longer than a label value may be. Events of a hosting object reach
// their KubernetesMachine or KubernetesCluster through these.
const (
	// ClusterNameAnnotation is the name of the Cluster API Cluster a hosting object belongs to.
	ClusterNameAnnotation = "infrastructure.cluster.x-k8s.io/cluster-name"

	// MachineNameAnnotation is the name of the KubernetesMachine a node Pod, its
	// bootstrap Secret and its PersistentVolumeClaims belong to.
	MachineNameAnnotation = "infrastructure.cluster.x-k8s.io/kubernetes-machine"

	// OwnerIDAnnotation, on a KubernetesCluster, is a random ID the provider gives
	// it before it creates anything on the hosting cluster; every hosting object
	// of the cluster and its machines carries it as OwnerIDLabel. It travels with
	// the KubernetesCluster under clusterctl move (annotations move, status does
	// not), so the new management cluster still owns the same objects.
	OwnerIDAnnotation = OwnerIDLabel
)
