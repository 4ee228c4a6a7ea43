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

// Setup: the one wiring of the provider's controllers, for cmd/main.go and the tests.

package controller

import (
	"context"
	"fmt"

	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/internal/hosting"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/internal/nodepod"
)

// RecorderName is the name the provider's events are reported under.
const RecorderName = "kubernetes-provider"

// DefaultConcurrency is the manager's default number of objects of each kind
// reconciled at once (its --concurrency).
const DefaultConcurrency = 10

// usePriorityQueue is off: controller-runtime v0.24.1's priority queue (its
// default) can deadlock when the manager stops, if an item becomes ready
// while the workers leave (kubernetes-sigs/controller-runtime#3538, fixed in
// v0.25, which needs the Kubernetes v0.37 libraries that Cluster API v1.14
// does not take). When it does, the manager waits out its whole grace period
// and exits with an error; the controller suite's shutdown hung so in one
// run of six on a loaded machine. The classic rate-limited queue has no such
// race.
const usePriorityQueue = false

// Options configures Setup.
type Options struct {
	// Reconcile is given to both reconcilers: MaxConcurrentReconciles, and
	// SkipNameValidation for tests that run several managers in one process.
	Reconcile controller.Options
	// HostingQPS and HostingBurst limit each remote hosting cluster's client.
	HostingQPS   float32
	HostingBurst int
	// WatchFilter, when set, is the cluster.x-k8s.io/watch-filter label value
	// of the only objects reconciled.
	WatchFilter string
	// SkipCRDMigrationPhases are the CRD migrator's phases to skip.
	SkipCRDMigrationPhases []string
	// ClusterClient and MachineClient, when set, wrap the manager's client for
	// one reconciler: tests count that reconciler's requests with them.
	ClusterClient, MachineClient func(client.Client) client.Client
}

// Setup registers the hosting cluster registry, both reconcilers and the CRD
// migrator with mgr.
func Setup(ctx context.Context, mgr ctrl.Manager, opts Options) error {
	opts.Reconcile.UsePriorityQueue = ptr.To(usePriorityQueue)
	registry := hosting.NewRegistry(mgr, opts.HostingQPS, opts.HostingBurst)
	if err := mgr.Add(registry); err != nil {
		return err
	}
	recorder := mgr.GetEventRecorder(RecorderName)
	if err := (&KubernetesClusterReconciler{
		Client: wrap(mgr.GetClient(), opts.ClusterClient), APIReader: mgr.GetAPIReader(),
		Hosting: registry, Recorder: recorder, WatchFilter: opts.WatchFilter,
	}).SetupWithManager(ctx, mgr, opts.Reconcile); err != nil {
		return fmt.Errorf("setting up the KubernetesCluster controller: %w", err)
	}
	if err := (&KubernetesMachineReconciler{
		Client: wrap(mgr.GetClient(), opts.MachineClient), APIReader: mgr.GetAPIReader(),
		Hosting: registry, Recorder: recorder, WatchFilter: opts.WatchFilter,
	}).SetupWithManager(ctx, mgr, opts.Reconcile); err != nil {
		return fmt.Errorf("setting up the KubernetesMachine controller: %w", err)
	}
	// One at a time: a migration rewrites every object of a kind.
	migration := controller.Options{MaxConcurrentReconciles: 1, SkipNameValidation: opts.Reconcile.SkipNameValidation,
		UsePriorityQueue: opts.Reconcile.UsePriorityQueue}
	if err := NewCRDMigrator(mgr.GetClient(), mgr.GetAPIReader(), opts.SkipCRDMigrationPhases).
		SetupWithManager(ctx, mgr, migration); err != nil {
		return fmt.Errorf("setting up the CRD migrator: %w", err)
	}
	return nil
}

// buildWatchingHostingObjects builds the controller b describes, watching every
// hosting-object kind of scope with toOwner: on the management cluster now,
// and on each remote hosting cluster once the registry connects to it.
func buildWatchingHostingObjects(b *builder.Builder, r reconcile.Reconciler, registry *hosting.Registry,
	scope nodepod.Scope, toOwner handler.EventHandler) error {
	for _, obj := range nodepod.Objects(scope) {
		b = b.Watches(obj, toOwner)
	}
	c, err := b.Build(r)
	if err != nil {
		return err
	}
	return registry.AddWatch(func(remote cache.Cache) error {
		for _, obj := range nodepod.Objects(scope) {
			if err := c.Watch(source.Kind(remote, obj, toOwner)); err != nil {
				return err
			}
		}
		return nil
	})
}

func wrap(c client.Client, with func(client.Client) client.Client) client.Client {
	if with == nil {
		return c
	}
	return with(c)
}
