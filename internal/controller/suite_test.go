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
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
	infracontroller "github.com/capi-kubernetes/cluster-api-provider-kubernetes/internal/controller"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/internal/hosting"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/internal/nodepod"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/test/envtest"
)

var (
	env        *envtest.Environment
	remote     *envtest.HostingCluster
	namespaces atomic.Int32
	writes     = &writeCounter{}
	reconciles = &reconcileCounter{}
	testLogs   = &logBuffer{}
)

func TestMain(m *testing.M) {
	hosting.HealthCheckInterval = time.Second
	hosting.CacheSyncTimeout = 5 * time.Second
	hosting.RequestTimeout = 2 * time.Second
	envtest.SetLogOutput(testLogs) // before the hosting API server starts: see SetLogOutput
	envtest.RunMain(m, run)
}

func run(m *testing.M) (int, error) {
	var err error
	if remote, err = envtest.StartHostingCluster(); err != nil {
		return 0, err
	}
	env, err = envtest.Start(envtest.Options{ClusterAPICRDs: true, Setup: setupControllers, LogOutput: testLogs})
	if err != nil {
		return 0, errors.Join(err, remote.Stop())
	}
	code := m.Run()
	return code, errors.Join(env.Stop(), remote.Stop())
}

// setupControllers registers the controllers as cmd/main.go does, with a client
// that counts the management writes of each KubernetesMachine.
func setupControllers(mgr ctrl.Manager) error {
	return infracontroller.Setup(context.Background(), mgr, infracontroller.Options{
		Reconcile:  controller.Options{MaxConcurrentReconciles: 4, SkipNameValidation: ptr.To(true)},
		HostingQPS: 50, HostingBurst: 100,
		ClusterClient: reconciles.wrap, MachineClient: writes.wrap,
	})
}

// newNamespace creates a namespace of the test's own on the management cluster.
func newNamespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("ctrl-%d", namespaces.Add(1))}}
	if err := env.Client.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

// testCluster is a Cluster API Cluster with its KubernetesCluster, as CAPI's
// Cluster controller would leave them.
type testCluster struct {
	namespace string
	cluster   *clusterv1.Cluster
	kc        *infrav1.KubernetesCluster
}

func newTestCluster(t *testing.T, g Gomega, namespace, name string, spec infrav1.KubernetesClusterSpec) *testCluster {
	t.Helper()
	cluster, kc, err := envtest.CreateCluster(context.Background(), env.Client, namespace, name,
		envtest.ClusterOptions{KubernetesClusterName: name + "-infra", Spec: spec})
	g.Expect(err).NotTo(HaveOccurred())
	return &testCluster{namespace: namespace, cluster: cluster, kc: kc}
}

// markInfrastructureProvisioned does what CAPI's Cluster controller does once the
// KubernetesCluster is provisioned, which is never before the KubernetesCluster
// has its owner ID (written with its finalizer, first of all).
func (tc *testCluster) markInfrastructureProvisioned(g Gomega) {
	ctx := context.Background()
	eventuallyKubernetesCluster(g, client.ObjectKeyFromObject(tc.kc), func(g Gomega, kc *infrav1.KubernetesCluster) {
		g.Expect(kc.Annotations).To(HaveKey(infrav1.OwnerIDAnnotation))
	})
	g.Expect(envtest.MarkInfrastructureProvisioned(ctx, env.Client, client.ObjectKeyFromObject(tc.cluster))).To(Succeed())
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(tc.cluster), tc.cluster)).To(Succeed())
}

// eventuallyKubernetesCluster re-reads the KubernetesCluster until check passes.
func eventuallyKubernetesCluster(g Gomega, key client.ObjectKey, check func(Gomega, *infrav1.KubernetesCluster)) *infrav1.KubernetesCluster {
	return eventuallyObject(g, key, &infrav1.KubernetesCluster{}, check)
}

// eventuallyObject re-reads obj until check passes, for 20 seconds at most.
func eventuallyObject[T client.Object](g Gomega, key client.ObjectKey, obj T, check func(Gomega, T)) T {
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(context.Background(), key, obj)).To(Succeed())
		check(g, obj)
	}, 20*time.Second, 100*time.Millisecond).Should(Succeed())
	return obj
}

// conditionOf returns the condition of the given type, or an empty one.
func conditionOf(conditions []metav1.Condition, conditionType string) metav1.Condition {
	for _, condition := range conditions {
		if condition.Type == conditionType {
			return condition
		}
	}
	return metav1.Condition{}
}

func resourceQuantity(value string) resource.Quantity { return resource.MustParse(value) }

// testMachine is a Machine with its KubernetesMachine and bootstrap data, as CAPI
// and the kubeadm bootstrap provider leave them.
type testMachine struct {
	machine *clusterv1.Machine
	km      *infrav1.KubernetesMachine
}

type machineOptions struct {
	controlPlane  bool
	bootstrapData bool
	spec          infrav1.KubernetesMachineSpec
}

func newTestMachine(g Gomega, tc *testCluster, name string, opts machineOptions) *testMachine {
	machine, km, err := envtest.CreateMachine(context.Background(), env.Client, tc.cluster, name,
		envtest.MachineOptions{ControlPlane: opts.controlPlane, Spec: opts.spec})
	g.Expect(err).NotTo(HaveOccurred())
	tm := &testMachine{machine: machine, km: km}
	if opts.bootstrapData {
		tm.giveBootstrapData(g, "worker-join.yaml")
	}
	return tm
}

// giveBootstrapData does what the kubeadm bootstrap provider does: a data Secret
// and the Machine's dataSecretName.
func (tm *testMachine) giveBootstrapData(g Gomega, fixture string) {
	data, err := envtest.BootstrapFixture(fixture)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(envtest.GiveBootstrapData(context.Background(), env.Client, tm.machine, data)).To(Succeed())
}

// eventuallyKubernetesMachine re-reads the KubernetesMachine until check passes.
func eventuallyKubernetesMachine(g Gomega, key client.ObjectKey, check func(Gomega, *infrav1.KubernetesMachine)) *infrav1.KubernetesMachine {
	return eventuallyObject(g, key, &infrav1.KubernetesMachine{}, check)
}

func eventuallyPod(g Gomega, hostingClient client.Client, key client.ObjectKey) *corev1.Pod {
	pod := &corev1.Pod{}
	g.Eventually(func() error { return hostingClient.Get(context.Background(), key, pod) }, 20*time.Second, 100*time.Millisecond).Should(Succeed())
	return pod
}

// setPodRunning plays the kubelet: the Pod runs with an IP, ready or not.
func setPodRunning(g Gomega, hostingClient client.Client, pod *corev1.Pod, ready bool, started time.Time) {
	readiness := corev1.ConditionFalse
	if ready {
		readiness = corev1.ConditionTrue
	}
	pod.Status = corev1.PodStatus{
		Phase: corev1.PodRunning, PodIP: "10.244.0.7", StartTime: &metav1.Time{Time: started},
		Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: readiness}},
	}
	g.Expect(hostingClient.Status().Update(context.Background(), pod)).To(Succeed())
}

func podKey(tc *testCluster, machineName string) client.ObjectKey {
	return client.ObjectKey{Namespace: tc.namespace, Name: nodepod.PodName(machineName)}
}
