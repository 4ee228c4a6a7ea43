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

// The KubernetesMachine reconciler: its watches, scope, steps and deletion.

package controller

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util"
	"sigs.k8s.io/cluster-api/util/annotations"
	"sigs.k8s.io/cluster-api/util/predicates"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/internal/hosting"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/internal/nodepod"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/internal/writer"
)

// KubernetesMachineReconciler runs one node Pod per KubernetesMachine on the
// hosting cluster and reports its provisioning and bootstrap.
type KubernetesMachineReconciler struct {
	Client client.Client
	// APIReader reads a machine live when the cache may not have this
	// controller's last write of it yet.
	APIReader   client.Reader
	Hosting     *hosting.Registry
	Recorder    events.EventRecorder
	WatchFilter string

	writer *writer.Writer[*infrav1.KubernetesMachine]
}

// machineScope is what one reconcile of a KubernetesMachine works on.
type machineScope struct {
	km *infrav1.KubernetesMachine
	// base is km as stored: what the write at the end of the reconcile
	// compares with.
	base    *infrav1.KubernetesMachine
	machine *clusterv1.Machine
	cluster *clusterv1.Cluster
	kc      *infrav1.KubernetesCluster
	hosting *hosting.Cluster
	node    nodepod.Node
	pod     *corev1.Pod
	// waiting stops the chain of steps without an error or a requeue: an event
	// (a Machine, Cluster or Pod change) brings the next reconcile.
	waiting bool
}

// SetupWithManager registers the controller; hosting Pods on the management
// cluster and on every remote hosting cluster wake their KubernetesMachine.
func (r *KubernetesMachineReconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, options controller.Options) error {
	log := ctrl.LoggerFrom(ctx)
	r.writer = writer.New(r.Client, r.APIReader, machineFinalizers.names(),
		func(obj *infrav1.KubernetesMachine) (*metav1.ObjectMeta, any, any) {
			return &obj.ObjectMeta, &obj.Spec, &obj.Status
		})
	podToMachine := handler.EnqueueRequestsFromMapFunc(podToKubernetesMachine)
	b := ctrl.NewControllerManagedBy(mgr).
		For(&infrav1.KubernetesMachine{}).
		WithOptions(options).
		WithEventFilter(predicates.ResourceHasFilterLabel(mgr.GetScheme(), log, r.WatchFilter)).
		Watches(&clusterv1.Machine{},
			handler.EnqueueRequestsFromMapFunc(util.MachineToInfrastructureMapFunc(infrav1.GroupVersion.WithKind("KubernetesMachine")))).
		Watches(&clusterv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(r.clusterToKubernetesMachines),
			builder.WithPredicates(predicates.ClusterPausedTransitionsOrInfrastructureProvisioned(mgr.GetScheme(), log))).
		Watches(&infrav1.KubernetesCluster{}, handler.EnqueueRequestsFromMapFunc(r.kubernetesClusterToKubernetesMachines),
			builder.WithPredicates(hostingChanged()))
	return buildWatchingHostingObjects(b, r, r.Hosting, nodepod.MachineScoped, podToMachine)
}

// podToKubernetesMachine maps a node Pod, or its bootstrap Secret or claim, to
// the KubernetesMachine it belongs to, by the machine's full name (a label
// holds a long name only shortened).
func podToKubernetesMachine(_ context.Context, obj client.Object) []reconcile.Request {
	owner := nodepod.OwnerOf(obj)
	if owner.Namespace == "" || owner.Machine == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: owner.Namespace, Name: owner.Machine}}}
}

func (r *KubernetesMachineReconciler) clusterToKubernetesMachines(ctx context.Context, obj client.Object) []reconcile.Request {
	return requestsForClusterLabel(ctx, r.Client, &infrav1.KubernetesMachineList{}, obj.GetNamespace(), obj.GetName())
}

// kubernetesClusterToKubernetesMachines wakes a cluster's machines: they retry
// at once when their hosting cluster is back, instead of after their backoff,
// and go on once the cluster has its owner ID.
func (r *KubernetesMachineReconciler) kubernetesClusterToKubernetesMachines(ctx context.Context, obj client.Object) []reconcile.Request {
	kc, ok := obj.(*infrav1.KubernetesCluster)
	if !ok {
		return nil
	}
	return requestsForClusterLabel(ctx, r.Client, &infrav1.KubernetesMachineList{}, kc.Namespace, clusterNameOf(kc))
}

// hostingChanged passes the KubernetesCluster updates its machines act on:
// whether its hosting cluster is reachable, and its owner ID appearing.
func hostingChanged() predicate.Funcs {
	return predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return false },
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
		UpdateFunc: func(e event.UpdateEvent) bool {
			reachable := func(obj client.Object) metav1.ConditionStatus {
				kc, ok := obj.(*infrav1.KubernetesCluster)
				if !ok {
					return ""
				}
				if c := meta.FindStatusCondition(kc.Status.Conditions, infrav1.KubernetesClusterHostingClusterReachableCondition); c != nil {
					return c.Status
				}
				return ""
			}
			ownerID := func(obj client.Object) string { return obj.GetAnnotations()[infrav1.OwnerIDAnnotation] }
			return reachable(e.ObjectOld) != reachable(e.ObjectNew) || ownerID(e.ObjectOld) != ownerID(e.ObjectNew)
		},
	}
}

// Reconcile brings one KubernetesMachine closer to its desired state.
func (r *KubernetesMachineReconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, reterr error) {
	km := &infrav1.KubernetesMachine{}
	if err := r.writer.Get(ctx, req.NamespacedName, km); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if annotations.IsExternallyManaged(km) {
		return ctrl.Result{}, nil
	}
	s, err := r.newMachineScope(ctx, km)
	if err != nil || s == nil {
		return ctrl.Result{}, err
	}
	ctx = withOwnerKeys(ctx, s.cluster, s.machine)
	s.base = km.DeepCopy()
	if isPaused, err := reconcilePaused(ctx, r.Client, s.cluster, km); err != nil || isPaused {
		return ctrl.Result{}, err
	}
	defer func() {
		if err := r.writeKubernetesMachine(ctx, s); err != nil {
			reterr = errors.Join(reterr, err)
		}
	}()
	if !km.DeletionTimestamp.IsZero() {
		return r.reconcileDelete(ctx, s)
	}
	return r.reconcileNormal(ctx, s)
}

// newMachineScope finds the owner Machine and Cluster; it returns nil (and logs)
// while the owner Machine is not set yet.
func (r *KubernetesMachineReconciler) newMachineScope(ctx context.Context, km *infrav1.KubernetesMachine) (*machineScope, error) {
	log := ctrl.LoggerFrom(ctx)
	machine, err := util.GetOwnerMachine(ctx, r.Client, km.ObjectMeta)
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, err
	}
	if machine == nil && km.DeletionTimestamp.IsZero() {
		log.Info("Waiting for the Machine controller to set the owner reference")
		return nil, nil
	}
	cluster, err := util.GetClusterFromMetadata(ctx, r.Client, km.ObjectMeta)
	if err != nil && km.DeletionTimestamp.IsZero() {
		log.Info("Waiting for the KubernetesMachine's Cluster", "reason", err.Error())
		return nil, nil
	}
	return &machineScope{km: km, machine: machine, cluster: cluster}, nil
}

func (r *KubernetesMachineReconciler) reconcileNormal(ctx context.Context, s *machineScope) (ctrl.Result, error) {
	steps := []func(context.Context, *machineScope) (ctrl.Result, error){
		r.waitForClusterInfrastructure,
		r.resolveHostingCluster,
		r.waitForBootstrapData,
		r.persistFinalizerAndProviderID,
		r.reconcileBootstrapSecret,
		r.reconcileClaims,
		r.reconcilePod,
		r.reconcileProvisioned,
		r.reconcileBootstrapStatus,
	}
	for _, step := range steps {
		if res, err := step(ctx, s); err != nil || !res.IsZero() || s.waiting {
			return res, err
		}
	}
	return ctrl.Result{}, nil
}

// reconcileDelete removes the node Pod, then its bootstrap Secret and claims,
// then the finalizer; it never leaves hosting objects behind.
func (r *KubernetesMachineReconciler) reconcileDelete(ctx context.Context, s *machineScope) (ctrl.Result, error) {
	if res, err := r.resolveHostingCluster(ctx, s); err != nil || !res.IsZero() {
		return res, err
	}
	if s.hosting == nil {
		// Only a KubernetesCluster whose finalizer was removed by hand can be gone
		// before its machines; nothing tells where the node Pod ran.
		r.Recorder.Eventf(s.km, nil, corev1.EventTypeWarning, infrav1.KubernetesMachineHostingClusterUnknownEventReason, "Delete",
			"The KubernetesCluster is gone; node Pod %s may be left on its hosting cluster", nodepod.PodName(s.km.Name))
		machineFinalizers.remove(s.km)
		return ctrl.Result{}, nil
	}
	gone, err := r.deleteHostingObjects(ctx, s)
	if err != nil || !gone {
		return ctrl.Result{}, err
	}
	machineFinalizers.remove(s.km)
	r.Recorder.Eventf(s.km, nil, corev1.EventTypeNormal, infrav1.KubernetesMachineNodePodDeletedEventReason, "Delete", "Deleted node Pod %s/%s and its bootstrap Secret and claims", s.hosting.Namespace, nodepod.PodName(s.km.Name))
	return ctrl.Result{}, nil
}
