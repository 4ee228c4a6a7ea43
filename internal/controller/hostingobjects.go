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

// Create, apply and delete of hosting objects by owner, shared by both reconcilers; name conflicts.

package controller

import (
	"context"
	"errors"
	"fmt"
	"maps"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/internal/hosting"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/internal/nodepod"
)

// takeLabelsAndSpec gives existing the labels, annotations and spec of
// desired, the fields the provider owns, and reports whether that changed anything.
func takeLabelsAndSpec[S any](existing, desired client.Object, existingSpec *S, desiredSpec S) bool {
	annotations := maps.Clone(existing.GetAnnotations()) // others' annotations stay
	if annotations == nil {
		annotations = map[string]string{}
	}
	maps.Copy(annotations, desired.GetAnnotations())
	if maps.Equal(existing.GetLabels(), desired.GetLabels()) && maps.Equal(existing.GetAnnotations(), annotations) &&
		equality.Semantic.DeepEqual(*existingSpec, desiredSpec) {
		return false
	}
	existing.SetLabels(desired.GetLabels())
	existing.SetAnnotations(annotations)
	*existingSpec = desiredSpec
	return true
}

// applyHostingObject creates desired on the hosting cluster, or reads it into
// existing and updates it when takeDesired changed the fields the provider
// owns; created tells which of the two objects is now the stored one. An
// object of that name that owner does not own is a nameConflictError: it is
// neither adopted nor written.
func applyHostingObject(ctx context.Context, h *hosting.Cluster, owner nodepod.Owner, desired, existing client.Object, takeDesired func() bool) (created bool, err error) {
	err = h.Client.Get(ctx, client.ObjectKeyFromObject(desired), existing)
	if apierrors.IsNotFound(err) {
		return createHostingObject(ctx, h, owner, desired, existing)
	}
	if err != nil {
		return false, fmt.Errorf("reading %s %s on %s: %w", nodepod.KindName(desired), klog.KObj(desired), h.Description, err)
	}
	if !owner.Owns(existing) {
		return false, newNameConflict(desired, h, "cluster")
	}
	if !takeDesired() {
		return false, nil
	}
	if err := h.Client.Update(ctx, existing); err != nil {
		return false, fmt.Errorf("updating %s %s on %s: %w", nodepod.KindName(desired), klog.KObj(desired), h.Description, err)
	}
	return false, nil
}

// createHostingObject creates desired. The cache holds only the provider's
// objects, so a name held by anything else shows up as AlreadyExists: the
// holder is read live, and is either this owner's (the cache lagged; its
// event brings the next reconcile) or a conflict.
func createHostingObject(ctx context.Context, h *hosting.Cluster, owner nodepod.Owner, desired, existing client.Object) (bool, error) {
	err := h.Client.Create(ctx, desired)
	if err == nil {
		return true, nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return false, fmt.Errorf("creating %s %s on %s: %w", nodepod.KindName(desired), klog.KObj(desired), h.Description, err)
	}
	if err := h.Reader.Get(ctx, client.ObjectKeyFromObject(desired), existing); err != nil {
		return false, fmt.Errorf("reading %s %s on %s: %w", nodepod.KindName(desired), klog.KObj(desired), h.Description, err)
	}
	if !owner.Owns(existing) {
		return false, newNameConflict(desired, h, "cluster")
	}
	return false, nil
}

// removeUnwanted deletes a policy object the spec no longer asks for, when
// the cache holds it and it is owner's: most clusters never had one (a
// cluster of workers only has no control-plane budget), and a reconcile must
// not cost them a write. A budget created moments ago and not yet in the
// cache is removed by the reconcile its creation event triggers.
func removeUnwanted(ctx context.Context, h *hosting.Cluster, owner nodepod.Owner, obj client.Object) error {
	_, err := deleteOwned(ctx, h, h.Client, owner, obj)
	return err
}

// deleteOwned deletes obj from the hosting cluster when reader finds it there
// and it is owner's; another owner's object of that name is left alone.
// present tells whether owner's object is still there (being deleted). The
// delete names the UID that was read, so an object that took the name since
// is never deleted.
func deleteOwned(ctx context.Context, h *hosting.Cluster, reader client.Reader, owner nodepod.Owner, obj client.Object) (present bool, err error) {
	err = reader.Get(ctx, client.ObjectKeyFromObject(obj), obj)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading %s %s on %s: %w", nodepod.KindName(obj), klog.KObj(obj), h.Description, err)
	}
	if !owner.Owns(obj) {
		return false, nil
	}
	if !obj.GetDeletionTimestamp().IsZero() {
		return true, nil
	}
	if err := h.Client.Delete(ctx, obj, client.Preconditions{UID: ptr.To(obj.GetUID())}); client.IgnoreNotFound(err) != nil {
		return true, fmt.Errorf("deleting %s %s on %s: %w", nodepod.KindName(obj), klog.KObj(obj), h.Description, err)
	}
	return true, nil
}

// nameConflictError is a hosting object that holds a name a cluster or a
// machine needs but belongs to another owner (or to none). Its owner is not
// named: that would tell one tenant about another.
type nameConflictError struct {
	kind, where, needer string
	key                 client.ObjectKey
}

// newNameConflict is the conflict of obj for needer, "cluster" or "machine".
func newNameConflict(obj client.Object, h *hosting.Cluster, needer string) *nameConflictError {
	return &nameConflictError{kind: nodepod.KindName(obj), where: h.Description, needer: needer, key: client.ObjectKeyFromObject(obj)}
}

func (e *nameConflictError) Error() string {
	return fmt.Sprintf("%s %s already exists on %s and does not belong to this %s (its owner labels %s, %s, %s and %s name another owner, or it has none); "+
		"the provider leaves it alone: delete it, or give this %s another name or hosting namespace",
		e.kind, e.key, e.where, e.needer, infrav1.ClusterNamespaceLabel, clusterv1.ClusterNameLabel, infrav1.MachineNameLabel, infrav1.OwnerIDLabel, e.needer)
}

// isNameConflict tells whether err is, or wraps, a nameConflictError.
func isNameConflict(err error) bool {
	conflict := (*nameConflictError)(nil)
	return errors.As(err, &conflict)
}
