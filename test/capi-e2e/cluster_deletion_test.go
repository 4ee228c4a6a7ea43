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
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	capispecs "sigs.k8s.io/cluster-api/test/e2e"
)

// Cluster API's deletion phases for a ClusterClass cluster, with the
// provider's KubernetesCluster last: workers first, then the control plane,
// then the infrastructure cluster (which deletes the control-plane Service,
// budgets and NetworkPolicy on the hosting cluster). One control-plane machine
// rather than Cluster API's three: the phases are the same, and three etcd
// members take 2 cores several minutes more.
var _ = Describe("When performing cluster deletion with ClusterClass", minutes(3), func() {
	capispecs.ClusterDeletionSpec(ctx, func() capispecs.ClusterDeletionSpecInput {
		return capispecs.ClusterDeletionSpecInput{
			E2EConfig:                e2eConfig,
			ClusterctlConfigPath:     clusterctlConfigPath,
			BootstrapClusterProxy:    specProxy,
			ArtifactFolder:           artifactFolder,
			SkipCleanup:              skipCleanup,
			ControlPlaneMachineCount: ptr.To[int64](1),
			Flavor:                   ptr.To("topology"),
			ClusterDeletionPhases: []capispecs.ClusterDeletionPhase{
				{
					ObjectFilter: func(ref corev1.ObjectReference, owners []metav1.OwnerReference) bool {
						if ref.Kind == "Machine" && hasOwner(owners, "MachineDeployment", "MachineSet") {
							return true
						}
						return ref.Kind == "MachineDeployment" || ref.Kind == "MachineSet"
					},
					BlockingObjectFilter: isKind("Machine"),
				},
				{
					ObjectFilter: func(ref corev1.ObjectReference, owners []metav1.OwnerReference) bool {
						if ref.Kind == "Machine" && hasOwner(owners, "KubeadmControlPlane") {
							return true
						}
						return ref.Kind == "KubeadmControlPlane"
					},
					BlockingObjectFilter: isKind("Machine"),
				},
				{
					ObjectFilter:         isKind("KubernetesCluster"),
					BlockingObjectFilter: isKind("KubernetesCluster"),
				},
			},
		}
	})
})

func isKind(kind string) func(corev1.ObjectReference, []metav1.OwnerReference) bool {
	return func(ref corev1.ObjectReference, _ []metav1.OwnerReference) bool { return ref.Kind == kind }
}

func hasOwner(owners []metav1.OwnerReference, kinds ...string) bool {
	for _, owner := range owners {
		for _, kind := range kinds {
			if owner.Kind == kind {
				return true
			}
		}
	}
	return false
}
