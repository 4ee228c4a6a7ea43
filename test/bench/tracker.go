//go:build bench

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

package bench

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
)

// machineTracker watches the KubernetesMachines and notes when each was
// created (bootstrap data ready) and first seen provisioned.
type machineTracker struct {
	cache cache.Cache

	mu          sync.Mutex
	created     map[client.ObjectKey]time.Time
	provisioned map[client.ObjectKey]time.Time
}

// startMachineTracker starts an informer on KubernetesMachines.
func startMachineTracker(ctx context.Context, config *rest.Config, scheme *kruntime.Scheme) (*machineTracker, error) {
	c, err := cache.New(config, cache.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("creating the KubernetesMachine cache: %w", err)
	}
	t := &machineTracker{cache: c, created: map[client.ObjectKey]time.Time{}, provisioned: map[client.ObjectKey]time.Time{}}
	informer, err := c.GetInformer(ctx, &infrav1.KubernetesMachine{})
	if err != nil {
		return nil, fmt.Errorf("watching KubernetesMachines: %w", err)
	}
	_, err = informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    t.observe,
		UpdateFunc: func(_, obj any) { t.observe(obj) },
	})
	if err != nil {
		return nil, fmt.Errorf("watching KubernetesMachines: %w", err)
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		return nil, errors.New("the KubernetesMachine cache did not sync")
	}
	return t, nil
}

// observe notes the first time a KubernetesMachine is seen provisioned.
func (t *machineTracker) observe(obj any) {
	km, ok := obj.(*infrav1.KubernetesMachine)
	if !ok || !ptr.Deref(km.Status.Initialization.Provisioned, false) {
		return
	}
	now := time.Now()
	key := client.ObjectKeyFromObject(km)
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, seen := t.provisioned[key]; !seen {
		t.provisioned[key] = now
	}
}

// markCreated notes that the machine's KubernetesMachine was created.
func (t *machineTracker) markCreated(key client.ObjectKey) {
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.created[key] = now
}

// provisionedCount is the number of machines seen provisioned, and when the
// last of them was.
func (t *machineTracker) provisionedCount() (int, time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var last time.Time
	for _, at := range t.provisioned {
		if at.After(last) {
			last = at
		}
	}
	return len(t.provisioned), last
}

// waitProvisioned waits until n machines are provisioned; check fails the wait
// early (the manager exited, a machine got two Pods).
func (t *machineTracker) waitProvisioned(ctx context.Context, n int, timeout time.Duration, check func() error) (time.Time, error) {
	var last time.Time
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		if err := check(); err != nil {
			return false, err
		}
		var count int
		count, last = t.provisionedCount()
		return count >= n, nil
	})
	return last, err
}

// latencies are the times from creation to provisioned.
func (t *machineTracker) latencies() []time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	var latencies []time.Duration
	for key, provisioned := range t.provisioned {
		if created, ok := t.created[key]; ok {
			latencies = append(latencies, provisioned.Sub(created))
		}
	}
	return latencies
}

// notProvisioned names up to ten of the machines not seen provisioned.
func (t *machineTracker) notProvisioned(machines []benchMachine) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var names []string
	for _, m := range machines {
		if _, ok := t.provisioned[m.key()]; !ok {
			names = append(names, m.key().String())
		}
	}
	sort.Strings(names)
	return names[:min(len(names), 10)]
}

// remaining is the number of KubernetesMachines in the cache.
func (t *machineTracker) remaining(ctx context.Context) (int, error) {
	list := &infrav1.KubernetesMachineList{}
	if err := t.cache.List(ctx, list); err != nil {
		return 0, err
	}
	return len(list.Items), nil
}

// waitGone waits until no KubernetesMachine is left and returns when that was seen.
func (t *machineTracker) waitGone(ctx context.Context, timeout time.Duration, check func() error) (time.Time, error) {
	var left int
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		if err := check(); err != nil {
			return false, err
		}
		var err error
		left, err = t.remaining(ctx)
		return err == nil && left == 0, err
	})
	if err != nil {
		return time.Time{}, fmt.Errorf("waiting for the KubernetesMachines to be deleted (%d left): %w", left, err)
	}
	return time.Now(), nil
}
