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

// A workload cluster's PodDisruptionBudgets and NetworkPolicy on its hosting cluster.

package controller

import (
	"context"
	"fmt"
	"slices"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util"
	"sigs.k8s.io/cluster-api/util/conditions"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/internal/hosting"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/internal/nodepod"
)

// machineCount is how many machines of a cluster there are, not counting
// those being deleted.
type machineCount struct{ controlPlane, workers int }

// reconcilePolicies keeps the cluster's PodDisruptionBudgets and its isolation
// NetworkPolicy on the hosting cluster in step with its spec and machines.
func (r *KubernetesClusterReconciler) reconcilePolicies(ctx context.Context, s *clusterScope) (ctrl.Result, error) {
	count, err := r.countMachines(ctx, s.kc)
	if err != nil {
		return ctrl.Result{}, err
	}
	applied, err := r.applyPolicies(ctx, s, count)
	if err != nil {
		conditions.Set(s.kc, metav1.Condition{
			Type: infrav1.KubernetesClusterHostingPoliciesReadyCondition, Status: metav1.ConditionFalse,
			Reason: conditionReason(err, infrav1.KubernetesClusterHostingPoliciesFailedReason), Message: err.Error(),
		})
		return ctrl.Result{}, err
	}
	conditions.Set(s.kc, metav1.Condition{
		Type: infrav1.KubernetesClusterHostingPoliciesReadyCondition, Status: metav1.ConditionTrue,
		Reason: infrav1.KubernetesClusterHostingPoliciesAppliedReason, Message: strings.Join(applied, "; "),
	})
	return ctrl.Result{}, nil
}

// applyPolicies applies or deletes each policy object and says what is in place.
func (r *KubernetesClusterReconciler) applyPolicies(ctx context.Context, s *clusterScope, count machineCount) ([]string, error) {
	c := s.hostingObjects()
	var applied []string
	controlPlane, workers, err := desiredBudgets(s.kc, c, count)
	if err != nil {
		return nil, err
	}
	for _, budget := range []struct {
		name    string
		desired *policyv1.PodDisruptionBudget
		role    string
	}{
		{nodepod.ControlPlaneBudgetName(c.Name), controlPlane, "control-plane"},
		{nodepod.WorkersBudgetName(c.Name), workers, "worker"},
	} {
		if budget.desired == nil {
			if err := removeUnwanted(ctx, s.hosting, c.Owner(), &policyv1.PodDisruptionBudget{ObjectMeta: c.ObjectMeta(budget.name)}); err != nil {
				return nil, err
			}
			continue
		}
		if err := applyBudget(ctx, s.hosting, c.Owner(), budget.desired); err != nil {
			return nil, err
		}
		applied = append(applied, fmt.Sprintf("PodDisruptionBudget %s keeps %s of the %s node Pods available",
			budget.desired.Name, budget.desired.Spec.MinAvailable.String(), budget.role))
	}
	policyName := nodepod.NetworkPolicyName(c.Name)
	if s.kc.Spec.NetworkIsolation.Mode == infrav1.NetworkIsolationDisabled {
		return applied, removeUnwanted(ctx, s.hosting, c.Owner(), &networkingv1.NetworkPolicy{ObjectMeta: c.ObjectMeta(policyName)})
	}
	nodes, err := s.hostingNodes(ctx)
	if err != nil {
		return nil, err
	}
	clients := append(slices.Clone(s.kc.Spec.NetworkIsolation.APIServerClients), nodepod.HostingNodePeers(nodes)...)
	if err := applyNetworkPolicy(ctx, s.hosting, c.Owner(), nodepod.NewNetworkPolicy(c, clients)); err != nil {
		return nil, err
	}
	return append(applied, fmt.Sprintf("NetworkPolicy %s isolates the node Pods", policyName)), nil
}

// desiredBudgets renders the budgets the spec asks for; nil where none is wanted
// or no machine of the role exists.
func desiredBudgets(kc *infrav1.KubernetesCluster, c nodepod.Workload, count machineCount) (controlPlane, workers *policyv1.PodDisruptionBudget, err error) {
	budgets := kc.Spec.DisruptionBudgets
	if budgets.ControlPlane != infrav1.ControlPlaneBudgetNone && count.controlPlane > 0 {
		controlPlane = nodepod.NewControlPlaneBudget(c, nodepod.QuorumMinAvailable(count.controlPlane))
	}
	if budgets.WorkersMaxUnavailable != nil && count.workers > 0 {
		minAvailable, err := nodepod.WorkersMinAvailable(count.workers, *budgets.WorkersMaxUnavailable)
		if err != nil {
			return nil, nil, fmt.Errorf("spec.disruptionBudgets.workersMaxUnavailable: %w", err)
		}
		workers = nodepod.NewWorkersBudget(c, minAvailable)
	}
	return controlPlane, workers, nil
}

// countMachines counts the cluster's Cluster API Machines by role; a Machine
// being deleted no longer counts, so the budget shrinks with a scale-down.
func (r *KubernetesClusterReconciler) countMachines(ctx context.Context, kc *infrav1.KubernetesCluster) (machineCount, error) {
	list := &clusterv1.MachineList{}
	if err := r.Client.List(ctx, list, client.InNamespace(kc.Namespace), client.MatchingLabels{clusterv1.ClusterNameLabel: clusterNameOf(kc)}); err != nil {
		return machineCount{}, fmt.Errorf("listing Machines of %s: %w", klog.KObj(kc), err)
	}
	var count machineCount
	for i := range list.Items {
		switch machine := &list.Items[i]; {
		case !machine.DeletionTimestamp.IsZero():
		case util.IsControlPlaneMachine(machine):
			count.controlPlane++
		default:
			count.workers++
		}
	}
	return count, nil
}

// applyBudget creates the budget or brings its labels and spec to the desired ones.
func applyBudget(ctx context.Context, h *hosting.Cluster, owner nodepod.Owner, desired *policyv1.PodDisruptionBudget) error {
	existing := &policyv1.PodDisruptionBudget{}
	_, err := applyHostingObject(ctx, h, owner, desired, existing, func() bool {
		return takeLabelsAndSpec(existing, desired, &existing.Spec, desired.Spec)
	})
	return err
}

// applyNetworkPolicy creates the policy or brings its labels and spec to the desired ones.
func applyNetworkPolicy(ctx context.Context, h *hosting.Cluster, owner nodepod.Owner, desired *networkingv1.NetworkPolicy) error {
	existing := &networkingv1.NetworkPolicy{}
	_, err := applyHostingObject(ctx, h, owner, desired, existing, func() bool {
		return takeLabelsAndSpec(existing, desired, &existing.Spec, desired.Spec)
	})
	return err
}
