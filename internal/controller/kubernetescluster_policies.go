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
	"maps"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
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
	if err := applyNetworkPolicy(ctx, s.hosting, c.Owner(), nodepod.NewNetworkPolicy(c, s.kc.Spec.NetworkIsolation.APIServerClients)); err != nil {
		return nil, err
	}
	return append(applied, fmt.Sprintf("NetworkPolicy %s isolates the node Pods", policyName)), nil
}

// desiredBudgets renders the budgets the spec asks for; nil where none is wanted
// or no machine of the role exists.
func desiredBudgets(kc *infrav1.KubernetesCluster, c nodepod.Cluster, count machineCount) (controlPlane, workers *policyv1.PodDisruptionBudget, err error) {
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

// takeLabelsAndSpec gives existing the labels, annotations and spec of
// desired, the fields the provider owns, and reports whether that changed anything.
func takeLabelsAndSpec[S any](existing, desired client.Object, existingSpec *S, desiredSpec S) bool {
	annotations := maps.Clone(existing.GetAnnotations()) // others' annotations stay
	if annotations == nil {
		annotations = map[string]string{}
	}
	maps.Copy(annotations, desired.GetAnnotations())
	if maps.Equal(existing.GetLabels(), desired.GetLabels()) && maps.Equal(existing.GetAnnotations(), annotations) &&
		equality.Semantic.DeepEqual(*existingSpec, desiredSpec) {
		return false
	}
	existing.SetLabels(desired.GetLabels())
	existing.SetAnnotations(annotations)
	*existingSpec = desiredSpec
	return true
}

// applyHostingObject creates desired on the hosting cluster, or reads it into
// existing and updates it when takeDesired changed the fields the provider
// owns; created tells which of the two objects is now the stored one. An
// object of that name that owner does not own is a nameConflictError: it is
// neither adopted nor written.
func applyHostingObject(ctx context.Context, h *hosting.Cluster, owner nodepod.Owner, desired, existing client.Object, takeDesired func() bool) (created bool, err error) {
	err = h.Client.Get(ctx, client.ObjectKeyFromObject(desired), existing)
	if apierrors.IsNotFound(err) {
		return createHostingObject(ctx, h, owner, desired, existing)
	}
	if err != nil {
		return false, fmt.Errorf("reading %s %s on %s: %w", nodepod.KindName(desired), klog.KObj(desired), h.Description, err)
	}
	if !owner.Owns(existing) {
		return false, newNameConflict(desired, h, "cluster")
	}
	if !takeDesired() {
		return false, nil
	}
	if err := h.Client.Update(ctx, existing); err != nil {
		return false, fmt.Errorf("updating %s %s on %s: %w", nodepod.KindName(desired), klog.KObj(desired), h.Description, err)
	}
	return false, nil
}

// createHostingObject creates desired. The cache holds only the provider's
// objects, so a name held by anything else shows up as AlreadyExists: the
// holder is read live, and is either this owner's (the cache lagged; its
// event brings the next reconcile) or a conflict.
func createHostingObject(ctx context.Context, h *hosting.Cluster, owner nodepod.Owner, desired, existing client.Object) (bool, error) {
	err := h.Client.Create(ctx, desired)
	if err == nil {
		return true, nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return false, fmt.Errorf("creating %s %s on %s: %w", nodepod.KindName(desired), klog.KObj(desired), h.Description, err)
	}
	if err := h.Reader.Get(ctx, client.ObjectKeyFromObject(desired), existing); err != nil {
		return false, fmt.Errorf("reading %s %s on %s: %w", nodepod.KindName(desired), klog.KObj(desired), h.Description, err)
	}
	if !owner.Owns(existing) {
		return false, newNameConflict(desired, h, "cluster")
	}
	return false, nil
}

// removeUnwanted deletes a policy object the spec no longer asks for, when
// the cache holds it and it is owner's: most clusters never had one (a
// cluster of workers only has no control-plane budget), and a reconcile must
// not cost them a write. A budget created moments ago and not yet in the
// cache is removed by the reconcile its creation event triggers.
func removeUnwanted(ctx context.Context, h *hosting.Cluster, owner nodepod.Owner, obj client.Object) error {
	_, err := deleteOwned(ctx, h, h.Client, owner, obj)
	return err
}

// deleteOwned deletes obj from the hosting cluster when reader finds it there
// and it is owner's; another owner's object of that name is left alone.
// present tells whether owner's object is still there (being deleted). The
// delete names the UID that was read, so an object that took the name since
// is never deleted.
func deleteOwned(ctx context.Context, h *hosting.Cluster, reader client.Reader, owner nodepod.Owner, obj client.Object) (present bool, err error) {
	err = reader.Get(ctx, client.ObjectKeyFromObject(obj), obj)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading %s %s on %s: %w", nodepod.KindName(obj), klog.KObj(obj), h.Description, err)
	}
	if !owner.Owns(obj) {
		return false, nil
	}
	if !obj.GetDeletionTimestamp().IsZero() {
		return true, nil
	}
	if err := h.Client.Delete(ctx, obj, client.Preconditions{UID: ptr.To(obj.GetUID())}); client.IgnoreNotFound(err) != nil {
		return true, fmt.Errorf("deleting %s %s on %s: %w", nodepod.KindName(obj), klog.KObj(obj), h.Description, err)
	}
	return true, nil
}

// nameConflictError is a hosting object that holds a name a cluster or a
// machine needs but belongs to another owner (or to none). Its owner is not
// named: that would tell one tenant about another.
type nameConflictError struct {
	kind, where, needer string
	key                 client.ObjectKey
}

// newNameConflict is the conflict of obj for needer, "cluster" or "machine".
func newNameConflict(obj client.Object, h *hosting.Cluster, needer string) *nameConflictError {
	return &nameConflictError{kind: nodepod.KindName(obj), where: h.Description, needer: needer, key: client.ObjectKeyFromObject(obj)}
}

func (e *nameConflictError) Error() string {
	return fmt.Sprintf("%s %s already exists on %s and does not belong to this %s (its owner labels %s, %s, %s and %s name another owner, or it has none); "+
		"the provider leaves it alone: delete it, or give this %s another name or hosting namespace",
		e.kind, e.key, e.where, e.needer, infrav1.ClusterNamespaceLabel, clusterv1.ClusterNameLabel, infrav1.MachineNameLabel, infrav1.OwnerIDLabel, e.needer)
}

// conditionReason is the reason a condition gives for err: NameConflict for a
// name held by another owner, otherwise fallback.
func conditionReason(err error, fallback string) string {
	if isNameConflict(err) {
		return infrav1.KubernetesClusterNameConflictReason
	}
	return fallback
}

// isNameConflict tells whether err is, or wraps, a nameConflictError.
func isNameConflict(err error) bool {
	conflict := (*nameConflictError)(nil)
	return errors.As(err, &conflict)
}
