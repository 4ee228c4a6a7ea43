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

package controller

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util"
	"sigs.k8s.io/cluster-api/util/annotations"
	"sigs.k8s.io/cluster-api/util/conditions"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/internal/bootstrap"
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

func setPodProvisioned(km *infrav1.KubernetesMachine, status metav1.ConditionStatus, reason, message string) {
	conditions.Set(km, metav1.Condition{Type: infrav1.KubernetesMachinePodProvisionedCondition, Status: status, Reason: reason, Message: message})
}

func setBootstrapSucceeded(km *infrav1.KubernetesMachine, status metav1.ConditionStatus, reason, message string) {
	conditions.Set(km, metav1.Condition{Type: infrav1.KubernetesMachineBootstrapSucceededCondition, Status: status, Reason: reason, Message: message})
}

// waitForClusterInfrastructure waits until the Cluster's infrastructure is provisioned.
func (r *KubernetesMachineReconciler) waitForClusterInfrastructure(_ context.Context, s *machineScope) (ctrl.Result, error) {
	if ptr.Deref(s.cluster.Status.Initialization.InfrastructureProvisioned, false) {
		return ctrl.Result{}, nil
	}
	setPodProvisioned(s.km, metav1.ConditionFalse, infrav1.KubernetesMachineWaitingForClusterInfrastructureReason,
		fmt.Sprintf("Waiting for Cluster %s to have its infrastructure provisioned", s.cluster.Name))
	s.waiting = true
	return ctrl.Result{}, nil
}

// reconcileHosting finds the KubernetesCluster and its hosting cluster, and works
// out the node Pod the machine is.
func (r *KubernetesMachineReconciler) reconcileHosting(ctx context.Context, s *machineScope) (ctrl.Result, error) {
	kc, err := r.kubernetesClusterOf(ctx, s)
	if err != nil {
		setPodProvisioned(s.km, metav1.ConditionFalse, infrav1.KubernetesMachineWaitingForClusterInfrastructureReason, err.Error())
		return ctrl.Result{}, err
	}
	if kc == nil {
		ctrl.LoggerFrom(ctx).Info("The KubernetesCluster is gone; nothing can be found on its hosting cluster")
		return ctrl.Result{}, nil
	}
	s.kc = kc
	ownerID := kc.Annotations[infrav1.OwnerIDAnnotation]
	if ownerID == "" && s.km.DeletionTimestamp.IsZero() && !annotations.IsExternallyManaged(kc) {
		// Nothing is created without the owner ID. Only a KubernetesCluster not
		// reconciled yet (just created, or of an earlier release) has none; its
		// first reconcile writes it, and that update wakes this machine
		// (hostingChanged). A deletion goes on without it: a cluster without an
		// ID has no object labelled with one. An externally managed cluster
		// gets none, and its machines' objects are owned by their names.
		ctrl.LoggerFrom(ctx).V(4).Info("Waiting for the KubernetesCluster's owner ID", "KubernetesCluster", klog.KObj(kc))
		s.waiting = true
		return ctrl.Result{}, nil
	}
	hostingCluster, err := r.Hosting.For(ctx, kc)
	if err != nil {
		setPodProvisioned(s.km, metav1.ConditionFalse, infrav1.KubernetesClusterHostingClusterUnreachableReason, err.Error())
		return ctrl.Result{}, err
	}
	s.hosting = hostingCluster
	s.node = nodepod.Machine{
		Name:             s.km.Name,
		Namespace:        s.km.Namespace,
		ClusterName:      clusterNameOf(kc),
		Spec:             s.km.Spec,
		HostingNamespace: hostingCluster.Namespace,
		Image:            s.km.Spec.Image,
		OwnerID:          ownerID,
	}
	if s.machine != nil {
		s.node.ControlPlane = util.IsControlPlaneMachine(s.machine)
		s.node.FailureDomain = s.machine.Spec.FailureDomain
		if s.node.Image == "" {
			s.node.Image = nodepod.ImageForVersion(s.machine.Spec.Version)
		}
	}
	return ctrl.Result{}, nil
}

func (r *KubernetesMachineReconciler) kubernetesClusterOf(ctx context.Context, s *machineScope) (*infrav1.KubernetesCluster, error) {
	kc := &infrav1.KubernetesCluster{}
	if s.cluster != nil {
		key := client.ObjectKey{Namespace: s.km.Namespace, Name: s.cluster.Spec.InfrastructureRef.Name}
		if err := r.Client.Get(ctx, key, kc); err != nil {
			if apierrors.IsNotFound(err) && !s.km.DeletionTimestamp.IsZero() {
				return nil, nil
			}
			return nil, fmt.Errorf("reading KubernetesCluster %s: %w", key, err)
		}
		return kc, nil
	}
	list := &infrav1.KubernetesClusterList{}
	if err := r.Client.List(ctx, list, client.InNamespace(s.km.Namespace), client.MatchingLabels{clusterv1.ClusterNameLabel: s.km.Labels[clusterv1.ClusterNameLabel]}); err != nil {
		return nil, err
	}
	if len(list.Items) == 0 {
		return nil, nil
	}
	return &list.Items[0], nil
}

// waitForBootstrapData waits for the bootstrap provider's data Secret.
func (r *KubernetesMachineReconciler) waitForBootstrapData(_ context.Context, s *machineScope) (ctrl.Result, error) {
	if s.machine.Spec.Bootstrap.DataSecretName != nil {
		return ctrl.Result{}, nil
	}
	setPodProvisioned(s.km, metav1.ConditionFalse, infrav1.KubernetesMachineWaitingForBootstrapDataReason,
		fmt.Sprintf("Waiting for Machine %s to have spec.bootstrap.dataSecretName", s.machine.Name))
	s.waiting = true
	return ctrl.Result{}, nil
}

// reconcileBootstrapSecret copies the bootstrap data, rendered as a script, into
// a Secret on the hosting cluster.
func (r *KubernetesMachineReconciler) reconcileBootstrapSecret(ctx context.Context, s *machineScope) (ctrl.Result, error) {
	podName := nodepod.PodName(s.km.Name)
	existing := &corev1.Secret{}
	key := client.ObjectKey{Namespace: s.hosting.Namespace, Name: nodepod.BootstrapSecretName(podName)}
	if err := s.hosting.Client.Get(ctx, key, existing); err == nil {
		if !s.node.Owner().Owns(existing) {
			return ctrl.Result{}, r.reportNameConflict(s, existing)
		}
		return ctrl.Result{}, nil
	} else if !apierrors.IsNotFound(err) {
		return ctrl.Result{}, fmt.Errorf("reading Secret %s on %s: %w", key, s.hosting.Description, err)
	}
	if r.podExists(ctx, s, podName) {
		return ctrl.Result{}, nil // the Pod already booted from it; never re-create bootstrap data
	}
	script, err := r.renderBootstrap(ctx, s, podName)
	if err != nil || script == nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, r.createOwned(ctx, s, nodepod.NewBootstrapSecret(s.node, script))
}

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

// renderBootstrap reads the bootstrap data and turns it into the node's script;
// data it cannot run is a condition, not a retry.
func (r *KubernetesMachineReconciler) renderBootstrap(ctx context.Context, s *machineScope, podName string) ([]byte, error) {
	data := &corev1.Secret{}
	key := client.ObjectKey{Namespace: s.km.Namespace, Name: *s.machine.Spec.Bootstrap.DataSecretName}
	if err := r.Client.Get(ctx, key, data); err != nil {
		err = fmt.Errorf("reading bootstrap data Secret %s: %w", key, err)
		setPodProvisioned(s.km, metav1.ConditionFalse, infrav1.KubernetesMachineWaitingForBootstrapDataReason, err.Error())
		return nil, err
	}
	node := bootstrap.Node{Hostname: podName, ProviderID: nodepod.ProviderID(s.hosting.Namespace, podName)}
	script, err := bootstrap.Render(data.Data["value"], string(data.Data["format"]), node)
	if errors.Is(err, bootstrap.ErrUnsupportedFormat) || errors.Is(err, bootstrap.ErrInvalidCloudConfig) {
		setBootstrapSucceeded(s.km, metav1.ConditionFalse, infrav1.KubernetesMachineBootstrapUnsupportedFormatReason, err.Error())
		setPodProvisioned(s.km, metav1.ConditionFalse, infrav1.KubernetesMachineBootstrapUnsupportedFormatReason, "The bootstrap data cannot run in a node Pod")
		s.waiting = true
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("rendering bootstrap data of %s: %w", klog.KObj(s.km), err)
	}
	if len(script.IgnoredKeys) > 0 {
		ctrl.LoggerFrom(ctx).Info("Ignoring cloud-config keys a node Pod cannot honour", "keys", script.IgnoredKeys)
	}
	return script.Content, nil
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
		return ctrl.Result{}, nil
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
// (persistFinalizer set the provider ID before the Pod existed), and reports a Pod that failed, was evicted or is being deleted.
func (r *KubernetesMachineReconciler) reconcileProvisioned(ctx context.Context, s *machineScope) (ctrl.Result, error) {
	pod := s.pod
	switch {
	case !pod.DeletionTimestamp.IsZero():
		setPodProvisioned(s.km, metav1.ConditionFalse, infrav1.KubernetesMachinePodLostReason, fmt.Sprintf("Node Pod %s is being deleted", klog.KObj(pod)))
	case pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded:
		r.reportEndedPod(ctx, s)
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
	return ctrl.Result{}, nil
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

// reportEndedPod tells a failed bootstrap (the node's own exit code) from a node
// that ended for another reason, with the tail of the node's log.
func (r *KubernetesMachineReconciler) reportEndedPod(ctx context.Context, s *machineScope) {
	pod := s.pod
	exitCode := int32(-1)
	for _, status := range pod.Status.ContainerStatuses {
		if status.State.Terminated != nil {
			exitCode = status.State.Terminated.ExitCode
		}
	}
	tail := r.logTail(ctx, s)
	if exitCode == bootstrap.FailedExitCode {
		setBootstrapSucceeded(s.km, metav1.ConditionFalse, infrav1.KubernetesMachineBootstrapFailedReason, "Bootstrap failed; last lines of the node's log:\n"+tail)
		setPodProvisioned(s.km, metav1.ConditionFalse, infrav1.KubernetesMachinePodLostReason, "The node stopped after its bootstrap failed")
		return
	}
	setPodProvisioned(s.km, metav1.ConditionFalse, infrav1.KubernetesMachinePodLostReason,
		fmt.Sprintf("Node Pod %s ended (phase %s, reason %q, exit code %d): %s", klog.KObj(pod), pod.Status.Phase, pod.Status.Reason, exitCode, pod.Status.Message))
}

// logTail reads the last lines of the node's log through pods/log (never exec).
func (r *KubernetesMachineReconciler) logTail(ctx context.Context, s *machineScope) string {
	clientset, err := kubernetes.NewForConfig(s.hosting.Config)
	if err != nil {
		return fmt.Sprintf("(log unavailable: %v)", err)
	}
	raw, err := clientset.CoreV1().Pods(s.pod.Namespace).GetLogs(s.pod.Name, &corev1.PodLogOptions{TailLines: ptr.To(int64(logReadLines))}).DoRaw(ctx)
	if err != nil {
		return fmt.Sprintf("(log unavailable: %v)", err)
	}
	return bootstrap.FailureLog(string(raw), logTailLines)
}

// reconcileBootstrapStatus reports the bootstrap: a worker's readiness probe checks
// the success sentinel; a control-plane Pod's readiness follows its API server, so
// there the Node joining (Machine.status.nodeRef) is the signal. The timeout is
// enforced here, from the Pod's start.
func (r *KubernetesMachineReconciler) reconcileBootstrapStatus(_ context.Context, s *machineScope) (ctrl.Result, error) {
	if s.machine.Status.NodeRef.IsDefined() || (!s.node.ControlPlane && podReady(s.pod)) {
		setBootstrapSucceeded(s.km, metav1.ConditionTrue, infrav1.KubernetesMachineBootstrapSucceededReason, "")
		return ctrl.Result{}, nil
	}
	if c := conditions.Get(s.km, infrav1.KubernetesMachineBootstrapSucceededCondition); c != nil && c.Status == metav1.ConditionTrue {
		return ctrl.Result{}, nil // succeeded before; readiness may flap later, bootstrap does not undo
	}
	timeout := ptr.Deref(s.km.Spec.BootstrapTimeout, metav1.Duration{Duration: infrav1.DefaultBootstrapTimeout}).Duration
	started := s.pod.CreationTimestamp.Time
	if s.pod.Status.StartTime != nil {
		started = s.pod.Status.StartTime.Time
	}
	remaining := time.Until(started.Add(timeout))
	if remaining <= 0 {
		setBootstrapSucceeded(s.km, metav1.ConditionFalse, infrav1.KubernetesMachineBootstrapTimedOutReason,
			fmt.Sprintf("Bootstrap did not finish within %s", timeout))
		return ctrl.Result{}, nil
	}
	setBootstrapSucceeded(s.km, metav1.ConditionFalse, infrav1.KubernetesMachineBootstrapRunningReason, "Bootstrap is running")
	// One timer for the deadline; success arrives as an event before it.
	return ctrl.Result{RequeueAfter: remaining}, nil
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
