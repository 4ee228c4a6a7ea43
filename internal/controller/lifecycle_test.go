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
	"strings"
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
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/internal/nodepod"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/test/envtest"
)

// provisionedWorker creates a cluster with one worker whose node Pod runs.
func provisionedWorker(t *testing.T, g Gomega, name string, spec infrav1.KubernetesClusterSpec) (*testCluster, *testMachine, *corev1.Pod) {
	t.Helper()
	tc := newTestCluster(t, g, newNamespace(t), name, spec)
	tc.markInfrastructureProvisioned(g)
	tm := newTestMachine(g, tc, name+"-md-0", machineOptions{bootstrapData: true})
	hostingClient, hostingNamespace := env.Client, tc.namespace
	if spec.HostingCluster != nil {
		hostingClient, hostingNamespace = remote.Client, spec.HostingCluster.Namespace
	}
	pod := eventuallyPod(g, hostingClient, client.ObjectKey{Namespace: hostingNamespace, Name: nodepod.PodName(tm.km.Name)})
	setPodRunning(g, hostingClient, pod, true, time.Now())
	eventuallyKubernetesMachine(g, client.ObjectKeyFromObject(tm.km), func(g Gomega, km *infrav1.KubernetesMachine) {
		g.Expect(km.Status.Initialization.Provisioned).To(HaveValue(BeTrue()))
	})
	return tc, tm, pod
}

// setPaused pauses or unpauses the Cluster, as clusterctl move does.
func setPaused(g Gomega, tc *testCluster, paused bool) {
	ctx := context.Background()
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(tc.cluster), tc.cluster)).To(Succeed())
	tc.cluster.Spec.Paused = ptr.To(paused)
	g.Expect(env.Client.Update(ctx, tc.cluster)).To(Succeed())
}

// deleteWithoutFinalizers deletes an object the way clusterctl move deletes the
// source objects: finalizers removed first, so no controller cleans anything up.
func deleteWithoutFinalizers(g Gomega, obj client.Object) {
	setFinalizers(g, obj)
	g.Expect(env.Client.Delete(context.Background(), obj)).To(Succeed())
}

// recreate creates a copy of obj with a new UID and no status, as clusterctl move
// creates objects on the target management cluster.
func recreate[T client.Object](g Gomega, obj T, clean func(T)) T {
	copied := obj.DeepCopyObject().(T)
	copied.SetResourceVersion("")
	copied.SetUID("")
	copied.SetCreationTimestamp(metav1.Time{})
	copied.SetManagedFields(nil)
	copied.SetFinalizers(nil)
	clean(copied)
	g.Expect(env.Client.Create(context.Background(), copied)).To(Succeed())
	return copied
}

func TestMachineIsNotRecreatedAfterMove(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	tc, tm, pod := provisionedWorker(t, g, "move", infrav1.KubernetesClusterSpec{})
	secretKey := client.ObjectKey{Namespace: pod.Namespace, Name: nodepod.BootstrapSecretName(pod.Name)}
	secret := &corev1.Secret{}
	g.Expect(env.Client.Get(ctx, secretKey, secret)).To(Succeed())

	km := simulateMove(g, tc, tm)
	g.Expect(km.Spec.ProviderID).NotTo(BeEmpty(), "move carries the spec")
	eventuallyKubernetesMachine(g, client.ObjectKeyFromObject(km), func(g Gomega, km *infrav1.KubernetesMachine) {
		g.Expect(km.Status.Initialization.Provisioned).To(HaveValue(BeTrue()))
		g.Expect(conditionOf(km.Status.Conditions, clusterv1.ReadyCondition).Status).To(Equal(metav1.ConditionTrue))
	})
	adopted := &corev1.Pod{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(pod), adopted)).To(Succeed())
	g.Expect(adopted.UID).To(Equal(pod.UID), "the same Pod is adopted")
	g.Expect(env.Client.Get(ctx, secretKey, secret)).To(Succeed())
	g.Expect(secret.UID).NotTo(BeEmpty())
	pods := &corev1.PodList{}
	g.Expect(env.Client.List(ctx, pods, client.InNamespace(pod.Namespace))).To(Succeed())
	g.Expect(pods.Items).To(HaveLen(1), "nothing is recreated")
}

// TestMoveWhileProvisioning moves a machine whose node Pod exists but does not
// run yet (clusterctl itself refuses that while a Machine has no Node; a
// provider must still survive it, e.g. with a forced or hand-made move): the
// Pod is adopted, not recreated, and the machine is provisioned once it runs.
func TestMoveWhileProvisioning(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	tc := newTestCluster(t, g, newNamespace(t), "move-early", infrav1.KubernetesClusterSpec{})
	tc.markInfrastructureProvisioned(g)
	tm := newTestMachine(g, tc, "move-early-md-0", machineOptions{bootstrapData: true})
	pod := eventuallyPod(g, env.Client, podKey(tc, tm.km.Name))

	km := simulateMove(g, tc, tm)
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(pod), pod)).To(Succeed())
	setPodRunning(g, env.Client, pod, true, time.Now())
	eventuallyKubernetesMachine(g, client.ObjectKeyFromObject(km), func(g Gomega, km *infrav1.KubernetesMachine) {
		g.Expect(km.Status.Initialization.Provisioned).To(HaveValue(BeTrue()))
		g.Expect(conditionOf(km.Status.Conditions, clusterv1.ReadyCondition).Status).To(Equal(metav1.ConditionTrue))
	})
	pods := &corev1.PodList{}
	g.Expect(env.Client.List(ctx, pods, client.InNamespace(pod.Namespace))).To(Succeed())
	g.Expect(pods.Items).To(HaveLen(1), "nothing is recreated")
	g.Expect(pods.Items[0].UID).To(Equal(pod.UID), "the same Pod is adopted")
}

// simulateMove does what clusterctl move does to a cluster with one machine:
// pause, read the objects, delete them without their finalizers, create them
// anew without status (new UIDs, owner references fixed up) and unpause. It
// returns the new KubernetesMachine; tc points at the new objects.
func simulateMove(g Gomega, tc *testCluster, tm *testMachine) *infrav1.KubernetesMachine {
	ctx := context.Background()
	setPaused(g, tc, true)
	eventuallyKubernetesMachine(g, client.ObjectKeyFromObject(tm.km), func(g Gomega, km *infrav1.KubernetesMachine) {
		g.Expect(conditionOf(km.Status.Conditions, clusterv1.PausedCondition).Status).To(Equal(metav1.ConditionTrue))
	})
	source := struct {
		cluster *clusterv1.Cluster
		kc      *infrav1.KubernetesCluster
		machine *clusterv1.Machine
		km      *infrav1.KubernetesMachine
	}{&clusterv1.Cluster{}, &infrav1.KubernetesCluster{}, &clusterv1.Machine{}, &infrav1.KubernetesMachine{}}
	for obj, from := range map[client.Object]client.Object{source.cluster: tc.cluster, source.kc: tc.kc, source.machine: tm.machine, source.km: tm.km} {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(from), obj)).To(Succeed())
	}
	for _, obj := range []client.Object{source.km, source.machine, source.kc, source.cluster} {
		deleteWithoutFinalizers(g, obj)
	}

	cluster := recreate(g, source.cluster, func(c *clusterv1.Cluster) { c.Status = clusterv1.ClusterStatus{} })
	kc := recreate(g, source.kc, func(kc *infrav1.KubernetesCluster) {
		kc.Status = infrav1.KubernetesClusterStatus{}
		kc.OwnerReferences[0].UID = cluster.UID
	})
	machine := recreate(g, source.machine, func(m *clusterv1.Machine) { m.Status = clusterv1.MachineStatus{} })
	km := recreate(g, source.km, func(km *infrav1.KubernetesMachine) {
		km.Status = infrav1.KubernetesMachineStatus{}
		km.OwnerReferences[0].UID = machine.UID
	})
	tc.cluster, tc.kc = cluster, kc
	tc.markInfrastructureProvisioned(g)
	setPaused(g, tc, false)
	return km
}

func TestPauseStopsAllWrites(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	tc, tm, pod := provisionedWorker(t, g, "pause", infrav1.KubernetesClusterSpec{})
	setPaused(g, tc, true)
	km := eventuallyKubernetesMachine(g, client.ObjectKeyFromObject(tm.km), func(g Gomega, km *infrav1.KubernetesMachine) {
		g.Expect(conditionOf(km.Status.Conditions, clusterv1.PausedCondition).Status).To(Equal(metav1.ConditionTrue))
	})
	kc := eventuallyKubernetesCluster(g, client.ObjectKeyFromObject(tc.kc), func(g Gomega, kc *infrav1.KubernetesCluster) {
		g.Expect(conditionOf(kc.Status.Conditions, clusterv1.PausedCondition).Status).To(Equal(metav1.ConditionTrue))
	})

	// What would make an unpaused controller write: a lost Pod and a deleted machine.
	g.Expect(env.Client.Delete(ctx, pod, client.GracePeriodSeconds(0))).To(Succeed())
	g.Expect(env.Client.Delete(ctx, km)).To(Succeed())
	g.Consistently(func(g Gomega) {
		current := &infrav1.KubernetesMachine{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(km), current)).To(Succeed())
		g.Expect(current.Finalizers).To(ContainElement(infrav1.MachineFinalizer))
		// Cluster API's pause helper keeps the Paused condition's observedGeneration
		// current (deleting bumped the generation); nothing else may change.
		g.Expect(conditionOf(current.Status.Conditions, clusterv1.PausedCondition).Status).To(Equal(metav1.ConditionTrue))
		g.Expect(withoutPaused(current.Status)).To(Equal(withoutPaused(km.Status)))
		currentCluster := &infrav1.KubernetesCluster{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(kc), currentCluster)).To(Succeed())
		g.Expect(currentCluster.ResourceVersion).To(Equal(kc.ResourceVersion))
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: pod.Namespace, Name: nodepod.BootstrapSecretName(pod.Name)}, &corev1.Secret{})).To(Succeed())
	}, 3*time.Second, 200*time.Millisecond).Should(Succeed())

	setPaused(g, tc, false)
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(km), &infrav1.KubernetesMachine{}))
	}, 20*time.Second).Should(BeTrue(), "unpaused, the deletion proceeds")
}

// expectNothingLeft asserts the hosting namespace holds no object of the provider.
func expectNothingLeft(g Gomega, hostingClient client.Client, namespace string) {
	g.Eventually(func(g Gomega) {
		left, err := envtest.Leftovers(context.Background(), hostingClient, namespace)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(left).To(BeEmpty())
	}, 20*time.Second, 200*time.Millisecond).Should(Succeed())
}

func TestDeletionInEveryOrderLeavesNothingOnTheHostingCluster(t *testing.T) {
	tests := []struct {
		name string
		// normal is Cluster API's order: machines first, then the cluster.
		normal bool
		delete func(g Gomega, tc *testCluster, tm *testMachine)
	}{
		{name: "machine then cluster", normal: true, delete: func(g Gomega, tc *testCluster, tm *testMachine) {
			g.Expect(env.Client.Delete(context.Background(), tm.km)).To(Succeed())
			g.Expect(env.Client.Delete(context.Background(), tc.kc)).To(Succeed())
		}},
		{name: "KubernetesCluster first", delete: func(g Gomega, tc *testCluster, tm *testMachine) {
			ctx := context.Background()
			g.Expect(env.Client.Delete(ctx, tc.kc)).To(Succeed())
			g.Consistently(func() error {
				return env.Client.Get(ctx, client.ObjectKey{Namespace: tc.namespace, Name: nodepod.ServiceName(tc.cluster.Name)}, &corev1.Service{})
			}, 2*time.Second).Should(Succeed(), "the Service stays while a machine is left")
			g.Expect(env.Client.Delete(ctx, tm.km)).To(Succeed())
		}},
		{name: "Cluster first", delete: func(g Gomega, tc *testCluster, tm *testMachine) {
			ctx := context.Background()
			g.Expect(env.Client.Delete(ctx, tc.cluster)).To(Succeed())
			g.Expect(env.Client.Delete(ctx, tm.machine)).To(Succeed())
			g.Expect(env.Client.Delete(ctx, tm.km)).To(Succeed())
			g.Expect(env.Client.Delete(ctx, tc.kc)).To(Succeed())
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			tc, tm, _ := provisionedWorker(t, g, "delete", infrav1.KubernetesClusterSpec{})
			tt.delete(g, tc, tm)
			expectNothingLeft(g, env.Client, tc.namespace)
			g.Eventually(func() bool {
				return apierrors.IsNotFound(env.Client.Get(context.Background(), client.ObjectKeyFromObject(tc.kc), &infrav1.KubernetesCluster{}))
			}, 20*time.Second).Should(BeTrue())
			if tt.normal {
				time.Sleep(time.Second) // a last reconcile of the deleted objects, if any, has run
				g.Expect(reconcilerErrors(tc.namespace)).To(BeEmpty(), "a normal deletion logs no error")
			}
		})
	}
}

// reconcilerErrors are the controllers' "Reconciler error" log lines about
// objects of namespace.
func reconcilerErrors(namespace string) []string {
	var found []string
	for _, line := range strings.Split(testLogs.String(), "\n") {
		if strings.Contains(line, "Reconciler error") && strings.Contains(line, `"`+namespace+`"`) {
			found = append(found, line)
		}
	}
	return found
}

func TestRemoteMachineDeletionAfterItsKubeconfigSecretIsDeleted(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	hostingNamespace := "remote-" + ns
	g.Expect(remote.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: hostingNamespace}})).To(Succeed())
	spec := infrav1.KubernetesClusterSpec{HostingCluster: &infrav1.HostingClusterReference{SecretName: "hosting", Namespace: hostingNamespace}}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hosting"}, Data: map[string][]byte{"value": remote.Kubeconfig}}
	g.Expect(env.Client.Create(ctx, secret)).To(Succeed())
	tc := newTestCluster(t, g, ns, "remote-delete", spec)
	tc.markInfrastructureProvisioned(g)
	tm := newTestMachine(g, tc, "remote-delete-md-0", machineOptions{bootstrapData: true})
	pod := eventuallyPod(g, remote.Client, client.ObjectKey{Namespace: hostingNamespace, Name: nodepod.PodName(tm.km.Name)})
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(pod), &corev1.Pod{})).To(Satisfy(apierrors.IsNotFound))
	setPodRunning(g, remote.Client, pod, true, time.Now())
	eventuallyKubernetesMachine(g, client.ObjectKeyFromObject(tm.km), func(g Gomega, km *infrav1.KubernetesMachine) {
		g.Expect(km.Spec.ProviderID).To(Equal("kubernetes://" + hostingNamespace + "/" + pod.Name))
	})

	g.Expect(env.Client.Delete(ctx, secret)).To(Succeed())
	g.Expect(env.Client.Delete(ctx, tm.km)).To(Succeed())
	g.Expect(env.Client.Delete(ctx, tc.kc)).To(Succeed())
	expectNothingLeft(g, remote.Client, hostingNamespace)
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(secret), &corev1.Secret{}))
	}, 20*time.Second).Should(BeTrue(), "the kubeconfig Secret goes once its cluster no longer needs it")
}

func withoutPaused(status infrav1.KubernetesMachineStatus) infrav1.KubernetesMachineStatus {
	copied := *status.DeepCopy()
	copied.Conditions = nil
	for _, condition := range status.Conditions {
		if condition.Type != clusterv1.PausedCondition {
			copied.Conditions = append(copied.Conditions, condition)
		}
	}
	return copied
}
