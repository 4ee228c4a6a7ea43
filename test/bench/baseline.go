//go:build bench

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

package bench

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/internal/bootstrap"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/internal/nodepod"
)

// The baseline's node Pods and bootstrap Secrets carry baselineManagedBy and
// baselineClusterNameLabel instead of the provider's managed-by value and
// Cluster API's cluster-name label: the manager caches only the Pods it
// manages and the Secrets of Cluster API clusters, and the simulator watches
// only the provider's Pods. Everything else is rendered by the provider's code.
const (
	baselineManagedBy        = "capk-bench-baseline"
	baselineClusterNameLabel = "capk-bench/cluster-name"
	// baselineOwnerID stands for a KubernetesCluster's owner ID: 16 hex
	// digits, as the provider makes them.
	baselineOwnerID = "0123456789abcdef"
)

// baselineMachine is one machine of the baseline: its KubernetesMachine as
// stored, and the bootstrap Secret and node Pod the provider would create for
// it, rendered before the timed writes.
type baselineMachine struct {
	benchMachine
	km     *infrav1.KubernetesMachine
	secret *corev1.Secret
	pod    *corev1.Pod
	podIP  string
}

// baseline makes, with a plain client and no client-side rate limit, the
// writes the provider makes to provision each machine, on KubernetesMachines
// of its own that the manager watches but skips (externally managed).
type baseline struct {
	client     client.Client
	namespaces []string
	machines   []*baselineMachine
}

// newBaseline makes the baseline's client (the baseline user's, v1beta1
// KubernetesMachines as the manager writes them) and its machines.
func newBaseline(config *rest.Config, scheme *kruntime.Scheme, namespaces []string, machines []benchMachine) (*baseline, error) {
	c, err := client.New(config, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("creating the baseline's client: %w", err)
	}
	b := &baseline{client: c, namespaces: namespaces}
	for i, m := range machines {
		podIP := fmt.Sprintf("10.245.%d.%d", (i/250)%250, i%250+1)
		b.machines = append(b.machines, &baselineMachine{benchMachine: m, podIP: podIP})
	}
	return b, nil
}

// stage creates the namespaces and the KubernetesMachines, writes each the
// status the provider writes while its cluster is not ready, and renders the
// hosting objects: where the timed writes start from, as the provider's
// machines are staged before its timed window.
func (b *baseline) stage(ctx context.Context, workers int) error {
	for _, namespace := range b.namespaces {
		if err := createNamespace(ctx, b.client, namespace); err != nil {
			return err
		}
	}
	return parallel(len(b.machines), workers, func(i int) error { return b.stageMachine(ctx, b.machines[i]) })
}

// stageMachine creates one KubernetesMachine, reports it waiting and renders
// its hosting objects.
func (b *baseline) stageMachine(ctx context.Context, m *baselineMachine) error {
	m.km = newBaselineKubernetesMachine(m.benchMachine)
	if err := b.client.Create(ctx, m.km); err != nil {
		return fmt.Errorf("creating KubernetesMachine %s: %w", klog.KObj(m.km), err)
	}
	err := b.patchStatus(ctx, m.km, func(km *infrav1.KubernetesMachine) {
		setCondition(km, infrav1.KubernetesMachinePodProvisionedCondition, metav1.ConditionFalse,
			infrav1.KubernetesMachineWaitingForClusterInfrastructureReason,
			fmt.Sprintf("Waiting for Cluster %s to have its infrastructure provisioned", m.cluster.name))
	})
	if err != nil {
		return err
	}
	return m.render()
}

// newBaselineKubernetesMachine is a KubernetesMachine as the benchmark creates
// the provider's (createMachine), owned by a Machine that does not exist, and
// externally managed: the manager's reconcile of it stops there, writing
// nothing and reading only its cache.
func newBaselineKubernetesMachine(m benchMachine) *infrav1.KubernetesMachine {
	labels := map[string]string{clusterv1.ClusterNameLabel: m.cluster.name}
	if m.controlPlane {
		labels[clusterv1.MachineControlPlaneLabel] = ""
	}
	owner := metav1.OwnerReference{
		APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine", Name: m.name, UID: uuid.NewUUID(),
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
	}
	return &infrav1.KubernetesMachine{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: m.cluster.namespace, Name: m.name, Labels: labels,
			Annotations:     map[string]string{clusterv1.ManagedByAnnotation: baselineManagedBy},
			OwnerReferences: []metav1.OwnerReference{owner},
		},
		Spec: machineSpec(),
	}
}

// render renders the bootstrap Secret and the node Pod with the provider's
// code, from the KubernetesMachine as stored (defaulted by the webhook).
func (m *baselineMachine) render() error {
	podName := nodepod.PodName(m.km.Name)
	script, err := bootstrap.Render(BootstrapData(m.cluster.namespace, m.cluster.name, m.controlPlane), "cloud-config",
		bootstrap.Node{Hostname: podName, ProviderID: nodepod.ProviderID(m.km.Namespace, podName)})
	if err != nil {
		return fmt.Errorf("rendering the bootstrap script of KubernetesMachine %s: %w", klog.KObj(m.km), err)
	}
	node := nodepod.Node{
		Name: m.km.Name, Namespace: m.km.Namespace, ClusterName: m.cluster.name, ControlPlane: m.controlPlane,
		Spec: m.km.Spec, HostingNamespace: m.km.Namespace, Image: m.km.Spec.Image, OwnerID: baselineOwnerID,
	}
	m.secret, m.pod = nodepod.NewBootstrapSecret(node, script.Content), nodepod.NewPod(node)
	detach(m.secret)
	detach(m.pod)
	return nil
}

// detach relabels a rendered hosting object so that only the baseline sees it
// (baselineManagedBy); its labels keep their number and about their size.
func detach(obj client.Object) {
	labels := obj.GetLabels()
	labels[baselineClusterNameLabel] = labels[clusterv1.ClusterNameLabel]
	delete(labels, clusterv1.ClusterNameLabel)
	labels[infrav1.ManagedByLabel] = baselineManagedBy
	obj.SetLabels(labels)
}

// provisionAll makes every machine's writes with workers goroutines.
func (b *baseline) provisionAll(ctx context.Context, workers int) error {
	return parallel(len(b.machines), workers, func(i int) error { return b.provision(ctx, b.machines[i]) })
}

// provision makes the provider's writes of one machine, in the order its
// reconciles make them (internal/controller: reconcileNormal, then
// writeKubernetesMachine), each of the same kind, API version and patch type.
func (b *baseline) provision(ctx context.Context, m *baselineMachine) error {
	writes := []func(context.Context, *baselineMachine) error{
		b.persistFinalizerAndProviderID,
		b.createBootstrapSecret,
		b.createPod,
		b.reportPodPending,
		b.reportPodRunning,
	}
	for _, write := range writes {
		if err := write(ctx, m); err != nil {
			return err
		}
	}
	return nil
}

// persistFinalizerAndProviderID is the provider's first write: the finalizer
// and the provider ID in one merge patch that carries the resourceVersion,
// through the defaulting and validating webhooks.
func (b *baseline) persistFinalizerAndProviderID(ctx context.Context, m *baselineMachine) error {
	base := m.km.DeepCopy()
	controllerutil.AddFinalizer(m.km, infrav1.MachineFinalizer)
	m.km.Spec.ProviderID = nodepod.ProviderID(m.km.Namespace, m.pod.Name)
	if err := b.client.Patch(ctx, m.km, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("patching KubernetesMachine %s: %w", klog.KObj(m.km), err)
	}
	return nil
}

func (b *baseline) createBootstrapSecret(ctx context.Context, m *baselineMachine) error {
	return b.create(ctx, m.secret)
}

func (b *baseline) createPod(ctx context.Context, m *baselineMachine) error {
	return b.create(ctx, m.pod)
}

func (b *baseline) create(ctx context.Context, obj client.Object) error {
	if err := b.client.Create(ctx, obj); err != nil {
		return fmt.Errorf("creating %s %s: %w", nodepod.KindName(obj), klog.KObj(obj), err)
	}
	return nil
}

// reportPodPending is the status the provider writes once it created the node Pod.
func (b *baseline) reportPodPending(ctx context.Context, m *baselineMachine) error {
	return b.patchStatus(ctx, m.km, func(km *infrav1.KubernetesMachine) {
		setCondition(km, infrav1.KubernetesMachinePodProvisionedCondition, metav1.ConditionFalse,
			infrav1.KubernetesMachinePodPendingReason, "Node Pod is pending")
	})
}

// reportPodRunning is the status the provider writes once the node Pod runs:
// its addresses, provisioned, and the bootstrap running (a control-plane
// machine, until its Node joins) or succeeded (a worker whose Pod is ready).
func (b *baseline) reportPodRunning(ctx context.Context, m *baselineMachine) error {
	return b.patchStatus(ctx, m.km, func(km *infrav1.KubernetesMachine) {
		km.Status.Addresses = []clusterv1.MachineAddress{
			{Type: clusterv1.MachineHostName, Address: m.pod.Name}, {Type: clusterv1.MachineInternalIP, Address: m.podIP},
		}
		km.Status.Initialization.Provisioned = ptr.To(true)
		setCondition(km, infrav1.KubernetesMachinePodProvisionedCondition, metav1.ConditionTrue, infrav1.KubernetesMachinePodProvisionedReason, "")
		if m.controlPlane {
			setCondition(km, infrav1.KubernetesMachineBootstrapSucceededCondition, metav1.ConditionFalse,
				infrav1.KubernetesMachineBootstrapRunningReason, "Bootstrap is running")
			return
		}
		setCondition(km, infrav1.KubernetesMachineBootstrapSucceededCondition, metav1.ConditionTrue, infrav1.KubernetesMachineBootstrapSucceededReason, "")
	})
}

// patchStatus changes the status and writes it as the provider does: with the
// Ready summary and the observed generation, in one merge patch of the status
// without the resourceVersion.
func (b *baseline) patchStatus(ctx context.Context, km *infrav1.KubernetesMachine, change func(*infrav1.KubernetesMachine)) error {
	base := km.DeepCopy()
	change(km)
	summary := conditions.ForConditionTypes{infrav1.KubernetesMachinePodProvisionedCondition, infrav1.KubernetesMachineBootstrapSucceededCondition}
	if err := conditions.SetSummaryCondition(km, km, clusterv1.ReadyCondition, summary); err != nil {
		return fmt.Errorf("summarising the conditions of KubernetesMachine %s: %w", klog.KObj(km), err)
	}
	for i := range km.Status.Conditions {
		km.Status.Conditions[i].ObservedGeneration = km.Generation
	}
	if err := b.client.Status().Patch(ctx, km, client.MergeFrom(base)); err != nil {
		return fmt.Errorf("patching the status of KubernetesMachine %s: %w", klog.KObj(km), err)
	}
	return nil
}

func setCondition(km *infrav1.KubernetesMachine, conditionType string, status metav1.ConditionStatus, reason, message string) {
	conditions.Set(km, metav1.Condition{Type: conditionType, Status: status, Reason: reason, Message: message})
}

// cleanUp removes the baseline's objects, finalizer first; its node Pods were
// never bound, so they go at once. The empty namespaces stay: envtest runs no
// namespace controller to finish deleting them.
func (b *baseline) cleanUp(ctx context.Context, workers int) error {
	if err := parallel(len(b.machines), workers, func(i int) error { return b.remove(ctx, b.machines[i]) }); err != nil {
		return err
	}
	return b.checkNothingLeft(ctx)
}

// remove removes one machine's finalizer, then deletes its objects.
func (b *baseline) remove(ctx context.Context, m *baselineMachine) error {
	base := m.km.DeepCopy()
	controllerutil.RemoveFinalizer(m.km, infrav1.MachineFinalizer)
	if err := b.client.Patch(ctx, m.km, client.MergeFrom(base)); err != nil {
		return fmt.Errorf("removing the finalizer of KubernetesMachine %s: %w", klog.KObj(m.km), err)
	}
	for _, obj := range []client.Object{m.km, m.secret, m.pod} {
		if err := b.client.Delete(ctx, obj, client.GracePeriodSeconds(0)); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting %T %s: %w", obj, klog.KObj(obj), err)
		}
	}
	return nil
}

// checkNothingLeft fails when an object of the baseline outlived its clean-up.
func (b *baseline) checkNothingLeft(ctx context.Context) error {
	left := 0
	for _, namespace := range b.namespaces {
		for _, list := range []client.ObjectList{&infrav1.KubernetesMachineList{}, &corev1.SecretList{}, &corev1.PodList{}} {
			if err := b.client.List(ctx, list, client.InNamespace(namespace)); err != nil {
				return fmt.Errorf("listing the baseline's %T in %s: %w", list, namespace, err)
			}
			left += meta.LenList(list)
		}
	}
	if left > 0 {
		return fmt.Errorf("%d objects of the baseline are left after its clean-up", left)
	}
	return nil
}
