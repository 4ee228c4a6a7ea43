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
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

const (
	// ClusterFinalizer lets the provider remove the hosting objects of a KubernetesCluster
	// before the object goes away.
	ClusterFinalizer = "infrastructure.cluster.x-k8s.io/kubernetescluster"

	// LegacyClusterFinalizer is ClusterFinalizer as releases before v0.2 named it,
	// without the path the API server asks for: the provider puts
	// ClusterFinalizer in its place, and removes it from an object deleted
	// before that.
	LegacyClusterFinalizer = "kubernetescluster.infrastructure.cluster.x-k8s.io"

	// DefaultKubeconfigKey is the key of the hosting kubeconfig Secret that holds the
	// kubeconfig, the same key Cluster API uses for its own kubeconfig Secrets.
	DefaultKubeconfigKey = "value"
)

// ServiceType is the type of the Service that exposes the workload cluster's API server
// on the hosting cluster.
// +kubebuilder:validation:Enum=ClusterIP;NodePort;LoadBalancer
type ServiceType string

const (
	// ServiceTypeClusterIP exposes the API server on a cluster IP of the hosting cluster.
	ServiceTypeClusterIP ServiceType = "ClusterIP"
	// ServiceTypeNodePort exposes the API server on a port of every hosting node.
	ServiceTypeNodePort ServiceType = "NodePort"
	// ServiceTypeLoadBalancer exposes the API server through the hosting cluster's load balancer.
	ServiceTypeLoadBalancer ServiceType = "LoadBalancer"
)

// KubernetesClusterSpec defines the desired state of KubernetesCluster.
type KubernetesClusterSpec struct {
	// controlPlaneEndpoint is the endpoint of the workload cluster's API server. The
	// provider fills it from the control-plane Service unless it is set; once set it
	// cannot change.
	// +optional
	ControlPlaneEndpoint clusterv1.APIEndpoint `json:"controlPlaneEndpoint,omitempty,omitzero"`

	// hostingCluster selects the cluster that runs the node Pods. When unset, the node
	// Pods run on the management cluster, in the namespace of this object. It cannot be
	// added, removed or changed once the object exists.
	// +optional
	HostingCluster *HostingClusterReference `json:"hostingCluster,omitempty"`

	// controlPlaneService configures the Service on the hosting cluster that selects the
	// control-plane node Pods and is the workload cluster's control-plane endpoint.
	// +optional
	ControlPlaneService ControlPlaneService `json:"controlPlaneService,omitempty,omitzero"`

	// failureDomains lists the failure domains machines may be placed in. When empty,
	// the provider discovers them from the zone labels of the hosting cluster's nodes.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=100
	FailureDomains []clusterv1.FailureDomain `json:"failureDomains,omitempty"`

	// disruptionBudgets are the PodDisruptionBudgets the provider keeps on the
	// hosting cluster for the cluster's node Pods, so that draining hosting
	// nodes never costs the workload cluster its etcd quorum.
	// +optional
	DisruptionBudgets DisruptionBudgets `json:"disruptionBudgets,omitempty,omitzero"`

	// networkIsolation is the NetworkPolicy the provider keeps on the hosting
	// cluster so that other workload clusters' node Pods cannot reach this
	// cluster's node Pods.
	// +optional
	NetworkIsolation NetworkIsolation `json:"networkIsolation,omitempty,omitzero"`
}

// ControlPlaneBudget is the disruption budget policy of the control-plane node Pods.
type ControlPlaneBudget string

const (
	// ControlPlaneBudgetQuorum keeps a majority of the control-plane node Pods available.
	ControlPlaneBudgetQuorum ControlPlaneBudget = "Quorum"
	// ControlPlaneBudgetNone keeps no budget for the control-plane node Pods.
	ControlPlaneBudgetNone ControlPlaneBudget = "None"
)

// DisruptionBudgets configures the PodDisruptionBudgets of a cluster's node Pods.
type DisruptionBudgets struct {
	// controlPlane is the budget of the control-plane node Pods. Quorum (the
	// default): at least a majority (n/2+1 of the n control-plane machines) must
	// stay available, so an eviction that would break etcd's quorum is refused;
	// kept in step with the number of control-plane machines. None: no budget.
	// +optional
	// +kubebuilder:validation:Enum=Quorum;None
	ControlPlane ControlPlaneBudget `json:"controlPlane,omitempty"`

	// workersMaxUnavailable, when set, keeps a budget that lets at most this
	// many worker node Pods (a number, or a percentage of the cluster's worker
	// machines rounded up) be disrupted at once. Unset (the default): no budget
	// for workers; a MachineHealthCheck replaces lost workers.
	// +optional
	// +kubebuilder:validation:XIntOrString
	WorkersMaxUnavailable *intstr.IntOrString `json:"workersMaxUnavailable,omitempty"`
}

// NetworkIsolationMode turns the isolation NetworkPolicy on or off.
type NetworkIsolationMode string

const (
	// NetworkIsolationEnabled keeps the isolation NetworkPolicy.
	NetworkIsolationEnabled NetworkIsolationMode = "Enabled"
	// NetworkIsolationDisabled keeps none.
	NetworkIsolationDisabled NetworkIsolationMode = "Disabled"
)

// NetworkIsolation configures the NetworkPolicy that isolates a cluster's node
// Pods on the hosting cluster. Its node Pods then accept traffic only from node
// Pods of the same cluster, and on the API server port from Pods of the hosting
// cluster that are not node Pods (the management cluster's controllers when it
// is the hosting cluster, tools) and from apiServerClients. Traffic from the
// hosting node itself (probes) is not subject to NetworkPolicies.
type NetworkIsolation struct {
	// mode is Enabled (the default) or Disabled.
	// +optional
	// +kubebuilder:validation:Enum=Enabled;Disabled
	Mode NetworkIsolationMode `json:"mode,omitempty"`

	// apiServerClients are more sources that may reach the API server port of
	// the control-plane node Pods: for example the node Pods of another
	// workload cluster on this hosting cluster that serves as a management
	// cluster, or the addresses NodePort and LoadBalancer clients come from.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	APIServerClients []networkingv1.NetworkPolicyPeer `json:"apiServerClients,omitempty"`
}

// HostingClusterReference points at a kubeconfig Secret in the namespace of the
// KubernetesCluster; cross-namespace references are not possible by design.
type HostingClusterReference struct {
	// secretName is the name of a Secret in the same namespace as the KubernetesCluster
	// that holds a kubeconfig for the hosting cluster.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	SecretName string `json:"secretName"`

	// key is the key in the Secret's data that holds the kubeconfig.
	// +optional
	// +kubebuilder:default=value
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Key string `json:"key,omitempty"`

	// namespace is the namespace on the hosting cluster in which node Pods, the
	// control-plane Service and bootstrap Secrets are created. Defaults to the
	// namespace of the kubeconfig's current context, then to "default".
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace,omitempty"`
}

// ControlPlaneService configures the Service that exposes the workload cluster's API server.
type ControlPlaneService struct {
	// type is the Service type.
	// +optional
	// +kubebuilder:default=ClusterIP
	Type ServiceType `json:"type,omitempty"`

	// port is the Service port that forwards to the API servers' port 6443.
	// +optional
	// +kubebuilder:default=6443
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port int32 `json:"port,omitempty"`

	// labels are added to the Service.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`

	// annotations are added to the Service, for example to configure a cloud load balancer.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// KubernetesClusterInitializationStatus reports the initialization steps the
// Cluster API contract looks at.
// +kubebuilder:validation:MinProperties=1
type KubernetesClusterInitializationStatus struct {
	// provisioned is true once the control-plane endpoint is known.
	// +optional
	Provisioned *bool `json:"provisioned,omitempty"`
}

// KubernetesClusterStatus defines the observed state of KubernetesCluster.
// +kubebuilder:validation:MinProperties=1
type KubernetesClusterStatus struct {
	// initialization reports the steps the Cluster API contract waits for.
	// +optional
	Initialization KubernetesClusterInitializationStatus `json:"initialization,omitempty,omitzero"`

	// failureDomains are the failure domains machines of this cluster can be placed in.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=100
	FailureDomains []clusterv1.FailureDomain `json:"failureDomains,omitempty"`

	// conditions describe the state of the KubernetesCluster.
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
// +kubebuilder:resource:path=kubernetesclusters,scope=Namespaced,categories=cluster-api,shortName=kc
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']",description="Cluster"
// +kubebuilder:printcolumn:name="Provisioned",type="boolean",JSONPath=".status.initialization.provisioned",description="The control-plane endpoint is known"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].status",description="Ready summary"
// +kubebuilder:printcolumn:name="Reason",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].reason",description="Why the object is (not) ready"
// +kubebuilder:printcolumn:name="Endpoint",type="string",JSONPath=".spec.controlPlaneEndpoint.host",description="Control-plane endpoint host"
// +kubebuilder:printcolumn:name="Port",type="integer",JSONPath=".spec.controlPlaneEndpoint.port",priority=1,description="Control-plane endpoint port"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"

// KubernetesCluster is the infrastructure of a Cluster API cluster whose nodes are
// Pods on a hosting Kubernetes cluster.
type KubernetesCluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the KubernetesCluster.
	// +optional
	// +kubebuilder:validation:XValidation:rule="has(self.hostingCluster) == has(oldSelf.hostingCluster) && (!has(self.hostingCluster) || self.hostingCluster == oldSelf.hostingCluster)",message="hostingCluster cannot be added, removed or changed"
	// +kubebuilder:validation:XValidation:rule="!has(oldSelf.controlPlaneEndpoint) || !has(oldSelf.controlPlaneEndpoint.host) || (has(self.controlPlaneEndpoint) && self.controlPlaneEndpoint == oldSelf.controlPlaneEndpoint)",message="controlPlaneEndpoint cannot change once set"
	Spec KubernetesClusterSpec `json:"spec,omitempty,omitzero"`

	// status is the observed state of the KubernetesCluster.
	// +optional
	Status KubernetesClusterStatus `json:"status,omitempty,omitzero"`
}

// +kubebuilder:object:root=true

// KubernetesClusterList contains a list of KubernetesCluster.
type KubernetesClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []KubernetesCluster `json:"items"`
}

// GetConditions returns the conditions of the KubernetesCluster.
func (c *KubernetesCluster) GetConditions() []metav1.Condition {
	return c.Status.Conditions
}

// SetConditions sets the conditions of the KubernetesCluster.
func (c *KubernetesCluster) SetConditions(conditions []metav1.Condition) {
	c.Status.Conditions = conditions
}

func init() {
	objectTypes = append(objectTypes, &KubernetesCluster{}, &KubernetesClusterList{})
}
