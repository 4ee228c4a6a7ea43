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

package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// KubernetesMachineSpec defines the desired state of KubernetesMachine.
type KubernetesMachineSpec struct {
	// providerID is kubernetes://<hosting-namespace>/<pod-name>.
	// +optional
	ProviderID *string `json:"providerID,omitempty"`

	// image is the kind-style node image.
	// +optional
	Image string `json:"image,omitempty"`

	// resources of the node container.
	// +optional
	Resources NodeResources `json:"resources,omitempty"`

	// nodeSelector of the node Pod.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// tolerations of the node Pod.
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`

	// affinity of the node Pod.
	// +optional
	Affinity *corev1.Affinity `json:"affinity,omitempty"`

	// bootstrapTimeout is how long the bootstrap may run.
	// +optional
	BootstrapTimeout *metav1.Duration `json:"bootstrapTimeout,omitempty"`
}

// NodeResources are the compute resources of the node container.
type NodeResources struct {
	// +optional
	Requests corev1.ResourceList `json:"requests,omitempty"`
	// +optional
	Limits corev1.ResourceList `json:"limits,omitempty"`
}

// KubernetesMachineStatus defines the observed state of KubernetesMachine.
type KubernetesMachineStatus struct {
	// ready is true once the node Pod runs.
	// +optional
	Ready bool `json:"ready,omitempty"`

	// addresses of the node.
	// +optional
	Addresses []clusterv1.MachineAddress `json:"addresses,omitempty"`

	// failureReason is a terminal problem, in a form machines can read.
	// +optional
	FailureReason *string `json:"failureReason,omitempty"`

	// failureMessage is a terminal problem, in a form people can read.
	// +optional
	FailureMessage *string `json:"failureMessage,omitempty"`

	// conditions describe the state of the KubernetesMachine.
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=kubernetesmachines,scope=Namespaced,categories=cluster-api,shortName=km
// +kubebuilder:deprecatedversion:warning="infrastructure.cluster.x-k8s.io/v1alpha1 is deprecated; use infrastructure.cluster.x-k8s.io/v1beta1"
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']",description="Cluster"
// +kubebuilder:printcolumn:name="Ready",type="boolean",JSONPath=".status.ready",description="The node Pod runs"
// +kubebuilder:printcolumn:name="ProviderID",type="string",JSONPath=".spec.providerID",description="Provider ID"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"

// KubernetesMachine is a Cluster API machine whose node is a Pod.
type KubernetesMachine struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   KubernetesMachineSpec   `json:"spec,omitempty"`
	Status KubernetesMachineStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// KubernetesMachineList contains a list of KubernetesMachine.
type KubernetesMachineList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []KubernetesMachine `json:"items"`
}

// KubernetesMachineTemplateSpec defines the desired state of KubernetesMachineTemplate.
type KubernetesMachineTemplateSpec struct {
	Template KubernetesMachineTemplateResource `json:"template"`
}

// KubernetesMachineTemplateResource describes the KubernetesMachine created from a template.
type KubernetesMachineTemplateResource struct {
	// +optional
	ObjectMeta clusterv1.ObjectMeta `json:"metadata,omitempty,omitzero"`
	// +optional
	Spec KubernetesMachineSpec `json:"spec,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=kubernetesmachinetemplates,scope=Namespaced,categories=cluster-api,shortName=kmt
// +kubebuilder:deprecatedversion:warning="infrastructure.cluster.x-k8s.io/v1alpha1 is deprecated; use infrastructure.cluster.x-k8s.io/v1beta1"

// KubernetesMachineTemplate is a template for KubernetesMachines.
type KubernetesMachineTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec KubernetesMachineTemplateSpec `json:"spec,omitempty"`
}

// +kubebuilder:object:root=true

// KubernetesMachineTemplateList contains a list of KubernetesMachineTemplate.
type KubernetesMachineTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []KubernetesMachineTemplate `json:"items"`
}
