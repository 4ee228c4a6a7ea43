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

// How a KubernetesMachine finds its KubernetesCluster, hosting cluster and the node Pod it is.

package controller

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util"
	"sigs.k8s.io/cluster-api/util/annotations"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/internal/nodepod"
)

// waitForClusterInfrastructure waits until the Cluster's infrastructure is provisioned.
func (r *KubernetesMachineReconciler) waitForClusterInfrastructure(_ context.Context, s *machineScope) (ctrl.Result, error) {
	if ptr.Deref(s.cluster.Status.Initialization.InfrastructureProvisioned, false) {
		return ctrl.Result{}, nil
	}
	setPodProvisioned(s.km, metav1.ConditionFalse, infrav1.KubernetesMachineWaitingForClusterInfrastructureReason,
		fmt.Sprintf("Waiting for Cluster %s to have its infrastructure provisioned", s.cluster.Name))
	s.waiting = true
	return ctrl.Result{}, nil
}

// resolveHostingCluster finds the KubernetesCluster and its hosting cluster, and works
// out the node Pod the machine is.
func (r *KubernetesMachineReconciler) resolveHostingCluster(ctx context.Context, s *machineScope) (ctrl.Result, error) {
	kc, err := r.kubernetesClusterOf(ctx, s)
	if err != nil {
		setPodProvisioned(s.km, metav1.ConditionFalse, infrav1.KubernetesMachineWaitingForClusterInfrastructureReason, err.Error())
		return ctrl.Result{}, err
	}
	if kc == nil {
		ctrl.LoggerFrom(ctx).Info("The KubernetesCluster is gone; nothing can be found on its hosting cluster")
		return ctrl.Result{}, nil
	}
	s.kc = kc
	ownerID := kc.Annotations[infrav1.OwnerIDAnnotation]
	if ownerID == "" && s.km.DeletionTimestamp.IsZero() && !annotations.IsExternallyManaged(kc) {
		// Nothing is created without the owner ID. Only a KubernetesCluster not
		// reconciled yet (just created, or of an earlier release) has none; its
		// first reconcile writes it, and that update wakes this machine
		// (hostingChanged). A deletion goes on without it: a cluster without an
		// ID has no object labelled with one. An externally managed cluster
		// gets none, and its machines' objects are owned by their names.
		ctrl.LoggerFrom(ctx).V(4).Info("Waiting for the KubernetesCluster's owner ID", "KubernetesCluster", klog.KObj(kc))
		s.waiting = true
		return ctrl.Result{}, nil
	}
	hostingCluster, err := r.Hosting.For(ctx, kc)
	if err != nil {
		setPodProvisioned(s.km, metav1.ConditionFalse, infrav1.KubernetesClusterHostingClusterUnreachableReason, err.Error())
		return ctrl.Result{}, err
	}
	s.hosting = hostingCluster
	s.node = nodepod.Node{
		Name:             s.km.Name,
		Namespace:        s.km.Namespace,
		ClusterName:      clusterNameOf(kc),
		Spec:             s.km.Spec,
		HostingNamespace: hostingCluster.Namespace,
		Image:            s.km.Spec.Image,
		OwnerID:          ownerID,
	}
	if s.machine != nil {
		s.node.ControlPlane = util.IsControlPlaneMachine(s.machine)
		s.node.FailureDomain = s.machine.Spec.FailureDomain
		if s.node.Image == "" {
			s.node.Image = nodepod.ImageForVersion(s.machine.Spec.Version)
		}
	}
	return ctrl.Result{}, nil
}

func (r *KubernetesMachineReconciler) kubernetesClusterOf(ctx context.Context, s *machineScope) (*infrav1.KubernetesCluster, error) {
	kc := &infrav1.KubernetesCluster{}
	if s.cluster != nil {
		key := client.ObjectKey{Namespace: s.km.Namespace, Name: s.cluster.Spec.InfrastructureRef.Name}
		if err := r.Client.Get(ctx, key, kc); err != nil {
			if apierrors.IsNotFound(err) && !s.km.DeletionTimestamp.IsZero() {
				return nil, nil
			}
			return nil, fmt.Errorf("reading KubernetesCluster %s: %w", key, err)
		}
		return kc, nil
	}
	list := &infrav1.KubernetesClusterList{}
	if err := r.Client.List(ctx, list, client.InNamespace(s.km.Namespace), client.MatchingLabels{clusterv1.ClusterNameLabel: s.km.Labels[clusterv1.ClusterNameLabel]}); err != nil {
		return nil, err
	}
	if len(list.Items) == 0 {
		return nil, nil
	}
	return &list.Items[0], nil
}
