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

// Conditions: the Ready summary, the two machine conditions, and how an error names its reason.

package controller

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
)

// conditionReason is the reason a condition gives for err: NameConflict for a
// name held by another owner, otherwise fallback.
func conditionReason(err error, fallback string) string {
	if isNameConflict(err) {
		return infrav1.KubernetesClusterNameConflictReason
	}
	return fallback
}

// setReadySummary sets Ready from the given conditions. A True Ready has no
// message: Cluster API's summary would join the messages of the True
// conditions (what a Service serves, which budgets are in place), and Cluster
// API mirrors Ready into the Cluster's InfrastructureReady and the Machine's,
// and from there into their Available and Ready, where a message means
// something to look at (the framework's VerifyClusterAvailable wants none).
// The conditions themselves keep their messages.
func setReadySummary(obj conditionsObject, conditionTypes ...string) error {
	if err := conditions.SetSummaryCondition(obj, obj, clusterv1.ReadyCondition, conditions.ForConditionTypes(conditionTypes)); err != nil {
		return err
	}
	if ready := conditions.Get(obj, clusterv1.ReadyCondition); ready != nil && ready.Status == metav1.ConditionTrue && ready.Message != "" {
		ready.Message = ""
		conditions.Set(obj, *ready)
	}
	return nil
}

// conditionsObject is an object with v1beta2 conditions.
type conditionsObject interface {
	client.Object
	conditions.Setter
}

func setPodProvisioned(km *infrav1.KubernetesMachine, status metav1.ConditionStatus, reason, message string) {
	conditions.Set(km, metav1.Condition{Type: infrav1.KubernetesMachinePodProvisionedCondition, Status: status, Reason: reason, Message: message})
}

func setBootstrapSucceeded(km *infrav1.KubernetesMachine, status metav1.ConditionStatus, reason, message string) {
	conditions.Set(km, metav1.Condition{Type: infrav1.KubernetesMachineBootstrapSucceededCondition, Status: status, Reason: reason, Message: message})
}
