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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// ServiceType is the type of the control-plane Service.
// +kubebuilder:validation:Enum=ClusterIP;NodePort;LoadBalancer
type ServiceType string

// FailureDomainSpec is the v1alpha1 shape of a failure domain, keyed by name in a map.
type FailureDomainSpec struct {
	// controlPlane tells whether control-plane machines may be placed in the failure domain.
	// +optional
	ControlPlane bool `json:"controlPlane,omitempty"`

	// attributes are free-form attributes of the failure domain.
	// +optional
	Attributes map[string]string `json:"attributes,omitempty"`
}

// FailureDomains maps failure domain names to their spec.
type FailureDomains map[string]FailureDomainSpec

// KubernetesClusterSpec defines the desired state of KubernetesCluster.
type KubernetesClusterSpec struct {
	// controlPlaneEndpoint is the endpoint of the workload cluster's API server.
	// +optional
	ControlPlaneEndpoint clusterv1.APIEndpoint `json:"controlPlaneEndpoint,omitempty,omitzero"`

	// controlPlaneServiceType is the type of the control-plane Service.
	// +optional
	ControlPlaneServiceType ServiceType `json:"controlPlaneServiceType,omitempty"`

	// failureDomains machines may be placed in.
	// +optional
	FailureDomains FailureDomains `json:"failureDomains,omitempty"`
}

// KubernetesClusterStatus defines the observed state of KubernetesCluster.
type KubernetesClusterStatus struct {
	// ready is true once the control-plane endpoint is known.
	// +optional
	Ready bool `json:"ready,omitempty"`

	// failureDomains machines of this cluster can be placed in.
	// +optional
	FailureDomains FailureDomains `json:"failureDomains,omitempty"`

	// failureReason is a terminal problem, in a form machines can read.
	// +optional
	FailureReason *string `json:"failureReason,omitempty"`

	// failureMessage is a terminal problem, in a form people can read.
	// +optional
	FailureMessage *string `json:"failureMessage,omitempty"`

	// conditions describe the state of the KubernetesCluster.
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=kubernetesclusters,scope=Namespaced,categories=cluster-api,shortName=kc
// +kubebuilder:deprecatedversion:warning="infrastructure.cluster.x-k8s.io/v1alpha1 is deprecated; use infrastructure.cluster.x-k8s.io/v1beta1"
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']",description="Cluster"
// +kubebuilder:printcolumn:name="Ready",type="boolean",JSONPath=".status.ready",description="The control-plane endpoint is known"
// +kubebuilder:printcolumn:name="Endpoint",type="string",JSONPath=".spec.controlPlaneEndpoint.host",description="Control-plane endpoint host"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"

// KubernetesCluster is the infrastructure of a Cluster API cluster whose nodes are Pods.
type KubernetesCluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   KubernetesClusterSpec   `json:"spec,omitempty"`
	Status KubernetesClusterStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// KubernetesClusterList contains a list of KubernetesCluster.
type KubernetesClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []KubernetesCluster `json:"items"`
}

// KubernetesClusterTemplateSpec defines the desired state of KubernetesClusterTemplate.
type KubernetesClusterTemplateSpec struct {
	Template KubernetesClusterTemplateResource `json:"template"`
}

// KubernetesClusterTemplateResource describes the KubernetesCluster created from a template.
type KubernetesClusterTemplateResource struct {
	// +optional
	ObjectMeta clusterv1.ObjectMeta `json:"metadata,omitempty,omitzero"`
	// +optional
	Spec KubernetesClusterSpec `json:"spec,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=kubernetesclustertemplates,scope=Namespaced,categories=cluster-api,shortName=kct
// +kubebuilder:deprecatedversion:warning="infrastructure.cluster.x-k8s.io/v1alpha1 is deprecated; use infrastructure.cluster.x-k8s.io/v1beta1"

// KubernetesClusterTemplate is a template for KubernetesClusters.
type KubernetesClusterTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec KubernetesClusterTemplateSpec `json:"spec,omitempty"`
}

// +kubebuilder:object:root=true

// KubernetesClusterTemplateList contains a list of KubernetesClusterTemplate.
type KubernetesClusterTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []KubernetesClusterTemplate `json:"items"`
}
