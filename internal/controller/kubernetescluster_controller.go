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

// The KubernetesCluster reconciler: its watches, identity (finalizer and owner ID), steps and deletion.

package controller

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util"
	"sigs.k8s.io/cluster-api/util/annotations"
	"sigs.k8s.io/cluster-api/util/predicates"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/internal/hosting"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/internal/nodepod"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/internal/writer"
)

// KubernetesClusterReconciler keeps a workload cluster's control-plane Service on
// its hosting cluster and fills the cluster's endpoint and failure domains.
type KubernetesClusterReconciler struct {
	Client      client.Client
	APIReader   client.Reader
	Hosting     *hosting.Registry
	Recorder    events.EventRecorder
	WatchFilter string

	writer *writer.Writer[*infrav1.KubernetesCluster]
}

// clusterScope is what one reconcile of a KubernetesCluster works on.
type clusterScope struct {
	kc      *infrav1.KubernetesCluster
	cluster *clusterv1.Cluster
	hosting *hosting.Cluster
	nodes   []corev1.Node // the hosting nodes, listed at most once per reconcile
}

// SetupWithManager registers the controller and its watches, including watches
// on every remote hosting cluster.
func (r *KubernetesClusterReconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, options controller.Options) error {
	log := ctrl.LoggerFrom(ctx)
	r.writer = writer.New(r.Client, r.APIReader, clusterFinalizers.names(),
		func(obj *infrav1.KubernetesCluster) (*metav1.ObjectMeta, any, any) {
			return &obj.ObjectMeta, &obj.Spec, &obj.Status
		})
	if err := indexKubernetesClusterByHostingSecret(ctx, mgr); err != nil {
		return err
	}
	toCluster := handler.EnqueueRequestsFromMapFunc(r.hostingObjectToKubernetesCluster)
	b := ctrl.NewControllerManagedBy(mgr).
		For(&infrav1.KubernetesCluster{}).
		WithOptions(options).
		WithEventFilter(predicates.ResourceHasFilterLabel(mgr.GetScheme(), log, r.WatchFilter)).
		Watches(&clusterv1.Cluster{},
			handler.EnqueueRequestsFromMapFunc(util.ClusterToInfrastructureMapFunc(ctx, infrav1.GroupVersion.WithKind("KubernetesCluster"), mgr.GetClient(), &infrav1.KubernetesCluster{})),
			builder.WithPredicates(predicates.ClusterPausedTransitions(mgr.GetScheme(), log))).
		Watches(&infrav1.KubernetesMachine{}, handler.EnqueueRequestsFromMapFunc(r.machineToKubernetesCluster)).
		Watches(&clusterv1.Machine{}, handler.EnqueueRequestsFromMapFunc(r.machineToKubernetesClusterByCount),
			builder.WithPredicates(machineCountChanged())).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.kubeconfigToKubernetesClusters)).
		Watches(&corev1.Node{}, handler.EnqueueRequestsFromMapFunc(r.nodeToLocallyHostedClusters),
			builder.WithPredicates(nodeTopologyChanged())).
		WatchesRawSource(source.Channel(r.Hosting.HealthEvents(), &handler.EnqueueRequestForObject{}))
	return buildWatchingHostingObjects(b, r, r.Hosting, nodepod.ClusterScoped, toCluster)
}

// Reconcile brings one KubernetesCluster closer to its desired state.
func (r *KubernetesClusterReconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, reterr error) {
	log := ctrl.LoggerFrom(ctx)
	kc := &infrav1.KubernetesCluster{}
	if err := r.writer.Get(ctx, req.NamespacedName, kc); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	cluster, err := util.GetOwnerCluster(ctx, r.Client, kc.ObjectMeta)
	deletingWithoutCluster := apierrors.IsNotFound(err) && !kc.DeletionTimestamp.IsZero()
	if err != nil && !deletingWithoutCluster {
		return ctrl.Result{}, err
	}
	if cluster == nil && kc.DeletionTimestamp.IsZero() {
		log.Info("Waiting for the Cluster controller to set the owner reference")
		return ctrl.Result{}, nil
	}
	ctx = withOwnerKeys(ctx, cluster, nil)
	if annotations.IsExternallyManaged(kc) {
		log.V(4).Info("Skipping an externally managed KubernetesCluster")
		return ctrl.Result{}, nil
	}
	if kc.DeletionTimestamp.IsZero() && !isPaused(cluster, kc) {
		if err := r.persistIdentity(ctx, kc); err != nil {
			return ctrl.Result{}, err
		}
	}
	base := kc.DeepCopy()
	if isPaused, err := reconcilePaused(ctx, r.Client, cluster, kc); err != nil || isPaused {
		return ctrl.Result{}, err
	}
	defer func() {
		if err := r.writeKubernetesCluster(ctx, base, kc); err != nil {
			reterr = errors.Join(reterr, err)
		}
	}()
	s := &clusterScope{kc: kc, cluster: cluster}
	if !kc.DeletionTimestamp.IsZero() {
		return r.reconcileDelete(ctx, s)
	}
	return r.reconcileNormal(ctx, s)
}

// persistIdentity writes the finalizer and the owner ID (a random ID every
// hosting object of the cluster and its machines is labelled with) in one
// write, before anything exists on the hosting cluster: a manager that
// crashes after creating a hosting object never loses track of it, and never
// finds it labelled with an ID it has not kept. The ID moves with the object
// under clusterctl move.
func (r *KubernetesClusterReconciler) persistIdentity(ctx context.Context, kc *infrav1.KubernetesCluster) error {
	if clusterFinalizers.held(kc) && kc.Annotations[infrav1.OwnerIDAnnotation] != "" {
		return nil
	}
	base := kc.DeepCopy()
	clusterFinalizers.add(kc)
	if kc.Annotations[infrav1.OwnerIDAnnotation] == "" {
		id, err := newOwnerID()
		if err != nil {
			return err
		}
		annotations.AddAnnotations(kc, map[string]string{infrav1.OwnerIDAnnotation: id})
	}
	_, err := r.writer.Persist(ctx, base, kc)
	return err
}

// newOwnerID is 64 random bits in hex: unique among the clusters that may
// ever share a hosting namespace.
func newOwnerID() (string, error) {
	id := make([]byte, 8)
	if _, err := rand.Read(id); err != nil {
		return "", fmt.Errorf("making an owner ID: %w", err)
	}
	return hex.EncodeToString(id), nil
}

// writeKubernetesCluster sets the Ready summary and writes what the reconcile
// changed since base (internal/writer: metadata and spec in one patch, the
// status in another, nothing when nothing changed). A reconcile that started
// from a cached copy older than the removal of the finalizer finds the cluster
// gone: that is the end of a normal deletion, not an error.
func (r *KubernetesClusterReconciler) writeKubernetesCluster(ctx context.Context, base, kc *infrav1.KubernetesCluster) error {
	if err := setReadySummary(kc,
		infrav1.KubernetesClusterHostingClusterReachableCondition,
		infrav1.KubernetesClusterLoadBalancerAvailableCondition,
		infrav1.KubernetesClusterHostingPoliciesReadyCondition,
	); err != nil {
		return err
	}
	return r.writer.Write(ctx, base, kc)
}

func (r *KubernetesClusterReconciler) reconcileNormal(ctx context.Context, s *clusterScope) (ctrl.Result, error) {
	steps := []func(context.Context, *clusterScope) (ctrl.Result, error){
		r.connectHostingCluster,
		r.reconcileService,
		r.reconcileFailureDomains,
		r.reconcilePolicies,
	}
	for _, step := range steps {
		if res, err := step(ctx, s); err != nil || !res.IsZero() {
			return res, err
		}
	}
	return ctrl.Result{}, nil
}

// reconcileDelete removes the Service once no KubernetesMachine of the cluster
// is left, then releases the hosting cluster and the finalizer.
func (r *KubernetesClusterReconciler) reconcileDelete(ctx context.Context, s *clusterScope) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	machines, err := r.machinesOf(ctx, s.kc)
	if err != nil {
		return ctrl.Result{}, err
	}
	if len(machines) > 0 {
		log.Info("Waiting for the cluster's KubernetesMachines to be deleted", "count", len(machines))
		return ctrl.Result{}, nil
	}
	if res, err := r.connectHostingCluster(ctx, s); err != nil || !res.IsZero() {
		return res, err
	}
	if err := r.deleteClusterObjects(ctx, s); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.releaseKubeconfigSecret(ctx, s.kc); err != nil {
		return ctrl.Result{}, err
	}
	r.Hosting.Release(s.kc)
	clusterFinalizers.remove(s.kc)
	log.Info("Deleted the hosting objects of the KubernetesCluster")
	return ctrl.Result{}, nil
}

// machinesOf lists the KubernetesMachines of the cluster the KubernetesCluster
// belongs to (Cluster API labels them with the cluster name).
func (r *KubernetesClusterReconciler) machinesOf(ctx context.Context, kc *infrav1.KubernetesCluster) ([]infrav1.KubernetesMachine, error) {
	clusterName := kc.Labels[clusterv1.ClusterNameLabel]
	if clusterName == "" {
		return nil, nil
	}
	list := &infrav1.KubernetesMachineList{}
	if err := r.Client.List(ctx, list, client.InNamespace(kc.Namespace), client.MatchingLabels{clusterv1.ClusterNameLabel: clusterName}); err != nil {
		return nil, fmt.Errorf("listing KubernetesMachines of %s: %w", klog.KObj(kc), err)
	}
	return list.Items, nil
}
