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

// A KubernetesCluster's connection to its hosting cluster, and deletion of its own hosting objects.

package controller

import (
	"context"
	"errors"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	ctrl "sigs.k8s.io/controller-runtime"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/internal/hosting"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/internal/nodepod"
)

// connectHostingCluster connects to the hosting cluster and reports whether it answers.
func (r *KubernetesClusterReconciler) connectHostingCluster(ctx context.Context, s *clusterScope) (ctrl.Result, error) {
	if err := r.protectKubeconfigSecret(ctx, s.kc); err != nil {
		return ctrl.Result{}, err
	}
	hostingCluster, err := r.Hosting.For(ctx, s.kc)
	if err != nil {
		reason := infrav1.KubernetesClusterHostingClusterUnreachableReason
		if errors.Is(err, hosting.ErrInvalidKubeconfig) {
			reason = infrav1.KubernetesClusterHostingClusterInvalidReason
		}
		conditions.Set(s.kc, metav1.Condition{
			Type: infrav1.KubernetesClusterHostingClusterReachableCondition, Status: metav1.ConditionFalse,
			Reason: reason, Message: err.Error(),
		})
		// No step runs without a hosting cluster. An invalid or missing Secret is
		// retried with the same backoff as an unreachable cluster: a change of
		// the Secret wakes the cluster at once, but a Secret created anew is not
		// labelled yet, so not watched.
		return ctrl.Result{}, err
	}
	s.hosting = hostingCluster
	conditions.Set(s.kc, metav1.Condition{
		Type: infrav1.KubernetesClusterHostingClusterReachableCondition, Status: metav1.ConditionTrue,
		Reason: infrav1.KubernetesClusterHostingClusterReachableReason,
	})
	return ctrl.Result{}, nil
}

// deleteClusterObjects deletes the cluster's Service, disruption budgets and
// NetworkPolicy from the hosting cluster, read live (one created moments ago
// may not be in the cache yet), and leaves another owner's objects alone.
func (r *KubernetesClusterReconciler) deleteClusterObjects(ctx context.Context, s *clusterScope) error {
	c := s.hostingObjects()
	for _, obj := range c.Objects() {
		if _, err := deleteOwned(ctx, s.hosting, s.hosting.Reader, c.Owner(), obj); err != nil {
			return err
		}
	}
	return nil
}

// hostingObjects names the cluster's own objects on its hosting cluster and
// their owner.
func (s *clusterScope) hostingObjects() nodepod.Workload {
	return nodepod.Workload{
		Namespace: s.kc.Namespace, Name: clusterNameOf(s.kc), HostingNamespace: s.hosting.Namespace,
		OwnerID: s.kc.Annotations[infrav1.OwnerIDAnnotation],
	}
}

// clusterNameOf is the name of the Cluster API Cluster a KubernetesCluster belongs to.
func clusterNameOf(kc *infrav1.KubernetesCluster) string {
	if name := kc.Labels[clusterv1.ClusterNameLabel]; name != "" {
		return name
	}
	for _, owner := range kc.OwnerReferences {
		if owner.Kind == "Cluster" {
			return owner.Name
		}
	}
	return kc.Name
}
