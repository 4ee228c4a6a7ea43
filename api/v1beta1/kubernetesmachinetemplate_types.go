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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// KubernetesMachineTemplateSpec defines the desired state of KubernetesMachineTemplate.
type KubernetesMachineTemplateSpec struct {
	// template is the KubernetesMachine created from this template.
	// +required
	Template KubernetesMachineTemplateResource `json:"template"`
}

// KubernetesMachineTemplateResource describes the KubernetesMachine created from a template.
type KubernetesMachineTemplateResource struct {
	// metadata is added to the KubernetesMachine created from the template.
	// +optional
	ObjectMeta clusterv1.ObjectMeta `json:"metadata,omitempty,omitzero"`

	// spec is the spec of the KubernetesMachine created from the template.
	// +optional
	Spec KubernetesMachineSpec `json:"spec,omitempty,omitzero"`
}

// Architecture is the CPU architecture of a node.
// +kubebuilder:validation:Enum=amd64;arm64;s390x;ppc64le
type Architecture string

// NodeInfo tells the cluster autoscaler the architecture and operating system of the
// nodes created from a template.
// +kubebuilder:validation:MinProperties=1
type NodeInfo struct {
	// architecture of the node.
	// +optional
	Architecture Architecture `json:"architecture,omitempty"`

	// operatingSystem of the node, for example linux.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	OperatingSystem string `json:"operatingSystem,omitempty"`
}

// KubernetesMachineTemplateStatus tells the cluster autoscaler what a node created
// from the template offers, so it can scale from zero.
// +kubebuilder:validation:MinProperties=1
type KubernetesMachineTemplateStatus struct {
	// capacity is the resource capacity of a node created from the template.
	// +optional
	Capacity corev1.ResourceList `json:"capacity,omitempty"`

	// nodeInfo is the architecture and operating system of the node.
	// +optional
	NodeInfo NodeInfo `json:"nodeInfo,omitempty,omitzero"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1alpha1_v1beta1"
// +kubebuilder:resource:path=kubernetesmachinetemplates,scope=Namespaced,categories=cluster-api,shortName=kmt
// +kubebuilder:printcolumn:name="Image",type="string",JSONPath=".spec.template.spec.image",description="Node image"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"

// KubernetesMachineTemplate is a template for KubernetesMachines, used by
// MachineDeployments, control planes and ClusterClass.
type KubernetesMachineTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the template.
	// +required
	Spec KubernetesMachineTemplateSpec `json:"spec"`

	// status tells the cluster autoscaler what a node from the template offers.
	// +optional
	Status KubernetesMachineTemplateStatus `json:"status,omitempty,omitzero"`
}

// +kubebuilder:object:root=true

// KubernetesMachineTemplateList contains a list of KubernetesMachineTemplate.
type KubernetesMachineTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []KubernetesMachineTemplate `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &KubernetesMachineTemplate{}, &KubernetesMachineTemplateList{})
}
