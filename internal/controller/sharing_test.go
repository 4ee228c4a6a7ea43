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
	"slices"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/internal/nodepod"
)

// TestTwinClustersShareAHostingNamespaceWithoutTouchingEachOther: two
// clusters named "twin" in two management namespaces use one namespace of one
// remote hosting cluster. The second is told its names are taken (a
// NameConflict naming the object in the way) and writes nothing there; the
// first one's Service, budget and NetworkPolicy stay exactly as they were,
// also when the second is deleted.
func TestTwinClustersShareAHostingNamespaceWithoutTouchingEachOther(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	first, shared := newRemoteTestCluster(t, g, "twin", remote.Kubeconfig)
	first.markInfrastructureProvisioned(g)
	newTestMachine(g, first, "twin-cp-0", machineOptions{controlPlane: true, bootstrapData: true})
	eventuallyKubernetesCluster(g, client.ObjectKeyFromObject(first.kc), func(g Gomega, kc *infrav1.KubernetesCluster) {
		g.Expect(conditionOf(kc.Status.Conditions, clusterv1.ReadyCondition).Status).To(Equal(metav1.ConditionTrue))
	})
	pod := eventuallyPod(g, remote.Client, client.ObjectKey{Namespace: shared, Name: nodepod.PodName("twin-cp-0")})
	firstObjects := []client.Object{
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: shared, Name: nodepod.ServiceName("twin")}},
		&policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: shared, Name: nodepod.ControlPlaneBudgetName("twin")}},
		&networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: shared, Name: nodepod.NetworkPolicyName("twin")}},
		pod,
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: shared, Name: nodepod.BootstrapSecretName(pod.Name)}},
	}
	before := snapshot(g, remote.Client, firstObjects)

	second := newTestClusterSharing(t, g, "twin", remote.Kubeconfig, shared)
	secondMachine := newTestMachine(g, second, "twin-cp-0", machineOptions{controlPlane: true})
	eventuallyKubernetesCluster(g, client.ObjectKeyFromObject(second.kc), func(g Gomega, kc *infrav1.KubernetesCluster) {
		lb := conditionOf(kc.Status.Conditions, infrav1.KubernetesClusterLoadBalancerAvailableCondition)
		g.Expect(lb.Reason).To(Equal(infrav1.KubernetesClusterNameConflictReason))
		g.Expect(lb.Message).To(ContainSubstring("Service %s/%s already exists", shared, nodepod.ServiceName("twin")))
		g.Expect(kc.Status.Initialization.Provisioned).To(BeNil())
	})
	g.Consistently(func(g Gomega) {
		g.Expect(snapshot(g, remote.Client, firstObjects)).To(Equal(before))
	}, 3*time.Second, 200*time.Millisecond).Should(Succeed(), "the first cluster's objects are untouched")

	g.Expect(env.Client.Delete(ctx, secondMachine.km)).To(Succeed())
	g.Expect(env.Client.Delete(ctx, second.kc)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(second.kc), &infrav1.KubernetesCluster{}))
	}, 20*time.Second).Should(BeTrue())
	g.Expect(snapshot(g, remote.Client, firstObjects)).To(Equal(before), "deleting the twin deletes nothing of the first")
}

// TestForeignHostingObjectsAreNeverAdoptedUpdatedOrDeleted: for each kind of
// hosting object, one that holds the name the provider needs but carries
// another owner's labels (or none) is reported as a NameConflict on the
// newcomer, left exactly as it is while the newcomer lives, and left when the
// newcomer is deleted. A machine whose node Pod's name is taken gets no
// provider ID pointing at that Pod.
func TestForeignHostingObjectsAreNeverAdoptedUpdatedOrDeleted(t *testing.T) {
	elsewhere := func(name string) map[string]string { // the labels of a twin in another namespace
		return nodepod.ClusterLabels("elsewhere", name)
	}
	tests := []struct {
		kind, name, reason string
		foreign            func(ns, cluster string) client.Object
		machine            machineOptions
		condition          func(g Gomega, tc *testCluster, tm *testMachine) metav1.Condition
	}{
		{
			kind: "Service",
			foreign: func(ns, cluster string) client.Object { // unlabelled: not in the provider's cache
				return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: nodepod.ServiceName(cluster)},
					Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 443}}, Selector: map[string]string{"app": "web"}}}
			},
			condition: clusterCondition(infrav1.KubernetesClusterLoadBalancerAvailableCondition),
			reason:    infrav1.KubernetesClusterNameConflictReason,
		},
		{
			kind: "Service",
			name: "of a twin of the same names on another management cluster",
			foreign: func(ns, cluster string) client.Object {
				labels := nodepod.ClusterLabels(ns, cluster)
				labels[infrav1.OwnerIDLabel] = "another-management-cluster"
				return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: nodepod.ServiceName(cluster), Labels: labels},
					Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 6443}}, Selector: nodepod.ControlPlaneSelector(ns, cluster)}}
			},
			condition: clusterCondition(infrav1.KubernetesClusterLoadBalancerAvailableCondition),
			reason:    infrav1.KubernetesClusterNameConflictReason,
		},
		{
			kind: "PodDisruptionBudget",
			foreign: func(ns, cluster string) client.Object {
				return &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: nodepod.ControlPlaneBudgetName(cluster), Labels: elsewhere(cluster)},
					Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(5)), Selector: &metav1.LabelSelector{MatchLabels: elsewhere(cluster)}}}
			},
			machine:   machineOptions{controlPlane: true},
			condition: clusterCondition(infrav1.KubernetesClusterHostingPoliciesReadyCondition),
			reason:    infrav1.KubernetesClusterNameConflictReason,
		},
		{
			kind: "NetworkPolicy",
			foreign: func(ns, cluster string) client.Object {
				return &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: nodepod.NetworkPolicyName(cluster), Labels: elsewhere(cluster)},
					Spec: networkingv1.NetworkPolicySpec{PodSelector: metav1.LabelSelector{MatchLabels: elsewhere(cluster)}}}
			},
			condition: clusterCondition(infrav1.KubernetesClusterHostingPoliciesReadyCondition),
			reason:    infrav1.KubernetesClusterNameConflictReason,
		},
		{
			kind: "Pod",
			foreign: func(ns, cluster string) client.Object {
				return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: nodepod.PodName(cluster + "-md-0"),
					Labels: nodepod.MachineLabels("elsewhere", cluster, cluster+"-md-0", false)},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "node", Image: "kindest/node:v1.36.3"}}}}
			},
			machine:   machineOptions{bootstrapData: true},
			condition: machineCondition,
			reason:    infrav1.KubernetesMachineNameConflictReason,
		},
		{
			kind: "PersistentVolumeClaim",
			foreign: func(ns, cluster string) client.Object {
				return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: nodepod.ClaimName(nodepod.PodName(cluster+"-md-0"), "etcd"),
					Labels: nodepod.MachineLabels("elsewhere", cluster, cluster+"-md-0", false)},
					Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
						Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resourceQuantity("1Gi")}}}}
			},
			machine: machineOptions{bootstrapData: true, spec: infrav1.KubernetesMachineSpec{
				VolumeClaimTemplates: []infrav1.VolumeClaimTemplate{{Name: "etcd", MountPath: "/var/lib/etcd", Size: resourceQuantity("2Gi")}},
			}},
			condition: machineCondition,
			reason:    infrav1.KubernetesMachineNameConflictReason,
		},
	}
	for _, tt := range tests {
		t.Run(strings.TrimSpace(tt.kind+" "+tt.name), func(t *testing.T) {
			g := NewWithT(t)
			ctx := context.Background()
			ns := newNamespace(t)
			cluster := "foreign-" + strings.ToLower(tt.kind)
			foreign := tt.foreign(ns, cluster)
			g.Expect(env.Client.Create(ctx, foreign)).To(Succeed())
			before := snapshot(g, env.Client, []client.Object{foreign})

			tc := newTestCluster(t, g, ns, cluster, infrav1.KubernetesClusterSpec{})
			if tt.kind == "Pod" || tt.kind == "PersistentVolumeClaim" {
				tc.markInfrastructureProvisioned(g)
			}
			tm := newTestMachine(g, tc, cluster+"-md-0", tt.machine)
			g.Eventually(func(g Gomega) {
				condition := tt.condition(g, tc, tm)
				g.Expect(condition.Reason).To(Equal(tt.reason))
				g.Expect(condition.Message).To(ContainSubstring("%s %s/%s already exists", tt.kind, ns, foreign.GetName()))
			}, 20*time.Second, 100*time.Millisecond).Should(Succeed())
			g.Consistently(func(g Gomega) {
				g.Expect(snapshot(g, env.Client, []client.Object{foreign})).To(Equal(before))
			}, 2*time.Second, 200*time.Millisecond).Should(Succeed(), "the foreign %s is neither adopted nor written", tt.kind)
			if tt.kind == "Pod" {
				km := &infrav1.KubernetesMachine{}
				g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(tm.km), km)).To(Succeed())
				g.Expect(km.Spec.ProviderID).To(BeEmpty(), "no provider ID points at another machine's node Pod")
			}

			g.Expect(env.Client.Delete(ctx, tm.machine)).To(Succeed())
			g.Expect(env.Client.Delete(ctx, tm.km)).To(Succeed())
			g.Expect(env.Client.Delete(ctx, tc.kc)).To(Succeed())
			g.Eventually(func() bool {
				return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(tc.kc), &infrav1.KubernetesCluster{}))
			}, 20*time.Second).Should(BeTrue())
			g.Expect(snapshot(g, env.Client, []client.Object{foreign})).To(Equal(before), "deletion leaves the foreign %s", tt.kind)
		})
	}
}

// TestObjectsOfAnEarlierReleaseAreAdoptedAndGetTheOwnerID: a Service written
// by a release without owner IDs, with the cluster's labels, is the cluster's:
// it is adopted (same UID) and labelled with the KubernetesCluster's owner ID,
// which the cluster got before anything was created.
func TestObjectsOfAnEarlierReleaseAreAdoptedAndGetTheOwnerID(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	legacy := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: nodepod.ServiceName("legacy"), Labels: nodepod.ClusterLabels(ns, "legacy")},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "apiserver", Port: 6443}}, Selector: nodepod.ControlPlaneSelector(ns, "legacy")}}
	g.Expect(env.Client.Create(ctx, legacy)).To(Succeed())
	tc := newTestCluster(t, g, ns, "legacy", infrav1.KubernetesClusterSpec{})
	kc := eventuallyKubernetesCluster(g, client.ObjectKeyFromObject(tc.kc), func(g Gomega, kc *infrav1.KubernetesCluster) {
		g.Expect(kc.Status.Initialization.Provisioned).To(HaveValue(BeTrue()))
	})
	id := kc.Annotations[infrav1.OwnerIDAnnotation]
	g.Expect(id).To(HaveLen(16))
	g.Eventually(func(g Gomega) {
		service := &corev1.Service{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(legacy), service)).To(Succeed())
		g.Expect(service.UID).To(Equal(legacy.UID), "adopted, not recreated")
		g.Expect(service.Labels).To(HaveKeyWithValue(infrav1.OwnerIDLabel, id))
		g.Expect(kc.Spec.ControlPlaneEndpoint.Host).To(Equal(service.Spec.ClusterIP))
	}, 20*time.Second, 100*time.Millisecond).Should(Succeed())
	g.Eventually(func(g Gomega) {
		policy := &networkingv1.NetworkPolicy{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: nodepod.NetworkPolicyName("legacy")}, policy)).To(Succeed())
		g.Expect(policy.Labels).To(HaveKeyWithValue(infrav1.OwnerIDLabel, id), "new objects carry the owner ID")
	}, 20*time.Second, 100*time.Millisecond).Should(Succeed())
}

// TestMachineWithALongNameIsProvisioned: Cluster API's generated machine names
// can be longer than a label value; the node Pod's events still reach the
// machine, which is provisioned, and its deletion leaves nothing behind.
func TestMachineWithALongNameIsProvisioned(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	tc := newTestCluster(t, g, ns, "long", infrav1.KubernetesClusterSpec{})
	tc.markInfrastructureProvisioned(g)
	name := "long-" + strings.Repeat("machinedeployment-", 4) + "abcde-fghij"
	g.Expect(len(name)).To(BeNumerically(">", 80))
	tm := newTestMachine(g, tc, name, machineOptions{bootstrapData: true})

	pod := eventuallyPod(g, env.Client, podKey(tc, name))
	g.Expect(pod.Name).NotTo(Equal(name), "the Pod's name is shortened")
	setPodRunning(g, env.Client, pod, true, time.Now())
	eventuallyKubernetesMachine(g, client.ObjectKeyFromObject(tm.km), func(g Gomega, km *infrav1.KubernetesMachine) {
		g.Expect(km.Status.Initialization.Provisioned).To(HaveValue(BeTrue()))
		g.Expect(conditionOf(km.Status.Conditions, clusterv1.ReadyCondition).Status).To(Equal(metav1.ConditionTrue))
		g.Expect(km.Spec.ProviderID).To(Equal(nodepod.ProviderID(ns, pod.Name)))
	})

	g.Expect(env.Client.Delete(ctx, tm.km)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(tm.km), &infrav1.KubernetesMachine{}))
	}, 20*time.Second).Should(BeTrue())
	expectMachineObjectsGone(g, env.Client, ns, name)
}

// expectMachineObjectsGone waits until the machine's node Pod and bootstrap
// Secret are gone from the hosting namespace.
func expectMachineObjectsGone(g Gomega, hostingClient client.Client, hostingNamespace, machineName string) {
	podName := nodepod.PodName(machineName)
	for _, obj := range []client.Object{&corev1.Pod{}, &corev1.Secret{}} {
		key := client.ObjectKey{Namespace: hostingNamespace, Name: podName}
		if _, ok := obj.(*corev1.Secret); ok {
			key.Name = nodepod.BootstrapSecretName(podName)
		}
		g.Eventually(func() bool {
			return apierrors.IsNotFound(hostingClient.Get(context.Background(), key, obj))
		}, 20*time.Second, 100*time.Millisecond).Should(BeTrue(), "%s is deleted with its machine", key)
	}
}

// newTestClusterSharing is a test cluster in a namespace of its own whose node
// Pods run in an existing namespace of the remote hosting cluster.
func newTestClusterSharing(t *testing.T, g Gomega, name string, kubeconfig []byte, hostingNamespace string) *testCluster {
	ns := newNamespace(t)
	g.Expect(env.Client.Create(context.Background(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hosting"},
		Data:       map[string][]byte{"value": kubeconfig},
	})).To(Succeed())
	return newTestCluster(t, g, ns, name, infrav1.KubernetesClusterSpec{
		HostingCluster: &infrav1.HostingClusterReference{SecretName: "hosting", Namespace: hostingNamespace},
	})
}

// snapshot is each object's UID, resourceVersion and labels as stored: any
// write or re-creation changes it.
func snapshot(g Gomega, c client.Client, objects []client.Object) []string {
	var state []string
	for _, obj := range objects {
		g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(obj), obj)).To(Succeed())
		g.Expect(obj.GetDeletionTimestamp().IsZero()).To(BeTrue(), "%s is not being deleted", obj.GetName())
		state = append(state, string(obj.GetUID())+"/"+obj.GetResourceVersion()+"/"+labelsString(obj.GetLabels()))
	}
	return state
}

func labelsString(labels map[string]string) string {
	var pairs []string
	for key, value := range labels {
		pairs = append(pairs, key+"="+value)
	}
	slices.Sort(pairs)
	return strings.Join(pairs, ",")
}

func clusterCondition(conditionType string) func(Gomega, *testCluster, *testMachine) metav1.Condition {
	return func(g Gomega, tc *testCluster, _ *testMachine) metav1.Condition {
		kc := &infrav1.KubernetesCluster{}
		g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(tc.kc), kc)).To(Succeed())
		return conditionOf(kc.Status.Conditions, conditionType)
	}
}

func machineCondition(g Gomega, _ *testCluster, tm *testMachine) metav1.Condition {
	km := &infrav1.KubernetesMachine{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(tm.km), km)).To(Succeed())
	return conditionOf(km.Status.Conditions, infrav1.KubernetesMachinePodProvisionedCondition)
}
