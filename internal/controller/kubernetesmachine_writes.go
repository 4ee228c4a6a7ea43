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

// How a KubernetesMachine is read and written: the cheap write model (see doc.go).

package controller

import (
	"context"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/internal/nodepod"
)

// A KubernetesMachine costs as few API writes as its state changes need: one
// for the finalizer and provider ID, one per status change (conditions
// included), none when a reconcile changes nothing. The status belongs to this
// controller alone, so it is written in one merge patch.

// ownWrites remembers the resourceVersion each KubernetesMachine got from this
// controller's last write. A reconcile that starts before the cache has seen
// that write (its own write's event, or a Pod's, can come first) reads the
// object live: acting on the stale copy would repeat the write.
type ownWrites struct {
	mu       sync.Mutex
	versions map[client.ObjectKey]string
}

func (w *ownWrites) record(obj client.Object) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.versions == nil {
		w.versions = map[client.ObjectKey]string{}
	}
	w.versions[client.ObjectKeyFromObject(obj)] = obj.GetResourceVersion()
}

// unseen reports whether the cached obj may predate this controller's last
// write of it, and forgets that write: the caller reads the object live.
func (w *ownWrites) unseen(obj client.Object) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	key := client.ObjectKeyFromObject(obj)
	version, ok := w.versions[key]
	delete(w.versions, key)
	return ok && version != obj.GetResourceVersion()
}

// getKubernetesMachine reads the machine from the cache, or live when the
// cache may not have this controller's last write yet.
func (r *KubernetesMachineReconciler) getKubernetesMachine(ctx context.Context, key client.ObjectKey) (*infrav1.KubernetesMachine, error) {
	km := &infrav1.KubernetesMachine{}
	if err := r.Client.Get(ctx, key, km); err != nil {
		return nil, err
	}
	if !r.written.unseen(km) {
		return km, nil
	}
	return km, r.APIReader.Get(ctx, key, km)
}

// persistFinalizerAndProviderID writes the finalizer, and the provider ID the node will
// have, before anything is created on the hosting cluster: a manager that
// crashes after creating a hosting object can then never lose track of it.
// The provider ID is known in advance and Cluster API reads it only once the
// machine is provisioned, so both go in one write. Status changes made so far
// stay for the write at the end of the reconcile.
func (r *KubernetesMachineReconciler) persistFinalizerAndProviderID(ctx context.Context, s *machineScope) (ctrl.Result, error) {
	km := s.km
	if controllerutil.ContainsFinalizer(km, infrav1.MachineFinalizer) && km.Spec.ProviderID != "" {
		return ctrl.Result{}, nil
	}
	if km.Spec.ProviderID == "" {
		if held, err := r.namesHeldByAnother(ctx, s); err != nil || held {
			return ctrl.Result{}, err
		}
	}
	base, status := km.DeepCopy(), km.Status.DeepCopy()
	controllerutil.AddFinalizer(km, infrav1.MachineFinalizer)
	if km.Spec.ProviderID == "" {
		km.Spec.ProviderID = nodepod.ProviderID(s.hosting.Namespace, nodepod.PodName(km.Name))
	}
	if err := r.Client.Patch(ctx, km, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		return ctrl.Result{}, fmt.Errorf("adding the finalizer to KubernetesMachine %s: %w", klog.KObj(km), err)
	}
	r.written.record(km)
	// km now holds what is stored: the write at the end starts from there.
	s.base, km.Status = km.DeepCopy(), *status
	return ctrl.Result{}, nil
}

// writeKubernetesMachine sets the Ready summary and writes what the reconcile
// changed since s.base: metadata and spec in one patch, status in another.
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
	status := km.Status.DeepCopy()
	if !equality.Semantic.DeepEqual(s.base.ObjectMeta, km.ObjectMeta) || !equality.Semantic.DeepEqual(s.base.Spec, km.Spec) {
		if err := r.Client.Patch(ctx, km, client.MergeFrom(s.base)); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("writing KubernetesMachine %s: %w", klog.KObj(km), err)
		}
		r.written.record(km)
		km.Status = *status // the patch's answer holds the stored status
	}
	return r.writeStatus(ctx, s)
}

// writeStatus writes the status when it changed, unless the machine is gone
// with its finalizer.
func (r *KubernetesMachineReconciler) writeStatus(ctx context.Context, s *machineScope) error {
	km := s.km
	removed := !km.DeletionTimestamp.IsZero() && !controllerutil.ContainsFinalizer(km, infrav1.MachineFinalizer)
	if removed || equality.Semantic.DeepEqual(s.base.Status, km.Status) {
		return nil
	}
	if err := r.Client.Status().Patch(ctx, km, client.MergeFrom(s.base)); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("writing the status of KubernetesMachine %s: %w", klog.KObj(km), err)
	}
	r.written.record(km)
	return nil
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
