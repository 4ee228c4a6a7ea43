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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// KubernetesClusterTemplateSpec defines the desired state of KubernetesClusterTemplate.
type KubernetesClusterTemplateSpec struct {
	// template is the KubernetesCluster created from this template.
	// +required
	Template KubernetesClusterTemplateResource `json:"template"`
}

// KubernetesClusterTemplateResource describes the KubernetesCluster created from a template.
type KubernetesClusterTemplateResource struct {
	// metadata is added to the KubernetesCluster created from the template.
	// +optional
	ObjectMeta clusterv1.ObjectMeta `json:"metadata,omitempty,omitzero"`

	// spec is the spec of the KubernetesCluster created from the template.
	// +optional
	Spec KubernetesClusterSpec `json:"spec,omitempty,omitzero"`
}

// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1alpha1_v1beta1"
// +kubebuilder:resource:path=kubernetesclustertemplates,scope=Namespaced,categories=cluster-api,shortName=kct
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"

// KubernetesClusterTemplate is a template for KubernetesClusters, used by ClusterClass.
type KubernetesClusterTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the template.
	// +required
	Spec KubernetesClusterTemplateSpec `json:"spec"`
}

// +kubebuilder:object:root=true

// KubernetesClusterTemplateList contains a list of KubernetesClusterTemplate.
type KubernetesClusterTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []KubernetesClusterTemplate `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &KubernetesClusterTemplate{}, &KubernetesClusterTemplateList{})
}
