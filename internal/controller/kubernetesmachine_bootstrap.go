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

// A KubernetesMachine's bootstrap: its Secret on the hosting cluster, its progress, timeout and failure.

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
	"sigs.k8s.io/cluster-api/util/conditions"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/internal/bootstrap"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/internal/nodepod"
)

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

// reportEndedPod reports a node Pod that ended, with the tail of its log.
func (r *KubernetesMachineReconciler) reportEndedPod(ctx context.Context, s *machineScope) {
	reportEnded(s.km, s.pod, r.logTail(ctx, s))
}

// reportEnded tells a failed bootstrap (the node's own exit code) from a node
// that ended for another reason, with the tail of the node's log, and names
// what the hosting node lacks when the log shows it (bootstrap.HostingNodeLimit).
func reportEnded(km *infrav1.KubernetesMachine, pod *corev1.Pod, tail string) {
	exitCode := int32(-1)
	for _, status := range pod.Status.ContainerStatuses {
		if status.State.Terminated != nil {
			exitCode = status.State.Terminated.ExitCode
		}
	}
	lack := bootstrap.HostingNodeLimit(tail)
	if exitCode == bootstrap.FailedExitCode {
		setBootstrapSucceeded(km, metav1.ConditionFalse, infrav1.KubernetesMachineBootstrapFailedReason, "Bootstrap failed"+because(lack)+"; last lines of the node's log:\n"+tail)
	}
	switch {
	case lack != "":
		setPodProvisioned(km, metav1.ConditionFalse, infrav1.KubernetesMachineHostingNodeLimitReason,
			fmt.Sprintf("Node Pod %s ended%s; last lines of the node's log:\n%s", klog.KObj(pod), because(lack), tail))
	case exitCode == bootstrap.FailedExitCode:
		setPodProvisioned(km, metav1.ConditionFalse, infrav1.KubernetesMachinePodLostReason, "The node stopped after its bootstrap failed")
	default:
		setPodProvisioned(km, metav1.ConditionFalse, infrav1.KubernetesMachinePodLostReason,
			fmt.Sprintf("Node Pod %s ended (phase %s, reason %q, exit code %d): %s", klog.KObj(pod), pod.Status.Phase, pod.Status.Reason, exitCode, pod.Status.Message))
	}
}

// because is ": " and the reason, or nothing without one.
func because(reason string) string {
	if reason == "" {
		return ""
	}
	return ": " + reason
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
