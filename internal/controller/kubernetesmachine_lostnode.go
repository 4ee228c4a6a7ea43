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
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/cluster-api/util/conditions"
	kcfg "sigs.k8s.io/cluster-api/util/kubeconfig"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/internal/hosting"
)

const (
	// lostNodeRetry is how soon a lost machine's Node deletion is tried again
	// when the workload API did not take it: the lost node Pod may have been
	// one of its control planes, or the hosting node it ran on is being
	// drained, and the API answers again a few seconds later.
	lostNodeRetry = 10 * time.Second
	// lostNodeRetryWindow bounds the tries: by then MachineHealthCheck's node
	// timeouts (5 minutes in the templates) have acted on their own.
	lostNodeRetryWindow = 5 * time.Minute
)

// deleteLostNode deletes the workload cluster's Node of a machine whose node
// Pod is lost for good (being deleted, gone, or ended: a node Pod is never
// recreated), as a cloud's node lifecycle controller deletes the Node of an
// instance that no longer exists. The workload cluster then stops counting on
// it and garbage-collects its Pods at once, and a MachineHealthCheck finds the
// Node gone and remediates without waiting out its Ready=Unknown timeout.
// When the workload API does not take the deletion, it is tried again every
// lostNodeRetry for lostNodeRetryWindow after the loss; after that the health
// check's node timeouts apply. A Node already gone is done, without an event.
func (r *KubernetesMachineReconciler) deleteLostNode(ctx context.Context, s *machineScope) ctrl.Result {
	if s.machine == nil || s.cluster == nil || s.machine.Status.NodeRef.Name == "" || lostFor(s.base) >= lostNodeRetryWindow {
		return ctrl.Result{}
	}
	name := s.machine.Status.NodeRef.Name
	deleted, err := r.deleteWorkloadNode(ctx, s.cluster, name)
	switch {
	case err != nil:
		ctrl.LoggerFrom(ctx).Info("The lost machine's Node stays in the workload cluster for now; trying again",
			"Node", name, "reason", err.Error(), "retryAfter", lostNodeRetry)
		return ctrl.Result{RequeueAfter: lostNodeRetry}
	case deleted:
		r.Recorder.Eventf(s.km, nil, corev1.EventTypeNormal, infrav1.KubernetesMachineLostNodeDeletedEventReason, "DeleteNode",
			"Deleted Node %s from the workload cluster: its node Pod is lost", name)
	}
	return ctrl.Result{}
}

// lostFor tells how long ago the stored machine reported its node Pod lost:
// zero when it has not yet.
func lostFor(km *infrav1.KubernetesMachine) time.Duration {
	c := conditions.Get(km, infrav1.KubernetesMachinePodProvisionedCondition)
	if c == nil || c.Status != metav1.ConditionFalse ||
		(c.Reason != infrav1.KubernetesMachinePodLostReason && c.Reason != infrav1.KubernetesMachineHostingNodeLimitReason) {
		return 0
	}
	return time.Since(c.LastTransitionTime.Time)
}

// deleteWorkloadNode deletes a Node of the cluster's workload cluster through
// the kubeconfig Secret Cluster API keeps for it (read from the API server:
// the cache holds only the provider's own Secrets), and tells whether it
// deleted it (false: it was gone already).
func (r *KubernetesMachineReconciler) deleteWorkloadNode(ctx context.Context, cluster client.Object, name string) (bool, error) {
	kubeconfig, err := kcfg.FromSecret(ctx, r.APIReader, client.ObjectKeyFromObject(cluster))
	if err != nil {
		return false, fmt.Errorf("reading the kubeconfig Secret of the workload cluster: %w", err)
	}
	config, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		// Not the parser's error: it may quote the Secret's content.
		return false, errors.New("the kubeconfig Secret of the workload cluster holds no valid kubeconfig")
	}
	// Bounded like a remote hosting cluster's requests: the workload API
	// server may be the lost node.
	config.UserAgent, config.Timeout = hosting.UserAgent, hosting.RequestTimeout
	clientset, err := kubernetes.NewForConfig(config)
	if err != nil {
		return false, fmt.Errorf("client of the workload cluster: %w", err)
	}
	err = clientset.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	return err == nil, err
}
