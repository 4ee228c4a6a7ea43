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

// Package hosting gives the controllers a client for the cluster that runs a
// workload cluster's node Pods: the management cluster itself, or a remote cluster
// reached through a kubeconfig Secret in the KubernetesCluster's namespace. One
// cached client per remote cluster is built once, rebuilt when the kubeconfig
// changes, health-checked, and stopped when no KubernetesCluster uses it.
package hosting

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/event"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/internal/nodepod"
)

var (
	// ErrInvalidKubeconfig means the kubeconfig Secret is missing, lacks the key, or
	// does not parse: the user must fix it, retrying alone will not help.
	ErrInvalidKubeconfig = errors.New("invalid hosting kubeconfig")

	// ErrUnreachable means the hosting cluster did not answer.
	ErrUnreachable = errors.New("hosting cluster unreachable")
)

// KubeconfigLabel marks Secrets that hold a hosting kubeconfig, so the provider can
// watch them and clusterctl move carries them (with clusterctl's move label).
const KubeconfigLabel = "infrastructure.cluster.x-k8s.io/hosting-kubeconfig"

// Cluster is where a workload cluster's node objects live.
type Cluster struct {
	// Client reads the provider's objects from a cache and writes directly.
	Client client.Client
	// Reader reads without a cache, e.g. Pod logs and objects outside the cache.
	Reader client.Reader
	// Config reaches the cluster's API server (for subresources such as pods/log).
	Config *rest.Config
	// Namespace receives the node objects.
	Namespace string
	// Description names the hosting cluster in conditions and logs.
	Description string
}

// Timings of remote clusters; variables so tests can shorten them.
var (
	// CacheSyncTimeout bounds how long a new remote cache may take to sync.
	CacheSyncTimeout = 20 * time.Second
	// HealthCheckInterval is how often a remote cluster's /readyz is probed.
	HealthCheckInterval = 10 * time.Second
	// RequestTimeout bounds each request to a remote cluster.
	RequestTimeout = 10 * time.Second
)

// UserAgent is the user agent of the provider's requests to clusters other
// than the management cluster: remote hosting clusters and workload clusters.
const UserAgent = "cluster-api-provider-kubernetes-manager"

// Registry hands out hosting clusters. It is a manager Runnable: remote caches
// live as long as the manager.
type Registry struct {
	management Cluster
	scheme     *runtime.Scheme
	qps        float32
	burst      int

	mu       sync.Mutex
	ctx      context.Context
	remotes  map[types.NamespacedName]*remote
	watchers []func(cache.Cache) error
	events   chan event.GenericEvent
}

// NewRegistry returns a Registry whose default hosting cluster is the management
// cluster reached by the manager's client.
func NewRegistry(mgr ctrl.Manager, qps float32, burst int) *Registry {
	return &Registry{
		management: Cluster{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Config: mgr.GetConfig(), Description: "the management cluster"},
		scheme:     mgr.GetScheme(),
		qps:        qps,
		burst:      burst,
		remotes:    map[types.NamespacedName]*remote{},
		events:     make(chan event.GenericEvent, 1024),
	}
}

// Start keeps remote clusters running until the manager stops.
func (r *Registry) Start(ctx context.Context) error {
	r.mu.Lock()
	r.ctx = ctx
	r.mu.Unlock()
	<-ctx.Done()
	r.mu.Lock()
	defer r.mu.Unlock()
	for key, rc := range r.remotes {
		rc.stop()
		delete(r.remotes, key)
	}
	return nil
}

// NeedLeaderElection is false: webhooks and caches run on every replica.
func (*Registry) NeedLeaderElection() bool { return false }

// AddWatch registers a function that adds watches to every remote cache, now and
// when one is built later; controllers use it to hear about hosting Pods and Services.
func (r *Registry) AddWatch(watch func(cache.Cache) error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.watchers = append(r.watchers, watch)
	for _, rc := range r.remotes {
		if err := watch(rc.cluster.GetCache()); err != nil {
			return err
		}
	}
	return nil
}

// RunningRemotes tells how many remote hosting clusters have a running client.
func (r *Registry) RunningRemotes() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.remotes)
}

// HealthEvents carries a KubernetesCluster whenever its hosting cluster's health changes.
func (r *Registry) HealthEvents() <-chan event.GenericEvent { return r.events }

// For returns the hosting cluster of a KubernetesCluster.
func (r *Registry) For(ctx context.Context, kc *infrav1.KubernetesCluster) (*Cluster, error) {
	if kc.Spec.HostingCluster == nil {
		management := r.management
		management.Namespace = kc.Namespace
		return &management, nil
	}
	kubeconfig, err := r.readKubeconfig(ctx, kc)
	if err != nil {
		return nil, err
	}
	rc, err := r.remoteFor(kc, kubeconfig)
	if err != nil {
		return nil, err
	}
	if err := rc.healthy(); err != nil {
		return nil, err
	}
	return rc.hostingCluster(kc.Spec.HostingCluster.Namespace), nil
}

// Release tells the Registry a KubernetesCluster is gone; a remote cluster no
// KubernetesCluster uses any more is stopped.
func (r *Registry) Release(kc *infrav1.KubernetesCluster) {
	r.mu.Lock()
	defer r.mu.Unlock()
	user := client.ObjectKeyFromObject(kc)
	for key, rc := range r.remotes {
		delete(rc.users, user)
		if len(rc.users) == 0 {
			rc.stop()
			delete(r.remotes, key)
		}
	}
}

// readKubeconfig reads the kubeconfig bytes from the Secret the cluster names,
// through the cache when the Secret is labelled, else straight from the API.
func (r *Registry) readKubeconfig(ctx context.Context, kc *infrav1.KubernetesCluster) ([]byte, error) {
	ref := kc.Spec.HostingCluster
	key := types.NamespacedName{Namespace: kc.Namespace, Name: ref.SecretName}
	secret := &corev1.Secret{}
	err := r.management.Client.Get(ctx, key, secret)
	if apierrors.IsNotFound(err) {
		err = r.management.Reader.Get(ctx, key, secret)
	}
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("%w: Secret %s not found", ErrInvalidKubeconfig, key)
	}
	if err != nil {
		return nil, fmt.Errorf("reading Secret %s: %w", key, err)
	}
	data, ok := secret.Data[ref.Key]
	if !ok || len(data) == 0 {
		return nil, fmt.Errorf("%w: Secret %s has no key %q", ErrInvalidKubeconfig, key, ref.Key)
	}
	return data, nil
}

// remoteFor returns the running remote cluster for the kubeconfig, building it
// (and stopping an outdated one) when needed.
func (r *Registry) remoteFor(kc *infrav1.KubernetesCluster, kubeconfig []byte) (*remote, error) {
	key := types.NamespacedName{Namespace: kc.Namespace, Name: kc.Spec.HostingCluster.SecretName}
	hash := sha256.Sum256(kubeconfig)
	r.mu.Lock()
	defer r.mu.Unlock()
	if rc, ok := r.remotes[key]; ok {
		if rc.hash == hash {
			rc.users[client.ObjectKeyFromObject(kc)] = struct{}{}
			return rc, nil
		}
		rc.stop()
		delete(r.remotes, key)
	}
	if r.ctx == nil {
		return nil, errors.New("the hosting cluster registry is not started yet")
	}
	rc, err := r.startRemote(key, kubeconfig)
	if err != nil {
		return nil, err
	}
	rc.hash = hash
	rc.users[client.ObjectKeyFromObject(kc)] = struct{}{}
	r.remotes[key] = rc
	return rc, nil
}

// startRemote builds a cached client for a remote cluster, waits for its cache
// and adds the controllers' watches. It holds r.mu.
func (r *Registry) startRemote(key types.NamespacedName, kubeconfig []byte) (*remote, error) {
	clientConfig, err := clientcmd.NewClientConfigFromBytes(kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("%w: Secret %s: %v", ErrInvalidKubeconfig, key, err)
	}
	config, err := clientConfig.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("%w: Secret %s: %v", ErrInvalidKubeconfig, key, err)
	}
	defaultNamespace, _, err := clientConfig.Namespace()
	if err != nil || defaultNamespace == "" {
		defaultNamespace = corev1.NamespaceDefault
	}
	config.QPS, config.Burst, config.Timeout = r.qps, r.burst, RequestTimeout
	config.UserAgent = UserAgent
	remoteCluster, err := cluster.New(config, func(o *cluster.Options) {
		o.Scheme = r.scheme
		o.Cache = ManagedObjectsCache()
	})
	if err != nil {
		return nil, fmt.Errorf("%w: the hosting cluster of Secret %s: %v", ErrUnreachable, key, err)
	}
	ctx, cancel := context.WithCancel(r.ctx)
	rc := &remote{
		cluster: remoteCluster, config: config, cancel: cancel, defaultNamespace: defaultNamespace,
		users: map[types.NamespacedName]struct{}{}, description: fmt.Sprintf("the hosting cluster of Secret %s", key),
	}
	go func() { _ = remoteCluster.Start(ctx) }()
	if err := r.waitForCache(ctx, rc); err != nil {
		cancel()
		return nil, err
	}
	for _, watch := range r.watchers {
		if err := watch(remoteCluster.GetCache()); err != nil {
			cancel()
			return nil, fmt.Errorf("watching %s: %w", rc.description, err)
		}
	}
	go rc.checkHealth(ctx, func() { r.notify(rc) })
	return rc, nil
}

func (r *Registry) waitForCache(ctx context.Context, rc *remote) error {
	syncCtx, cancel := context.WithTimeout(ctx, CacheSyncTimeout)
	defer cancel()
	// Starting the informer of every kind the cache holds up front makes a dead
	// endpoint fail here, not in a controller, and none of them is started later
	// on a cache already stopped, where a read would wait for it forever (the
	// Nodes are read, not watched).
	for obj := range ManagedObjectsCache().ByObject {
		if _, err := rc.cluster.GetCache().GetInformer(syncCtx, obj); err != nil {
			return fmt.Errorf("%w: %s: %v", ErrUnreachable, rc.description, err)
		}
	}
	if !rc.cluster.GetCache().WaitForCacheSync(syncCtx) {
		return fmt.Errorf("%w: %s did not answer within %s", ErrUnreachable, rc.description, CacheSyncTimeout)
	}
	return nil
}

// notify wakes every KubernetesCluster that uses the remote cluster.
func (r *Registry) notify(rc *remote) {
	r.mu.Lock()
	users := slices.Collect(maps.Keys(rc.users))
	r.mu.Unlock()
	for _, user := range users {
		kc := &infrav1.KubernetesCluster{}
		kc.Namespace, kc.Name = user.Namespace, user.Name
		select {
		case r.events <- event.GenericEvent{Object: kc}:
		default:
			ctrl.Log.WithName("hosting").Info("Dropped a health event", "KubernetesCluster", klog.KObj(kc))
		}
	}
}

// ManagedObjectsCache limits a hosting cache to the objects the provider created,
// so a shared hosting cluster's other Pods and Secrets are neither listed nor
// kept, and keeps of its Nodes, node Pods and bootstrap Secrets only what the
// provider reads (TrimNode, TrimPod, TrimSecret). No cached object keeps its
// managedFields: the provider never reads them (the CRD migrator reads live),
// and they are a large share of a small object.
func ManagedObjectsCache() cache.Options {
	selector := labels.SelectorFromSet(labels.Set{infrav1.ManagedByLabel: infrav1.ManagedByValue})
	byObject := map[client.Object]cache.ByObject{&corev1.Node{}: {Transform: TrimNode}}
	for _, obj := range nodepod.Objects() {
		byObject[obj] = cache.ByObject{Label: selector, Transform: trimmerOf(obj)}
	}
	return cache.Options{ByObject: byObject, DefaultTransform: trimDefault}
}

// ManagementCacheOptions limits the management cluster's cache: Pods, Services
// and claims the provider created, and Secrets of Cluster API clusters (bootstrap
// data, hosting kubeconfigs once labelled, and node bootstrap Secrets); no
// managedFields, as on hosting clusters, and of Machines only what the provider
// reads (TrimMachine, in the default transform: a Machine entry would need
// Cluster API's CRDs where the manager only serves webhooks).
func ManagementCacheOptions() cache.Options {
	requirement, err := labels.NewRequirement(clusterv1.ClusterNameLabel, selection.Exists, nil)
	if err != nil {
		panic(err) // a constant requirement
	}
	options := ManagedObjectsCache()
	for obj, entry := range options.ByObject {
		if _, ok := obj.(*corev1.Secret); ok {
			entry.Label = labels.NewSelector().Add(*requirement)
			options.ByObject[obj] = entry
		}
	}
	return options
}
