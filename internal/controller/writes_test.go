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

package controller_test

import (
	"context"
	"sync"

	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
)

// writeCounter counts the management cluster writes a controller makes per
// KubernetesMachine, to measure what one machine costs.
type writeCounter struct {
	mu     sync.Mutex
	counts map[client.ObjectKey]int
}

func (w *writeCounter) wrap(c client.Client) client.Client {
	w.counts = map[client.ObjectKey]int{}
	return &countingClient{Client: c, counter: w}
}

func (w *writeCounter) add(obj client.Object) {
	if _, ok := obj.(*infrav1.KubernetesMachine); !ok {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.counts[client.ObjectKeyFromObject(obj)]++
}

// of returns the writes counted for a KubernetesMachine.
func (w *writeCounter) of(key client.ObjectKey) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.counts[key]
}

type countingClient struct {
	client.Client
	counter *writeCounter
}

func (c *countingClient) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	c.counter.add(obj)
	return c.Client.Update(ctx, obj, opts...)
}

func (c *countingClient) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	c.counter.add(obj)
	return c.Client.Patch(ctx, obj, patch, opts...)
}

func (c *countingClient) Status() client.SubResourceWriter {
	return &countingStatusWriter{SubResourceWriter: c.Client.Status(), counter: c.counter}
}

type countingStatusWriter struct {
	client.SubResourceWriter
	counter *writeCounter
}

func (c *countingStatusWriter) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	c.counter.add(obj)
	return c.SubResourceWriter.Update(ctx, obj, opts...)
}

func (c *countingStatusWriter) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	c.counter.add(obj)
	return c.SubResourceWriter.Patch(ctx, obj, patch, opts...)
}

// reconcileCounter counts the reconciles of each KubernetesCluster: every
// reconcile starts with one Get of it, and the reconciler reads it nowhere else.
type reconcileCounter struct {
	mu     sync.Mutex
	counts map[client.ObjectKey]int
}

func (r *reconcileCounter) wrap(c client.Client) client.Client {
	r.counts = map[client.ObjectKey]int{}
	return &gettingClient{Client: c, counter: r}
}

// of returns the reconciles counted for a KubernetesCluster.
func (r *reconcileCounter) of(key client.ObjectKey) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.counts[key]
}

type gettingClient struct {
	client.Client
	counter *reconcileCounter
}

func (c *gettingClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if _, ok := obj.(*infrav1.KubernetesCluster); ok {
		c.counter.mu.Lock()
		c.counter.counts[key]++
		c.counter.mu.Unlock()
	}
	return c.Client.Get(ctx, key, obj, opts...)
}
