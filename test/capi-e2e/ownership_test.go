//go:build e2e

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

package capie2e

import (
	. "github.com/onsi/ginkgo/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	clusterctlcluster "sigs.k8s.io/cluster-api/cmd/clusterctl/client/cluster"
	"sigs.k8s.io/cluster-api/test/framework"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
)

// The owners Cluster API gives the provider's objects, as in Cluster API's
// owner-references reference (docs/book/src/reference/owner_references.md).
var (
	clusterOwner      = metav1.OwnerReference{Kind: "Cluster", APIVersion: clusterv1.GroupVersion.String()}
	clusterController = metav1.OwnerReference{Kind: "Cluster", APIVersion: clusterv1.GroupVersion.String(), Controller: ptr.To(true)}
	clusterClassOwner = metav1.OwnerReference{Kind: "ClusterClass", APIVersion: clusterv1.GroupVersion.String()}
	machineController = metav1.OwnerReference{Kind: "Machine", APIVersion: clusterv1.GroupVersion.String(), Controller: ptr.To(true)}
)

type ownerAssertions = map[string]func(types.NamespacedName, []metav1.OwnerReference) error

// infraOwnerReferenceAssertions are the provider's owner references: a
// KubernetesMachine is controlled by its Machine; a KubernetesCluster is owned
// by its Cluster (controlled by it when the topology controller made it);
// templates belong to the Cluster or the ClusterClass that uses them.
func infraOwnerReferenceAssertions(topologyManaged bool) ownerAssertions {
	kubernetesClusterOwner := clusterOwner
	if topologyManaged {
		kubernetesClusterOwner = clusterController
	}
	return ownerAssertions{
		"KubernetesMachine": func(_ types.NamespacedName, owners []metav1.OwnerReference) error {
			return framework.HasExactOwners(owners, machineController)
		},
		"KubernetesMachineTemplate": func(_ types.NamespacedName, owners []metav1.OwnerReference) error {
			return framework.HasOneOfExactOwners(owners, []metav1.OwnerReference{clusterOwner}, []metav1.OwnerReference{clusterClassOwner})
		},
		"KubernetesCluster": func(_ types.NamespacedName, owners []metav1.OwnerReference) error {
			return framework.HasExactOwners(owners, kubernetesClusterOwner)
		},
		"KubernetesClusterTemplate": func(_ types.NamespacedName, owners []metav1.OwnerReference) error {
			return framework.HasExactOwners(owners, clusterClassOwner)
		},
	}
}

// infraFinalizersAssertion are the provider's finalizers: one on each
// KubernetesCluster and KubernetesMachine, none on templates.
var infraFinalizersAssertion = map[string]func(types.NamespacedName) []string{
	"KubernetesMachine": func(types.NamespacedName) []string { return []string{infrav1.MachineFinalizer} },
	"KubernetesCluster": func(types.NamespacedName) []string { return []string{infrav1.ClusterFinalizer} },
}

// clusterObjects selects the owner graph Cluster API's checks walk: the
// cluster's objects on the management cluster, but not the hosting objects
// the provider manages (the node Pods' bootstrap Secrets). In the default
// flavor the management cluster is also the hosting cluster and both share the
// namespace. Hosting objects are owned by name and label, never by owner
// references, and clusterctl move leaves them where they are (a bootstrap
// Secret's name is not one of a cluster's Secrets), so that moving a cluster
// does not touch its running node Pods.
func clusterObjects(clusterName string) clusterctlcluster.GetOwnerGraphFilterFunction {
	byName := clusterctlcluster.FilterClusterObjectsWithNameFilter(clusterName)
	return func(u unstructured.Unstructured) bool {
		return byName(u) && u.GetLabels()[infrav1.ManagedByLabel] != infrav1.ManagedByValue
	}
}

// validateClusterObjects is what Cluster API's quick-start checks on its own
// providers once the machines are provisioned: owner references and
// finalizers are put back when removed, owner references move to the served
// API version, and nothing is written while the cluster is steady.
func validateClusterObjects(proxy framework.ClusterProxy, namespace, clusterName string, topologyManaged bool) {
	filter := clusterObjects(clusterName)
	owners := []ownerAssertions{
		framework.CoreOwnerReferenceAssertion,
		framework.ExpOwnerReferenceAssertions,
		infraOwnerReferenceAssertions(topologyManaged),
		framework.KubeadmBootstrapOwnerReferenceAssertions,
		framework.KubeadmControlPlaneOwnerReferenceAssertions(topologyManaged),
		framework.KubernetesReferenceAssertions,
	}
	By("Checking that owner references are resilient")
	framework.ValidateOwnerReferencesResilience(ctx, proxy, namespace, clusterName, filter, owners...)
	By("Checking that owner references are updated to the correct API version")
	framework.ValidateOwnerReferencesOnUpdate(ctx, proxy, namespace, clusterName, filter, owners...)

	coreFinalizers := framework.CoreFinalizersAssertionWithLegacyClusters
	if topologyManaged {
		coreFinalizers = framework.CoreFinalizersAssertionWithClassyClusters
	}
	By("Checking that finalizers are resilient")
	framework.ValidateFinalizersResilience(ctx, proxy, namespace, clusterName, filter,
		coreFinalizers,
		framework.KubeadmControlPlaneFinalizersAssertion,
		framework.ExpFinalizersAssertion,
		infraFinalizersAssertion,
	)
	By("Checking that resourceVersions are stable")
	framework.ValidateResourceVersionStable(ctx, framework.ValidateResourceVersionStableInput{
		ClusterProxy:             proxy,
		Namespace:                namespace,
		OwnerGraphFilterFunction: filter,
		WaitToBecomeStable:       e2eConfig.GetIntervals("quick-start", "wait-resource-versions-become-stable"),
		WaitToRemainStable:       e2eConfig.GetIntervals("quick-start", "wait-resource-versions-remain-stable"),
	})
}
