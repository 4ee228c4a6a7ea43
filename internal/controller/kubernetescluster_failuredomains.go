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

// A KubernetesCluster's failure domains, from its hosting nodes' zones.

package controller

import (
	"context"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
)

// zoneLabel is the well-known label failure domains are discovered from.
const zoneLabel = corev1.LabelTopologyZone

// reconcileFailureDomains publishes the spec's failure domains, or the zones of
// the hosting nodes.
func (r *KubernetesClusterReconciler) reconcileFailureDomains(ctx context.Context, s *clusterScope) (ctrl.Result, error) {
	if len(s.kc.Spec.FailureDomains) > 0 {
		s.kc.Status.FailureDomains = s.kc.Spec.FailureDomains
		return ctrl.Result{}, nil
	}
	nodes, err := s.hostingNodes(ctx)
	if err != nil {
		return ctrl.Result{}, err
	}
	zones := map[string]bool{}
	for _, node := range nodes {
		if zone := node.Labels[zoneLabel]; zone != "" {
			zones[zone] = true
		}
	}
	var domains []clusterv1.FailureDomain
	for zone := range zones {
		domains = append(domains, clusterv1.FailureDomain{Name: zone, ControlPlane: ptr.To(true)})
	}
	sort.Slice(domains, func(i, j int) bool { return domains[i].Name < domains[j].Name })
	s.kc.Status.FailureDomains = domains
	return ctrl.Result{}, nil
}

// hostingNodes lists the hosting cluster's nodes from the cache (their names,
// zones and addresses: hosting.TrimNode) once per reconcile: the endpoint and
// the failure domains both need them.
func (s *clusterScope) hostingNodes(ctx context.Context) ([]corev1.Node, error) {
	if s.nodes != nil {
		return s.nodes, nil
	}
	list := &corev1.NodeList{}
	if err := s.hosting.Client.List(ctx, list); err != nil {
		return nil, fmt.Errorf("listing nodes of %s: %w", s.hosting.Description, err)
	}
	s.nodes = append([]corev1.Node{}, list.Items...)
	return s.nodes, nil
}
