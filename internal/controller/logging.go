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

// Logger keys shared by both reconcilers.

package controller

import (
	"context"

	"k8s.io/klog/v2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
)

// withOwnerKeys adds the Cluster API owners of the object being reconciled to
// the context's logger, with the keys both reconcilers use ("Cluster",
// "Machine"; controller-runtime adds the reconciled kind's own), so that every
// line of one workload cluster can be found by the same key. A nil owner is
// left out.
func withOwnerKeys(ctx context.Context, cluster *clusterv1.Cluster, machine *clusterv1.Machine) context.Context {
	log := ctrl.LoggerFrom(ctx)
	if cluster != nil {
		log = log.WithValues("Cluster", klog.KObj(cluster))
	}
	if machine != nil {
		log = log.WithValues("Machine", klog.KObj(machine))
	}
	return ctrl.LoggerInto(ctx, log)
}
