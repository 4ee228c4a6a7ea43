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

// Package writer writes the objects a reconciler owns the status of with as
// few API requests as their changes need: a reconcile that changes nothing
// writes nothing, one that changes metadata or spec writes one merge patch,
// one that changes the status writes one status patch. It remembers the
// resourceVersion of its own last write of each object, so that a reconcile
// whose cached copy predates that write reads the object live instead of
// acting on the stale copy and repeating the write.
//
// Merge patches send only what changed: a label or annotation that another
// controller set meanwhile is kept. The status is the reconciler's alone, so
// its patch carries no resourceVersion of the object as read (after a
// metadata patch in the same Write it names the version that patch stored);
// the identity write (Persist) does, so that two reconciles can never both
// think they created an identity.
package writer

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// Writer reads and writes the objects of one kind T.
type Writer[T client.Object] struct {
	cache client.Client
	live  client.Reader
	// finalizers are the reconciler's names for its finalizer (the current one
	// and any an older release wrote): once none is left on an object being
	// deleted, the object may be gone, and its status is not written.
	finalizers []string
	fields     Fields[T]

	mu       sync.Mutex
	versions map[client.ObjectKey]string
}

// Fields returns pointers to an object's metadata, spec and status: what
// Writer compares with the stored copy, and the status it keeps apart.
type Fields[T client.Object] func(obj T) (meta *metav1.ObjectMeta, spec, status any)

// New returns a Writer that reads through cache (the manager's client), and
// live when the cache may be stale.
func New[T client.Object](cache client.Client, live client.Reader, finalizers []string, fields Fields[T]) *Writer[T] {
	return &Writer[T]{cache: cache, live: live, finalizers: finalizers, fields: fields, versions: map[client.ObjectKey]string{}}
}

// Get reads obj from the cache, or live when the cache may not have this
// Writer's last write of it yet.
func (w *Writer[T]) Get(ctx context.Context, key client.ObjectKey, obj T) error {
	if err := w.cache.Get(ctx, key, obj); err != nil {
		if apierrors.IsNotFound(err) {
			w.forget(key)
		}
		return err
	}
	if !w.unseen(obj) {
		return nil
	}
	return w.live.Get(ctx, key, obj)
}

// Persist writes the metadata and spec obj has beyond base in one merge patch
// that fails on a conflict, for what must be stored before anything else
// happens (a finalizer, an identity). The status changes obj holds stay in obj
// for Write; the returned copy is obj as stored, the base for Write.
func (w *Writer[T]) Persist(ctx context.Context, base, obj T) (T, error) {
	changed := obj.DeepCopyObject().(T)
	if err := w.cache.Patch(ctx, obj, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		return base, fmt.Errorf("writing %s %s: %w", kindOf(obj), klog.KObj(obj), err)
	}
	w.record(obj)
	stored := obj.DeepCopyObject().(T)
	w.setStatus(obj, changed)
	return stored, nil
}

// Write writes what obj changed since base: metadata and spec in one patch,
// the status in another, nothing when nothing changed. An object that is gone
// is no error: its finalizer was removed, or it was deleted meanwhile.
func (w *Writer[T]) Write(ctx context.Context, base, obj T) error {
	if err := w.writeMetadataAndSpec(ctx, base, obj); err != nil {
		return err
	}
	return w.writeStatus(ctx, base, obj)
}

// writeMetadataAndSpec patches metadata and spec when they changed, and keeps
// obj's status, which the patch's answer replaces with the stored one.
func (w *Writer[T]) writeMetadataAndSpec(ctx context.Context, base, obj T) error {
	baseMeta, baseSpec, _ := w.fields(base)
	objMeta, objSpec, _ := w.fields(obj)
	if equality.Semantic.DeepEqual(baseMeta, objMeta) && equality.Semantic.DeepEqual(baseSpec, objSpec) {
		return nil
	}
	changed := obj.DeepCopyObject().(T)
	err := w.cache.Patch(ctx, obj, client.MergeFrom(base))
	if client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("writing %s %s: %w", kindOf(obj), klog.KObj(obj), err)
	}
	if err == nil {
		w.record(obj)
	}
	w.setStatus(obj, changed)
	return nil
}

// holds tells whether obj carries one of the reconciler's finalizers.
func (w *Writer[T]) holds(obj T) bool {
	return slices.ContainsFunc(w.finalizers, func(name string) bool { return controllerutil.ContainsFinalizer(obj, name) })
}

// writeStatus writes the status when it changed, unless the object is being
// deleted and none of the reconciler's finalizers is left.
func (w *Writer[T]) writeStatus(ctx context.Context, base, obj T) error {
	if !obj.GetDeletionTimestamp().IsZero() && !w.holds(obj) {
		return nil
	}
	_, _, baseStatus := w.fields(base)
	_, _, objStatus := w.fields(obj)
	if equality.Semantic.DeepEqual(baseStatus, objStatus) {
		return nil
	}
	err := w.cache.Status().Patch(ctx, obj, client.MergeFrom(base))
	if client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("writing the status of %s %s: %w", kindOf(obj), klog.KObj(obj), err)
	}
	if err == nil {
		w.record(obj)
	}
	return nil
}

// setStatus sets dst's status to src's (src is not used after).
func (w *Writer[T]) setStatus(dst, src T) {
	_, _, dstStatus := w.fields(dst)
	_, _, srcStatus := w.fields(src)
	reflect.ValueOf(dstStatus).Elem().Set(reflect.ValueOf(srcStatus).Elem())
}

func (w *Writer[T]) record(obj client.Object) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.versions[client.ObjectKeyFromObject(obj)] = obj.GetResourceVersion()
}

func (w *Writer[T]) forget(key client.ObjectKey) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.versions, key)
}

// unseen reports whether the cached obj may predate this Writer's last write
// of it, and forgets that write: the caller reads the object live.
func (w *Writer[T]) unseen(obj client.Object) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	key := client.ObjectKeyFromObject(obj)
	version, ok := w.versions[key]
	delete(w.versions, key)
	return ok && version != obj.GetResourceVersion()
}

// kindOf names obj's kind for errors: its Go type's name, which is the kind
// of every API object.
func kindOf(obj client.Object) string {
	return reflect.TypeOf(obj).Elem().Name()
}
