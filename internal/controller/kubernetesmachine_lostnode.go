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

// deleteLostNode deletes the workload cluster's Node of a machine whose node
// Pod is lost for good (being deleted, gone, or ended: a node Pod is never
// recreated), as a cloud's node lifecycle controller deletes the Node of an
// instance that no longer exists. The workload cluster then stops counting on
// it and garbage-collects its Pods at once, and a MachineHealthCheck finds the
// Node gone and remediates without waiting out its Ready=Unknown timeout.
// Once per loss, and best effort: when the workload API does not answer (the
// lost node may have been its only control plane), the health check's node
// timeouts still apply.
func (r *KubernetesMachineReconciler) deleteLostNode(ctx context.Context, s *machineScope) {
	if s.machine == nil || s.cluster == nil || s.machine.Status.NodeRef.Name == "" || wasLost(s.base) {
		return
	}
	name := s.machine.Status.NodeRef.Name
	if err := r.deleteWorkloadNode(ctx, s.cluster, name); err != nil {
		ctrl.LoggerFrom(ctx).Info("The lost machine's Node stays in the workload cluster; MachineHealthCheck's node timeouts apply",
			"Node", name, "reason", err.Error())
		return
	}
	r.Recorder.Eventf(s.km, nil, corev1.EventTypeNormal, infrav1.KubernetesMachineLostNodeDeletedEventReason, "DeleteNode",
		"Deleted Node %s from the workload cluster: its node Pod is lost", name)
}

// wasLost tells whether the stored machine already reported its node Pod lost.
func wasLost(km *infrav1.KubernetesMachine) bool {
	c := conditions.Get(km, infrav1.KubernetesMachinePodProvisionedCondition)
	return c != nil && c.Status == metav1.ConditionFalse &&
		(c.Reason == infrav1.KubernetesMachinePodLostReason || c.Reason == infrav1.KubernetesMachineHostingNodeLimitReason)
}

// deleteWorkloadNode deletes a Node of the cluster's workload cluster through
// the kubeconfig Secret Cluster API keeps for it (read from the API server:
// the cache holds only the provider's own Secrets).
func (r *KubernetesMachineReconciler) deleteWorkloadNode(ctx context.Context, cluster client.Object, name string) error {
	kubeconfig, err := kcfg.FromSecret(ctx, r.APIReader, client.ObjectKeyFromObject(cluster))
	if err != nil {
		return fmt.Errorf("reading the kubeconfig Secret of the workload cluster: %w", err)
	}
	config, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		// Not the parser's error: it may quote the Secret's content.
		return errors.New("the kubeconfig Secret of the workload cluster holds no valid kubeconfig")
	}
	// Bounded like a remote hosting cluster's requests: the workload API
	// server may be the lost node.
	config.UserAgent, config.Timeout = hosting.UserAgent, hosting.RequestTimeout
	clientset, err := kubernetes.NewForConfig(config)
	if err != nil {
		return fmt.Errorf("client of the workload cluster: %w", err)
	}
	err = clientset.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
