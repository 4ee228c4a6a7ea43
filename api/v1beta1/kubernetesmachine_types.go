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

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

const (
	// MachineFinalizer lets the provider remove the node Pod and its hosting objects
	// before the KubernetesMachine goes away.
	MachineFinalizer = "infrastructure.cluster.x-k8s.io/kubernetesmachine"

	// LegacyMachineFinalizer is MachineFinalizer as releases before v0.2 named it
	// (see LegacyClusterFinalizer).
	LegacyMachineFinalizer = "kubernetesmachine.infrastructure.cluster.x-k8s.io"

	// ProviderIDPrefix starts every providerID: kubernetes://<hosting-namespace>/<pod-name>.
	ProviderIDPrefix = "kubernetes://"
)

// KubernetesMachineSpec defines the desired state of KubernetesMachine: a narrow,
// typed subset of a Pod. It is immutable, except that providerID may be set once.
type KubernetesMachineSpec struct {
	// providerID is kubernetes://<hosting-namespace>/<pod-name>; the provider sets it and
	// the workload Node carries the same value.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	ProviderID string `json:"providerID,omitempty"`

	// image is the kind-style node image. When empty, the image is derived from the
	// owner Machine's Kubernetes version.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Image string `json:"image,omitempty"`

	// resources are the compute resources of the node container. The Pod always gets
	// requests, so a node is never BestEffort.
	// +optional
	Resources NodeResources `json:"resources,omitempty,omitzero"`

	// nodeSelector constrains the hosting nodes the node Pod may run on.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// tolerations of the node Pod.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`

	// affinity of the node Pod.
	// +optional
	Affinity *corev1.Affinity `json:"affinity,omitempty"`

	// spreading is how the provider spreads node Pods over the hosting cluster
	// when topologySpreadConstraints is empty. Preferred (the default): a
	// cluster's control-plane node Pods prefer different hosting nodes and
	// zones, and its worker node Pods prefer different hosting nodes (soft
	// topology spread constraints; a failure domain still pins the zone).
	// None: the provider adds no constraint.
	// +optional
	// +kubebuilder:validation:Enum=Preferred;None
	Spreading Spreading `json:"spreading,omitempty"`

	// topologySpreadConstraints of the node Pod. When set, they replace the
	// provider's spreading. The node Pod carries the labels
	// cluster.x-k8s.io/cluster-name, infrastructure.cluster.x-k8s.io/cluster-namespace
	// and infrastructure.cluster.x-k8s.io/node-role to select on.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=8
	TopologySpreadConstraints []corev1.TopologySpreadConstraint `json:"topologySpreadConstraints,omitempty"`

	// priorityClassName of the node Pod.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	PriorityClassName string `json:"priorityClassName,omitempty"`

	// runtimeClassName of the node Pod.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	RuntimeClassName string `json:"runtimeClassName,omitempty"`

	// podMetadata holds extra labels and annotations for the node Pod.
	// +optional
	PodMetadata PodMetadata `json:"podMetadata,omitempty,omitzero"`

	// volumeClaimTemplates are PersistentVolumeClaims created for this machine on the
	// hosting cluster and mounted into the node, for example for etcd data.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=8
	VolumeClaimTemplates []VolumeClaimTemplate `json:"volumeClaimTemplates,omitempty"`

	// bootstrapTimeout is how long the bootstrap may run before the machine is
	// reported as failed. Between 1m and 2h; defaults to 15m.
	// +optional
	BootstrapTimeout *metav1.Duration `json:"bootstrapTimeout,omitempty"`
}

// Spreading is how the provider spreads a cluster's node Pods over the hosting cluster.
type Spreading string

const (
	// SpreadingPreferred spreads node Pods with soft topology spread constraints.
	SpreadingPreferred Spreading = "Preferred"
	// SpreadingNone adds no constraint.
	SpreadingNone Spreading = "None"
)

// NodeResources are the compute resources of the node container.
type NodeResources struct {
	// requests are the resources the hosting scheduler reserves for the node.
	// +optional
	Requests corev1.ResourceList `json:"requests,omitempty"`

	// limits cap the resources of the node; each limit must not be below its request.
	// +optional
	Limits corev1.ResourceList `json:"limits,omitempty"`
}

// PodMetadata holds extra metadata for the node Pod. The provider's own labels win.
type PodMetadata struct {
	// labels are added to the node Pod.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`

	// annotations are added to the node Pod.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// VolumeClaimTemplate describes a PersistentVolumeClaim mounted into the node.
type VolumeClaimTemplate struct {
	// name identifies the claim within the machine; the claim on the hosting cluster is
	// named after the node Pod and this name.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`

	// mountPath is the absolute path in the node where the volume is mounted.
	// +required
	// +kubebuilder:validation:MinLength=2
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:Pattern=`^/`
	MountPath string `json:"mountPath"`

	// storageClassName of the claim; the hosting cluster's default class when unset.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	StorageClassName *string `json:"storageClassName,omitempty"`

	// size is the requested storage.
	// +required
	Size resource.Quantity `json:"size"`

	// accessModes of the claim; defaults to ReadWriteOnce.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=4
	AccessModes []corev1.PersistentVolumeAccessMode `json:"accessModes,omitempty"`
}

// KubernetesMachineInitializationStatus reports the initialization steps the
// Cluster API contract looks at.
// +kubebuilder:validation:MinProperties=1
type KubernetesMachineInitializationStatus struct {
	// provisioned is true once the node Pod runs and providerID is set.
	// +optional
	Provisioned *bool `json:"provisioned,omitempty"`
}

// KubernetesMachineStatus defines the observed state of KubernetesMachine.
// +kubebuilder:validation:MinProperties=1
type KubernetesMachineStatus struct {
	// initialization reports the steps the Cluster API contract waits for.
	// +optional
	Initialization KubernetesMachineInitializationStatus `json:"initialization,omitempty,omitzero"`

	// addresses of the node: the Pod's IP and its hostname.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	Addresses []clusterv1.MachineAddress `json:"addresses,omitempty"`

	// failureDomain is the failure domain the node Pod is placed in.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	FailureDomain string `json:"failureDomain,omitempty"`

	// conditions describe the state of the KubernetesMachine.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1alpha1_v1beta1"
// +kubebuilder:resource:path=kubernetesmachines,scope=Namespaced,categories=cluster-api,shortName=km
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']",description="Cluster"
// +kubebuilder:printcolumn:name="Machine",type="string",JSONPath=".metadata.ownerReferences[?(@.kind==\"Machine\")].name",description="Owner Machine"
// +kubebuilder:printcolumn:name="Provisioned",type="boolean",JSONPath=".status.initialization.provisioned",description="The node Pod runs"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].status",description="Ready summary"
// +kubebuilder:printcolumn:name="Reason",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].reason",description="Why the object is (not) ready"
// +kubebuilder:printcolumn:name="ProviderID",type="string",JSONPath=".spec.providerID",description="Provider ID"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"

// KubernetesMachine is a Cluster API machine whose node is a Pod on a hosting cluster.
type KubernetesMachine struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the KubernetesMachine.
	// +optional
	// +kubebuilder:validation:XValidation:rule="!has(oldSelf.providerID) || (has(self.providerID) && self.providerID == oldSelf.providerID)",message="providerID can be set once and never changed"
	Spec KubernetesMachineSpec `json:"spec,omitempty,omitzero"`

	// status is the observed state of the KubernetesMachine.
	// +optional
	Status KubernetesMachineStatus `json:"status,omitempty,omitzero"`
}

// +kubebuilder:object:root=true

// KubernetesMachineList contains a list of KubernetesMachine.
type KubernetesMachineList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []KubernetesMachine `json:"items"`
}

// GetConditions returns the conditions of the KubernetesMachine.
func (m *KubernetesMachine) GetConditions() []metav1.Condition {
	return m.Status.Conditions
}

// SetConditions sets the conditions of the KubernetesMachine.
func (m *KubernetesMachine) SetConditions(conditions []metav1.Condition) {
	m.Status.Conditions = conditions
}

func init() {
	objectTypes = append(objectTypes, &KubernetesMachine{}, &KubernetesMachineList{})
}
