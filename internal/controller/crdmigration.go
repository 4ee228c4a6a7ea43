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

// Storage migration of the provider's CRDs to the hub version at start-up.

package controller

import (
	"sigs.k8s.io/cluster-api/controllers/crdmigrator"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
)

// The CRD migrator reads every CRD's metadata and writes only the provider's own four.
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=get;list;watch
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions;customresourcedefinitions/status,verbs=update;patch,resourceNames=kubernetesclusters.infrastructure.cluster.x-k8s.io;kubernetesclustertemplates.infrastructure.cluster.x-k8s.io;kubernetesmachines.infrastructure.cluster.x-k8s.io;kubernetesmachinetemplates.infrastructure.cluster.x-k8s.io
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=kubernetesclustertemplates;kubernetesmachinetemplates,verbs=patch

// NewCRDMigrator returns Cluster API's CRD migrator for the provider's kinds.
// After an upgrade that changes the storage version (v0.1 stored v1alpha1,
// v0.2 stores v1beta1), it rewrites every object in the new storage version,
// sets the CRD's status.storedVersions to that version alone, and drops
// managedFields of versions no longer served. It records the CRD generation it
// handled in an annotation on the CRD, so a restart does nothing again.
//
// KubernetesClusters and KubernetesMachines are listed from the cache the
// reconcilers already hold and rewritten through their status subresource,
// which no webhook intercepts; the templates, which have no status, are
// listed live and rewritten with a no-op patch.
func NewCRDMigrator(c client.Client, apiReader client.Reader, skipPhases []string) *crdmigrator.CRDMigrator {
	phases := make([]crdmigrator.Phase, 0, len(skipPhases))
	for _, p := range skipPhases {
		phases = append(phases, crdmigrator.Phase(p))
	}
	return &crdmigrator.CRDMigrator{
		Client:                 c,
		APIReader:              apiReader,
		SkipCRDMigrationPhases: phases,
		Config: map[client.Object]crdmigrator.ByObjectConfig{
			&infrav1.KubernetesCluster{}:         {UseCache: true, UseStatusForStorageVersionMigration: true},
			&infrav1.KubernetesMachine{}:         {UseCache: true, UseStatusForStorageVersionMigration: true},
			&infrav1.KubernetesClusterTemplate{}: {UseCache: false},
			&infrav1.KubernetesMachineTemplate{}: {UseCache: false},
		},
	}
}
