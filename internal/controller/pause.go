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

// Pausing: a paused Cluster or object is left alone, and says so in its Paused condition.

package controller

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/annotations"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/cluster-api/util/paused"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// reconcilePaused shows whether the object is paused. A paused object gets its
// Paused condition written at once and nothing else; an unpaused one gets
// Paused=False in the reconcile's single patch, which saves a write and a
// reconcile per object.
func reconcilePaused(ctx context.Context, c client.Client, cluster *clusterv1.Cluster, obj conditionsObject) (bool, error) {
	if isPaused(cluster, obj) {
		isPaused, _, err := paused.EnsurePausedCondition(ctx, c, cluster, obj)
		return isPaused, err
	}
	conditions.Set(obj, metav1.Condition{Type: clusterv1.PausedCondition, Status: metav1.ConditionFalse, Reason: clusterv1.NotPausedReason})
	return false, nil
}

// isPaused tells whether the Cluster or the object itself is paused.
func isPaused(cluster *clusterv1.Cluster, obj client.Object) bool {
	return (cluster != nil && ptr.Deref(cluster.Spec.Paused, false)) || annotations.HasPaused(obj)
}
