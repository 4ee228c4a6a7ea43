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

// What a KubernetesMachine's reconcile writes to it: its identity first, then what changed (see doc.go).

package controller

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/internal/nodepod"
)

// persistFinalizerAndProviderID writes the finalizer, and the provider ID the node will
// have, before anything is created on the hosting cluster: a manager that
// crashes after creating a hosting object can then never lose track of it.
// The provider ID is known in advance and Cluster API reads it only once the
// machine is provisioned, so both go in one write. Status changes made so far
// stay for the write at the end of the reconcile.
func (r *KubernetesMachineReconciler) persistFinalizerAndProviderID(ctx context.Context, s *machineScope) (ctrl.Result, error) {
	km := s.km
	if machineFinalizers.held(km) && km.Spec.ProviderID != "" {
		return ctrl.Result{}, nil
	}
	if km.Spec.ProviderID == "" {
		if held, err := r.namesHeldByAnother(ctx, s); err != nil || held {
			return ctrl.Result{}, err
		}
	}
	base := km.DeepCopy()
	machineFinalizers.add(km)
	if km.Spec.ProviderID == "" {
		km.Spec.ProviderID = nodepod.ProviderID(s.hosting.Namespace, nodepod.PodName(km.Name))
	}
	stored, err := r.writer.Persist(ctx, base, km)
	if err != nil {
		return ctrl.Result{}, err
	}
	s.base = stored // the write at the end starts from what is stored
	return ctrl.Result{}, nil
}

// writeKubernetesMachine sets the Ready summary and writes what the reconcile
// changed since s.base (internal/writer: metadata and spec in one patch, the
// status in another, nothing when nothing changed).
func (r *KubernetesMachineReconciler) writeKubernetesMachine(ctx context.Context, s *machineScope) error {
	km := s.km
	if err := setReadySummary(km, infrav1.KubernetesMachinePodProvisionedCondition, infrav1.KubernetesMachineBootstrapSucceededCondition); err != nil {
		return err
	}
	// Conditions set before persistFinalizerAndProviderID's write still name the old
	// generation; this reconcile saw the new one.
	for i := range km.Status.Conditions {
		km.Status.Conditions[i].ObservedGeneration = km.Generation
	}
	return r.writer.Write(ctx, s.base, km)
}

// namesHeldByAnother reports (as a NameConflict) whether the node Pod's name or
// its bootstrap Secret's is held by another machine's object, before the
// provider ID names that Pod: a provider ID never points at another machine's
// node Pod. The cache holds every node Pod and bootstrap Secret of the
// provider; a foreign object it does not hold is found when the create fails.
func (r *KubernetesMachineReconciler) namesHeldByAnother(ctx context.Context, s *machineScope) (bool, error) {
	for _, obj := range s.node.NodeObjects() {
		err := s.hosting.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return false, fmt.Errorf("reading %s %s on %s: %w", nodepod.KindName(obj), klog.KObj(obj), s.hosting.Description, err)
		}
		if !s.node.Owner().Owns(obj) {
			return true, r.reportNameConflict(s, obj)
		}
	}
	return false, nil
}
