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

// A KubernetesMachine's node Pod and claims: creation, adoption by name, provisioning and deletion.

package controller

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/internal/nodepod"
)

const (
	// logTailLines is how much of a failed node's log a condition shows.
	logTailLines = 15
	// logReadLines is how much of the log is read to find the bootstrap's last
	// lines: systemd's shutdown after a failure prints some 40 lines.
	logReadLines = 200
	// rejectedPodRetry is how often a Pod the hosting cluster rejected (Pod
	// Security, an admission webhook, an exhausted quota) is tried again: the
	// fix (a namespace label, freed quota) happens where the provider cannot
	// watch, and one rejected request per machine every 30s costs little.
	rejectedPodRetry = 30 * time.Second
)

// createOwned creates one of the machine's objects on the hosting cluster
// (createHostingObject); a name held by another owner is a NameConflict.
func (r *KubernetesMachineReconciler) createOwned(ctx context.Context, s *machineScope, obj client.Object) error {
	existing, _ := obj.DeepCopyObject().(client.Object)
	_, err := createHostingObject(ctx, s.hosting, s.node.Owner(), obj, existing)
	if isNameConflict(err) {
		return r.reportNameConflict(s, obj)
	}
	return err
}

// reportNameConflict stops the machine on a hosting object that holds one of
// its names but belongs to another owner, or to none, and returns the error
// that retries it with backoff: the object in the way may go without an event
// this machine hears.
func (r *KubernetesMachineReconciler) reportNameConflict(s *machineScope, obj client.Object) error {
	err := newNameConflict(obj, s.hosting, "machine")
	setPodProvisioned(s.km, metav1.ConditionFalse, infrav1.KubernetesMachineNameConflictReason, err.Error())
	s.waiting = true
	return err
}

func (r *KubernetesMachineReconciler) podExists(ctx context.Context, s *machineScope, podName string) bool {
	pod := &corev1.Pod{}
	return s.hosting.Client.Get(ctx, client.ObjectKey{Namespace: s.hosting.Namespace, Name: podName}, pod) == nil
}

// reconcileClaims creates the machine's PersistentVolumeClaims.
func (r *KubernetesMachineReconciler) reconcileClaims(ctx context.Context, s *machineScope) (ctrl.Result, error) {
	for _, claim := range nodepod.NewPersistentVolumeClaims(s.node) {
		if err := r.createOwned(ctx, s, claim); err != nil || s.waiting {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{}, nil
}

// reconcilePod adopts the node Pod by name and labels, or creates it; a Pod lost
// after provisioning is reported, never silently recreated.
func (r *KubernetesMachineReconciler) reconcilePod(ctx context.Context, s *machineScope) (ctrl.Result, error) {
	desired := nodepod.NewPod(s.node)
	pod := &corev1.Pod{}
	err := s.hosting.Client.Get(ctx, client.ObjectKeyFromObject(desired), pod)
	switch {
	case err == nil:
		if !s.node.Owner().Owns(pod) {
			return ctrl.Result{}, r.reportNameConflict(s, pod)
		}
		s.pod = pod
		return ctrl.Result{}, nil
	case !apierrors.IsNotFound(err):
		return ctrl.Result{}, fmt.Errorf("reading Pod %s on %s: %w", klog.KObj(desired), s.hosting.Description, err)
	case podWasProvisioned(s):
		setPodProvisioned(s.km, metav1.ConditionFalse, infrav1.KubernetesMachinePodLostReason,
			fmt.Sprintf("Node Pod %s/%s disappeared after provisioning; it is not recreated (its disk is gone): remediate the Machine", desired.Namespace, desired.Name))
		s.waiting = true
		return r.deleteLostNode(ctx, s), nil
	}
	created, err := createHostingObject(ctx, s.hosting, s.node.Owner(), desired, &corev1.Pod{})
	switch {
	case isNameConflict(err):
		return ctrl.Result{}, r.reportNameConflict(s, desired)
	case apierrors.IsForbidden(err) || apierrors.IsInvalid(err):
		setPodProvisioned(s.km, metav1.ConditionFalse, infrav1.KubernetesMachinePodRejectedReason,
			fmt.Sprintf("%s rejected node Pod %s: %v", s.hosting.Description, klog.KObj(desired), errors.Unwrap(err)))
		r.Recorder.Eventf(s.km, nil, corev1.EventTypeWarning, infrav1.KubernetesMachineNodePodRejectedEventReason, "Create", "%v", errors.Unwrap(err))
		return ctrl.Result{RequeueAfter: rejectedPodRetry}, nil
	case err != nil:
		return ctrl.Result{}, err
	case !created:
		s.waiting = true // this machine's Pod, not in the cache yet: its event comes
		return ctrl.Result{}, nil
	}
	// No event: the condition says it, and a machine costs one write less.
	// The message pendingMessage gives a new Pod, so the next reconcile has
	// nothing to write.
	setPodProvisioned(s.km, metav1.ConditionFalse, infrav1.KubernetesMachinePodPendingReason, pendingMessage(desired))
	s.waiting = true
	return ctrl.Result{}, nil
}

// podWasProvisioned tells whether the machine's node Pod ran: its status says
// so, or, after clusterctl move (which does not carry status), the Machine's
// provider ID, which Cluster API copies only from a provisioned machine. The
// KubernetesMachine's own provider ID does not tell: it is set before the Pod
// is created.
func podWasProvisioned(s *machineScope) bool {
	return ptr.Deref(s.km.Status.Initialization.Provisioned, false) || s.machine.Spec.ProviderID != ""
}

// reconcileProvisioned sets addresses and provisioned once the node Pod runs
// (persistFinalizerAndProviderID set the provider ID before the Pod existed),
// and reports a Pod that failed, was evicted or is being deleted, whose Node
// then leaves the workload cluster (deleteLostNode).
func (r *KubernetesMachineReconciler) reconcileProvisioned(ctx context.Context, s *machineScope) (ctrl.Result, error) {
	pod := s.pod
	var result ctrl.Result
	switch {
	case !pod.DeletionTimestamp.IsZero(): // not by the provider: it deletes only with the machine
		setPodProvisioned(s.km, metav1.ConditionFalse, infrav1.KubernetesMachinePodLostReason, fmt.Sprintf("Node Pod %s is being deleted", klog.KObj(pod)))
		result = r.deleteLostNode(ctx, s)
	case pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded:
		r.reportEndedPod(ctx, s)
		result = r.deleteLostNode(ctx, s)
	case pod.Status.Phase == corev1.PodRunning:
		s.km.Status.Addresses = []clusterv1.MachineAddress{{Type: clusterv1.MachineHostName, Address: pod.Name}}
		if pod.Status.PodIP != "" {
			s.km.Status.Addresses = append(s.km.Status.Addresses, clusterv1.MachineAddress{Type: clusterv1.MachineInternalIP, Address: pod.Status.PodIP})
		}
		s.km.Status.FailureDomain = s.node.FailureDomain
		s.km.Status.Initialization.Provisioned = ptr.To(true)
		setPodProvisioned(s.km, metav1.ConditionTrue, infrav1.KubernetesMachinePodProvisionedReason, "")
		return ctrl.Result{}, nil
	default:
		setPodProvisioned(s.km, metav1.ConditionFalse, infrav1.KubernetesMachinePodPendingReason, pendingMessage(pod))
	}
	s.waiting = true
	return result, nil
}

// pendingMessage tells why a Pod does not run yet.
func pendingMessage(pod *corev1.Pod) string {
	for _, condition := range pod.Status.Conditions {
		if condition.Type == corev1.PodScheduled && condition.Status == corev1.ConditionFalse {
			return fmt.Sprintf("Node Pod is not scheduled: %s", condition.Message)
		}
	}
	for _, status := range pod.Status.ContainerStatuses {
		if status.State.Waiting != nil {
			return fmt.Sprintf("Node container is waiting: %s %s", status.State.Waiting.Reason, status.State.Waiting.Message)
		}
	}
	return "Node Pod is pending"
}

func podReady(pod *corev1.Pod) bool {
	for _, condition := range pod.Status.Conditions {
		if condition.Type == corev1.PodReady {
			return condition.Status == corev1.ConditionTrue
		}
	}
	return false
}

// deleteHostingObjects deletes the Pod, the bootstrap Secret and the claims, and
// reports whether all are gone.
func (r *KubernetesMachineReconciler) deleteHostingObjects(ctx context.Context, s *machineScope) (bool, error) {
	gone := true
	for _, obj := range s.node.Objects() {
		present, err := deleteOwned(ctx, s.hosting, s.hosting.Client, s.node.Owner(), obj)
		if err != nil {
			return false, err
		}
		gone = gone && !present
	}
	return gone, nil
}
