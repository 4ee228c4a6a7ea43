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

// Conditions and reasons of KubernetesCluster. Ready summarises the others and
// Paused is Cluster API's own clusterv1.PausedCondition.
const (
	// KubernetesClusterHostingClusterReachableCondition is true when the provider can
	// reach the hosting cluster with the configured credentials.
	KubernetesClusterHostingClusterReachableCondition = "HostingClusterReachable"

	// KubernetesClusterHostingClusterReachableReason means the hosting cluster answers.
	KubernetesClusterHostingClusterReachableReason = "Reachable"

	// KubernetesClusterHostingClusterUnreachableReason means the hosting cluster did not answer.
	KubernetesClusterHostingClusterUnreachableReason = "Unreachable"

	// KubernetesClusterHostingClusterInvalidReason means the kubeconfig Secret is missing or invalid.
	KubernetesClusterHostingClusterInvalidReason = "InvalidKubeconfig"

	// KubernetesClusterLoadBalancerAvailableCondition is true when the control-plane
	// Service exists and its endpoint is known.
	KubernetesClusterLoadBalancerAvailableCondition = "LoadBalancerAvailable"

	// KubernetesClusterLoadBalancerAvailableReason means the Service and its endpoint exist.
	KubernetesClusterLoadBalancerAvailableReason = "Available"

	// KubernetesClusterLoadBalancerServiceNotAppliedReason means the hosting
	// cluster refused to create or update the Service; the message says why.
	KubernetesClusterLoadBalancerServiceNotAppliedReason = "ServiceNotApplied"

	// KubernetesClusterNameConflictReason means a hosting object the cluster needs
	// (its Service, a budget, its NetworkPolicy) is taken by an object of another
	// owner, which the provider neither adopts nor changes; the message names it.
	KubernetesClusterNameConflictReason = "NameConflict"

	// KubernetesClusterLoadBalancerWaitingForAddressReason means the Service exists but has no address yet.
	KubernetesClusterLoadBalancerWaitingForAddressReason = "WaitingForAddress"

	// KubernetesClusterHostingPoliciesReadyCondition is true when the cluster's
	// PodDisruptionBudgets and isolation NetworkPolicy on the hosting cluster
	// match its spec and its number of machines.
	KubernetesClusterHostingPoliciesReadyCondition = "HostingPoliciesReady"

	// KubernetesClusterHostingPoliciesAppliedReason means the policies are in place; the message lists them.
	KubernetesClusterHostingPoliciesAppliedReason = "Applied"

	// KubernetesClusterHostingPoliciesFailedReason means the hosting cluster refused a policy
	// object (for example, the kubeconfig lacks the permission); the message says which.
	KubernetesClusterHostingPoliciesFailedReason = "ApplyFailed"
)

// Conditions and reasons of KubernetesMachine. Ready summarises the others and
// Paused is Cluster API's own clusterv1.PausedCondition.
const (
	// KubernetesMachinePodProvisionedCondition is true when the node Pod runs.
	KubernetesMachinePodProvisionedCondition = "PodProvisioned"

	// KubernetesMachinePodProvisionedReason means the node Pod runs.
	KubernetesMachinePodProvisionedReason = "Provisioned"

	// KubernetesMachineWaitingForClusterInfrastructureReason means the Cluster's infrastructure is not provisioned yet.
	KubernetesMachineWaitingForClusterInfrastructureReason = "WaitingForClusterInfrastructure"

	// KubernetesMachineWaitingForBootstrapDataReason means the Machine has no bootstrap data Secret yet.
	KubernetesMachineWaitingForBootstrapDataReason = "WaitingForBootstrapData"

	// KubernetesMachinePodPendingReason means the node Pod exists but does not run yet.
	KubernetesMachinePodPendingReason = "PodPending"

	// KubernetesMachinePodRejectedReason means the hosting cluster refused to create the node Pod.
	KubernetesMachinePodRejectedReason = "PodRejected"

	// KubernetesMachineNameConflictReason means an object the provider would create
	// on the hosting cluster (node Pod, bootstrap Secret, claim) exists and is not
	// this machine's; the provider neither uses nor deletes it.
	KubernetesMachineNameConflictReason = "NameConflict"

	// KubernetesMachinePodLostReason means the node Pod failed, was evicted or disappeared after provisioning.
	KubernetesMachinePodLostReason = "PodLost"

	// KubernetesMachineHostingNodeLimitReason means the node Pod ended on a limit
	// of its hosting node that every node Pod there shares (its inotify
	// instances, say): the message says which setting to raise. A new machine on
	// the same hosting node fails the same way until it is raised.
	KubernetesMachineHostingNodeLimitReason = "HostingNodeLimit"

	// KubernetesMachineBootstrapSucceededCondition is true when the bootstrap data ran to completion in the node.
	KubernetesMachineBootstrapSucceededCondition = "BootstrapSucceeded"

	// KubernetesMachineBootstrapSucceededReason means the bootstrap wrote its success sentinel.
	KubernetesMachineBootstrapSucceededReason = "Succeeded"

	// KubernetesMachineBootstrapRunningReason means the bootstrap is still running.
	KubernetesMachineBootstrapRunningReason = "Running"

	// KubernetesMachineBootstrapFailedReason means the bootstrap failed; the message holds the tail of its output.
	KubernetesMachineBootstrapFailedReason = "Failed"

	// KubernetesMachineBootstrapTimedOutReason means the bootstrap did not finish within spec.bootstrapTimeout.
	KubernetesMachineBootstrapTimedOutReason = "TimedOut"

	// KubernetesMachineBootstrapUnsupportedFormatReason means the bootstrap data is not cloud-config.
	KubernetesMachineBootstrapUnsupportedFormatReason = "UnsupportedFormat"
)

// Reasons of the Events the provider records on a KubernetesMachine.
const (
	// KubernetesMachineNodePodDeletedEventReason: the machine's node Pod, its
	// bootstrap Secret and its claims were deleted from the hosting cluster.
	KubernetesMachineNodePodDeletedEventReason = "NodePodDeleted"

	// KubernetesMachineNodePodRejectedEventReason: the hosting cluster refused
	// to create the node Pod (the Event's note says why).
	KubernetesMachineNodePodRejectedEventReason = "NodePodRejected"

	// KubernetesMachineHostingClusterUnknownEventReason: the machine was deleted
	// after its KubernetesCluster, so nothing tells where its node Pod ran; the
	// node Pod may be left on its hosting cluster.
	KubernetesMachineHostingClusterUnknownEventReason = "HostingClusterUnknown"

	// KubernetesMachineLostNodeDeletedEventReason: the machine's node Pod was
	// lost for good, so the provider deleted its Node from the workload cluster.
	KubernetesMachineLostNodeDeletedEventReason = "LostNodeDeleted"
)
