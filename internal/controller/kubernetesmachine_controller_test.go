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

package controller_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/internal/bootstrap"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/internal/nodepod"
)

func TestMachineShowsWhatItWaitsFor(t *testing.T) {
	g := NewWithT(t)
	tc := newTestCluster(t, g, newNamespace(t), "waits", infrav1.KubernetesClusterSpec{})
	tm := newTestMachine(g, tc, "waits-md-0", machineOptions{})

	eventuallyKubernetesMachine(g, client.ObjectKeyFromObject(tm.km), func(g Gomega, km *infrav1.KubernetesMachine) {
		c := conditionOf(km.Status.Conditions, infrav1.KubernetesMachinePodProvisionedCondition)
		g.Expect(c.Reason).To(Equal(infrav1.KubernetesMachineWaitingForClusterInfrastructureReason))
	})
	tc.markInfrastructureProvisioned(g)
	eventuallyKubernetesMachine(g, client.ObjectKeyFromObject(tm.km), func(g Gomega, km *infrav1.KubernetesMachine) {
		c := conditionOf(km.Status.Conditions, infrav1.KubernetesMachinePodProvisionedCondition)
		g.Expect(c.Reason).To(Equal(infrav1.KubernetesMachineWaitingForBootstrapDataReason))
		g.Expect(conditionOf(km.Status.Conditions, clusterv1.ReadyCondition).Status).To(Equal(metav1.ConditionFalse))
	})
	g.Consistently(func() bool {
		return apierrors.IsNotFound(env.Client.Get(context.Background(), podKey(tc, "waits-md-0"), &corev1.Pod{}))
	}, 2*time.Second).Should(BeTrue(), "no Pod before the bootstrap data exists")
}

func TestWorkerPodIsRenderedAndProvisioned(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	tc := newTestCluster(t, g, newNamespace(t), "workers", infrav1.KubernetesClusterSpec{})
	tc.markInfrastructureProvisioned(g)
	tm := newTestMachine(g, tc, "workers-md-0-abcde", machineOptions{bootstrapData: true, spec: infrav1.KubernetesMachineSpec{
		Image:                "kindest/node:v1.36.3",
		VolumeClaimTemplates: []infrav1.VolumeClaimTemplate{{Name: "data", MountPath: "/data", Size: resourceQuantity("1Gi")}},
	}})

	pod := eventuallyPod(g, env.Client, podKey(tc, tm.km.Name))
	g.Expect(pod.Spec.AutomountServiceAccountToken).To(HaveValue(BeFalse()))
	g.Expect(pod.Spec.RestartPolicy).To(Equal(corev1.RestartPolicyNever))
	g.Expect(pod.Spec.Containers[0].SecurityContext.Privileged).To(HaveValue(BeTrue()))
	g.Expect(pod.Spec.Containers[0].Image).To(Equal("kindest/node:v1.36.3"))
	g.Expect(pod.Spec.Containers[0].Resources.Requests).NotTo(BeEmpty(), "a node Pod is never BestEffort")
	g.Expect(pod.OwnerReferences).To(BeEmpty())
	g.Expect(pod.Labels).To(HaveKeyWithValue(infrav1.NodeRoleLabel, infrav1.NodeRoleWorker))
	g.Expect(pod.Spec.TopologySpreadConstraints).To(HaveLen(1), "workers prefer different hosting nodes by default")
	g.Expect(pod.Spec.TopologySpreadConstraints[0].TopologyKey).To(Equal(corev1.LabelHostname))
	g.Expect(pod.Spec.TopologySpreadConstraints[0].LabelSelector.MatchLabels).To(HaveKeyWithValue(infrav1.NodeRoleLabel, infrav1.NodeRoleWorker))

	secret := &corev1.Secret{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: tc.namespace, Name: nodepod.BootstrapSecretName(pod.Name)}, secret)).To(Succeed())
	script := string(secret.Data[bootstrap.ScriptKey])
	g.Expect(script).To(ContainSubstring("--provider-id=kubernetes://" + tc.namespace + "/" + pod.Name))
	g.Expect(script).To(ContainSubstring("kubeadm join"))
	g.Expect(secret.OwnerReferences).To(BeEmpty())
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: tc.namespace, Name: nodepod.ClaimName(pod.Name, "data")}, &corev1.PersistentVolumeClaim{})).To(Succeed())

	setPodRunning(g, env.Client, pod, false, time.Now())
	km := eventuallyKubernetesMachine(g, client.ObjectKeyFromObject(tm.km), func(g Gomega, km *infrav1.KubernetesMachine) {
		g.Expect(km.Status.Initialization.Provisioned).To(HaveValue(BeTrue()))
	})
	// At most one write while it waits for the bootstrap data (created after
	// the machine here), then one for the finalizer and provider ID, one when
	// the Pod is created and one when it runs.
	g.Expect(writes.of(client.ObjectKeyFromObject(tm.km))).To(BeNumerically("<=", 4), "management writes from creation to provisioned")
	t.Logf("management writes for KubernetesMachine %s from creation to provisioned: %d", tm.km.Name, writes.of(client.ObjectKeyFromObject(tm.km)))
	g.Expect(km.Spec.ProviderID).To(Equal("kubernetes://" + tc.namespace + "/" + pod.Name))
	g.Expect(km.Status.Addresses).To(ConsistOf(
		clusterv1.MachineAddress{Type: clusterv1.MachineHostName, Address: pod.Name},
		clusterv1.MachineAddress{Type: clusterv1.MachineInternalIP, Address: "10.244.0.7"},
	))
	g.Expect(conditionOf(km.Status.Conditions, infrav1.KubernetesMachineBootstrapSucceededCondition).Reason).To(Equal(infrav1.KubernetesMachineBootstrapRunningReason))

	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(pod), pod)).To(Succeed())
	setPodRunning(g, env.Client, pod, true, time.Now())
	eventuallyKubernetesMachine(g, client.ObjectKeyFromObject(tm.km), func(g Gomega, km *infrav1.KubernetesMachine) {
		g.Expect(conditionOf(km.Status.Conditions, infrav1.KubernetesMachineBootstrapSucceededCondition).Status).To(Equal(metav1.ConditionTrue))
		g.Expect(conditionOf(km.Status.Conditions, clusterv1.ReadyCondition).Status).To(Equal(metav1.ConditionTrue))
	})
	t.Logf("management writes for KubernetesMachine %s from creation to provisioned and bootstrapped: %d", tm.km.Name, writes.of(client.ObjectKeyFromObject(tm.km)))
}

func TestControlPlaneBootstrapSucceedsWhenTheNodeJoins(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	tc := newTestCluster(t, g, newNamespace(t), "cp", infrav1.KubernetesClusterSpec{})
	tc.markInfrastructureProvisioned(g)
	tm := newTestMachine(g, tc, "cp-abcde", machineOptions{controlPlane: true})
	tm.giveBootstrapData(g, "controlplane-init.yaml")

	pod := eventuallyPod(g, env.Client, podKey(tc, tm.km.Name))
	g.Expect(pod.Labels).To(HaveKeyWithValue(infrav1.NodeRoleLabel, infrav1.NodeRoleControlPlane))
	g.Expect(pod.Spec.Containers[0].ReadinessProbe.HTTPGet).NotTo(BeNil(), "a control-plane Pod is ready when its API server is")
	setPodRunning(g, env.Client, pod, true, time.Now())
	eventuallyKubernetesMachine(g, client.ObjectKeyFromObject(tm.km), func(g Gomega, km *infrav1.KubernetesMachine) {
		g.Expect(km.Status.Initialization.Provisioned).To(HaveValue(BeTrue()))
		g.Expect(conditionOf(km.Status.Conditions, infrav1.KubernetesMachineBootstrapSucceededCondition).Status).To(Equal(metav1.ConditionFalse),
			"a ready control-plane Pod only says its API server serves")
	})

	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(tm.machine), tm.machine)).To(Succeed())
	tm.machine.Status.NodeRef = clusterv1.MachineNodeReference{Name: pod.Name}
	g.Expect(env.Client.Status().Update(ctx, tm.machine)).To(Succeed())
	eventuallyKubernetesMachine(g, client.ObjectKeyFromObject(tm.km), func(g Gomega, km *infrav1.KubernetesMachine) {
		g.Expect(conditionOf(km.Status.Conditions, infrav1.KubernetesMachineBootstrapSucceededCondition).Status).To(Equal(metav1.ConditionTrue))
	})
}

func TestBootstrapTimeoutAndFailureAreSurfaced(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	tc := newTestCluster(t, g, newNamespace(t), "fail", infrav1.KubernetesClusterSpec{})
	tc.markInfrastructureProvisioned(g)

	slow := newTestMachine(g, tc, "fail-slow", machineOptions{bootstrapData: true, spec: infrav1.KubernetesMachineSpec{
		BootstrapTimeout: &metav1.Duration{Duration: time.Minute},
	}})
	pod := eventuallyPod(g, env.Client, podKey(tc, slow.km.Name))
	setPodRunning(g, env.Client, pod, false, time.Now().Add(-2*time.Minute))
	eventuallyKubernetesMachine(g, client.ObjectKeyFromObject(slow.km), func(g Gomega, km *infrav1.KubernetesMachine) {
		c := conditionOf(km.Status.Conditions, infrav1.KubernetesMachineBootstrapSucceededCondition)
		g.Expect(c.Reason).To(Equal(infrav1.KubernetesMachineBootstrapTimedOutReason))
		g.Expect(c.Message).To(ContainSubstring("1m0s"))
	})

	failing := newTestMachine(g, tc, "fail-exit", machineOptions{bootstrapData: true})
	pod = eventuallyPod(g, env.Client, podKey(tc, failing.km.Name))
	pod.Status = corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{{
		Name: "node", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: bootstrap.FailedExitCode}},
	}}}
	g.Expect(env.Client.Status().Update(ctx, pod)).To(Succeed())
	eventuallyKubernetesMachine(g, client.ObjectKeyFromObject(failing.km), func(g Gomega, km *infrav1.KubernetesMachine) {
		c := conditionOf(km.Status.Conditions, infrav1.KubernetesMachineBootstrapSucceededCondition)
		g.Expect(c.Reason).To(Equal(infrav1.KubernetesMachineBootstrapFailedReason))
		g.Expect(c.Message).To(ContainSubstring("last lines of the node's log"))
		g.Expect(conditionOf(km.Status.Conditions, clusterv1.ReadyCondition).Status).To(Equal(metav1.ConditionFalse))
	})
}

func TestUnsupportedBootstrapFormatIsACondition(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	tc := newTestCluster(t, g, newNamespace(t), "ignition", infrav1.KubernetesClusterSpec{})
	tc.markInfrastructureProvisioned(g)
	tm := newTestMachine(g, tc, "ignition-md-0", machineOptions{})
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: tc.namespace, Name: "ignition-data", Labels: map[string]string{clusterv1.ClusterNameLabel: "ignition"}},
		Data:       map[string][]byte{"value": []byte(`{"ignition":{"version":"3.4.0"}}`), "format": []byte("ignition")},
	}
	g.Expect(env.Client.Create(ctx, secret)).To(Succeed())
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(tm.machine), tm.machine)).To(Succeed())
	tm.machine.Spec.Bootstrap.DataSecretName = ptr.To(secret.Name)
	g.Expect(env.Client.Update(ctx, tm.machine)).To(Succeed())

	eventuallyKubernetesMachine(g, client.ObjectKeyFromObject(tm.km), func(g Gomega, km *infrav1.KubernetesMachine) {
		c := conditionOf(km.Status.Conditions, infrav1.KubernetesMachineBootstrapSucceededCondition)
		g.Expect(c.Reason).To(Equal(infrav1.KubernetesMachineBootstrapUnsupportedFormatReason))
		g.Expect(c.Message).To(ContainSubstring("ignition"))
	})
	g.Expect(apierrors.IsNotFound(env.Client.Get(ctx, podKey(tc, tm.km.Name), &corev1.Pod{}))).To(BeTrue())
}

func TestPodLostAfterProvisioningIsReportedNotRecreated(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	tc := newTestCluster(t, g, newNamespace(t), "lost", infrav1.KubernetesClusterSpec{})
	tc.markInfrastructureProvisioned(g)
	tm := newTestMachine(g, tc, "lost-md-0", machineOptions{bootstrapData: true})
	pod := eventuallyPod(g, env.Client, podKey(tc, tm.km.Name))
	setPodRunning(g, env.Client, pod, true, time.Now())
	eventuallyKubernetesMachine(g, client.ObjectKeyFromObject(tm.km), func(g Gomega, km *infrav1.KubernetesMachine) {
		g.Expect(km.Status.Initialization.Provisioned).To(HaveValue(BeTrue()))
	})

	g.Expect(env.Client.Delete(ctx, pod, client.GracePeriodSeconds(0))).To(Succeed())
	eventuallyKubernetesMachine(g, client.ObjectKeyFromObject(tm.km), func(g Gomega, km *infrav1.KubernetesMachine) {
		c := conditionOf(km.Status.Conditions, infrav1.KubernetesMachinePodProvisionedCondition)
		g.Expect(c.Reason).To(Equal(infrav1.KubernetesMachinePodLostReason))
		g.Expect(conditionOf(km.Status.Conditions, clusterv1.ReadyCondition).Status).To(Equal(metav1.ConditionFalse))
	})
	g.Consistently(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(pod), &corev1.Pod{}))
	}, 2*time.Second).Should(BeTrue(), "a lost node is not silently recreated")
}

// TestPodLostAfterMoveIsReportedNotRecreated: clusterctl move does not carry
// status, so a moved machine whose Pod is gone tells it was provisioned by its
// Machine's provider ID, which Cluster API copies only from a provisioned
// machine.
func TestPodLostAfterMoveIsReportedNotRecreated(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	tc := newTestCluster(t, g, newNamespace(t), "moved-lost", infrav1.KubernetesClusterSpec{})
	tc.markInfrastructureProvisioned(g)
	providerID := "kubernetes://" + tc.namespace + "/" + nodepod.PodName("moved-lost-md-0")
	tm := newTestMachine(g, tc, "moved-lost-md-0", machineOptions{spec: infrav1.KubernetesMachineSpec{ProviderID: providerID}})
	tm.machine.Spec.ProviderID = providerID
	g.Expect(env.Client.Update(ctx, tm.machine)).To(Succeed())
	tm.giveBootstrapData(g, "worker-join.yaml")

	eventuallyKubernetesMachine(g, client.ObjectKeyFromObject(tm.km), func(g Gomega, km *infrav1.KubernetesMachine) {
		g.Expect(conditionOf(km.Status.Conditions, infrav1.KubernetesMachinePodProvisionedCondition).Reason).To(Equal(infrav1.KubernetesMachinePodLostReason))
	})
	g.Consistently(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, podKey(tc, tm.km.Name), &corev1.Pod{}))
	}, 2*time.Second).Should(BeTrue(), "a lost node is not silently recreated")
}

// TestProviderIDAloneDoesNotMeanProvisioned: the provider ID is written with
// the finalizer, before the Pod exists; a manager that stopped in between
// creates the Pod when it comes back.
func TestProviderIDAloneDoesNotMeanProvisioned(t *testing.T) {
	g := NewWithT(t)
	tc := newTestCluster(t, g, newNamespace(t), "early-id", infrav1.KubernetesClusterSpec{})
	tc.markInfrastructureProvisioned(g)
	providerID := "kubernetes://" + tc.namespace + "/" + nodepod.PodName("early-id-md-0")
	tm := newTestMachine(g, tc, "early-id-md-0", machineOptions{bootstrapData: true, spec: infrav1.KubernetesMachineSpec{ProviderID: providerID}})

	pod := eventuallyPod(g, env.Client, podKey(tc, tm.km.Name))
	setPodRunning(g, env.Client, pod, true, time.Now())
	eventuallyKubernetesMachine(g, client.ObjectKeyFromObject(tm.km), func(g Gomega, km *infrav1.KubernetesMachine) {
		g.Expect(km.Status.Initialization.Provisioned).To(HaveValue(BeTrue()))
		g.Expect(km.Spec.ProviderID).To(Equal(providerID))
	})
}

// TestForeignObjectWithTheBootstrapSecretsNameIsAConflict: the name the node's
// bootstrap Secret needs is taken by a Secret of someone else (here, the
// Machine's own bootstrap data, as a user may name it). The machine reports a
// NameConflict, creates no Pod, and deleting it leaves the foreign Secret.
func TestForeignObjectWithTheBootstrapSecretsNameIsAConflict(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	tc := newTestCluster(t, g, newNamespace(t), "clash", infrav1.KubernetesClusterSpec{})
	tc.markInfrastructureProvisioned(g)
	key := podKey(tc, "clash-md-0")
	// Labelled like Cluster API's bootstrap data, so the provider's cache sees it.
	foreign := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: nodepod.BootstrapSecretName(key.Name),
			Labels: map[string]string{clusterv1.ClusterNameLabel: "clash"}},
		StringData: map[string]string{"value": "not the provider's"},
	}
	g.Expect(env.Client.Create(ctx, foreign)).To(Succeed())
	tm := newTestMachine(g, tc, "clash-md-0", machineOptions{bootstrapData: true})

	eventuallyKubernetesMachine(g, client.ObjectKeyFromObject(tm.km), func(g Gomega, km *infrav1.KubernetesMachine) {
		c := conditionOf(km.Status.Conditions, infrav1.KubernetesMachinePodProvisionedCondition)
		g.Expect(c.Reason).To(Equal(infrav1.KubernetesMachineNameConflictReason))
		g.Expect(c.Message).To(ContainSubstring("Secret %s/%s already exists", foreign.Namespace, foreign.Name))
	})
	g.Consistently(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, key, &corev1.Pod{}))
	}, 2*time.Second).Should(BeTrue(), "no Pod boots from a Secret that is not the provider's")

	g.Expect(env.Client.Delete(ctx, tm.machine)).To(Succeed())
	g.Expect(env.Client.Delete(ctx, tm.km)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(tm.km), &infrav1.KubernetesMachine{}))
	}, 20*time.Second).Should(BeTrue())
	kept := &corev1.Secret{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(foreign), kept)).To(Succeed())
	g.Expect(kept.Data["value"]).To(BeEquivalentTo("not the provider's"))
}
