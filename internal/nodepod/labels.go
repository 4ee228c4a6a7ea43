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

package nodepod

import (
	"maps"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
)

// MachineLabels are the provider labels of every hosting object of a machine
// (node Pod, bootstrap Secret, PersistentVolumeClaims). Values that are not
// valid label values, such as machine names longer than 63 characters, are
// shortened with a hash, so callers must select with these maps, never with
// raw names.
func MachineLabels(clusterNamespace, clusterName, machineName string, controlPlane bool) map[string]string {
	labels := ClusterLabels(clusterNamespace, clusterName)
	labels[infrav1.MachineNameLabel] = labelValue(machineName)
	labels[infrav1.NodeRoleLabel] = nodeRole(controlPlane)
	return labels
}

// ClusterLabels are the provider labels of the hosting objects of a cluster;
// every machine's objects carry them too.
func ClusterLabels(clusterNamespace, clusterName string) map[string]string {
	return map[string]string{
		clusterv1.ClusterNameLabel:    labelValue(clusterName),
		infrav1.ClusterNamespaceLabel: labelValue(clusterNamespace),
		infrav1.ManagedByLabel:        infrav1.ManagedByValue,
	}
}

// ControlPlaneSelector selects the control-plane node Pods of a cluster.
func ControlPlaneSelector(clusterNamespace, clusterName string) map[string]string {
	return RoleSelector(clusterNamespace, clusterName, true)
}

// RoleSelector selects the control-plane or the worker node Pods of a cluster.
func RoleSelector(clusterNamespace, clusterName string, controlPlane bool) map[string]string {
	return map[string]string{
		clusterv1.ClusterNameLabel:    labelValue(clusterName),
		infrav1.ClusterNamespaceLabel: labelValue(clusterNamespace),
		infrav1.NodeRoleLabel:         nodeRole(controlPlane),
	}
}

func nodeRole(controlPlane bool) string {
	if controlPlane {
		return infrav1.NodeRoleControlPlane
	}
	return infrav1.NodeRoleWorker
}

// withProviderLabels overlays user labels with the provider's, so that a user
// can never detach an object from its machine or cluster.
func withProviderLabels(user, provider map[string]string) map[string]string {
	labels := make(map[string]string, len(user)+len(provider))
	maps.Copy(labels, user)
	maps.Copy(labels, provider)
	return labels
}
