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

// Package crash_test kills the provider's manager right after each of its API
// writes in turn, through a cluster's and its machines' whole life, restarts
// it, and checks what must hold whatever the moment: never two Pods for one
// machine, every machine provisioned, nothing left behind after deletion.
package crash_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/test/envtest"
)

// crashPoints is how many different writes the manager is killed after.
const crashPoints = 20

var (
	env        *envtest.Environment
	namespaces atomic.Int32
)

func TestMain(m *testing.M) {
	envtest.RunMain(m, func(m *testing.M) (int, error) {
		var err error
		// The environment's own manager serves only the webhooks; the tests
		// run the controllers in managers they kill.
		if env, err = envtest.Start(envtest.Options{ClusterAPICRDs: true}); err != nil {
			return 0, err
		}
		code := m.Run()
		return code, env.Stop()
	})
}

// TestManagerKilledAfterAnyWrite runs a cluster's life once without a kill to
// count the manager's writes, then once per crash point, spread over all of
// them: creating the Service, the finalizers, the bootstrap Secrets, the Pods,
// the status patches, and every step of deletion.
func TestManagerKilledAfterAnyWrite(t *testing.T) {
	_, writes := runLife(t, 0)
	t.Logf("a cluster's life without a kill: %d writes", writes)
	if writes < crashPoints {
		t.Fatalf("only %d writes in a cluster's life, fewer than %d crash points", writes, crashPoints)
	}
	for i := range crashPoints {
		killAfter := 1 + i*(writes-1)/(crashPoints-1)
		t.Run(fmt.Sprintf("killed after write %d of %d", killAfter, writes), func(t *testing.T) {
			killedBy, made := runLife(t, killAfter)
			// Timing moves a write or a few (a status that changes twice or
			// once): kill after the last write of the run before instead,
			// a few times, as a run may make fewer writes again.
			for attempt := 0; killedBy == "" && attempt < 5; attempt++ {
				t.Logf("only %d writes this time: again, killed after write %d", made, made)
				killedBy, made = runLife(t, made)
			}
			if killedBy == "" {
				t.Fatal("the manager was not killed")
			}
			t.Logf("killed right after %s", killedBy)
		})
	}
}

// runLife creates a cluster with a control-plane and a worker machine, waits
// until both are provisioned, deletes everything and checks what is left; the
// manager is killed after killAfter writes (0: never) and restarted.
func runLife(t *testing.T, killAfter int) (killedBy string, writes int) {
	g := NewWithT(t)
	ctx := context.Background()
	s, err := supervise(killAfter)
	g.Expect(err).NotTo(HaveOccurred())
	namespace := newNamespace(g)
	kubelet := startKubelet(ctx, namespace)

	cluster, kc := createCluster(g, namespace, "life")
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(kc), kc)).To(Succeed())
		g.Expect(kc.Status.Initialization.Provisioned).To(HaveValue(BeTrue()))
	}, 60*time.Second, 100*time.Millisecond).Should(Succeed())
	g.Expect(envtest.MarkInfrastructureProvisioned(ctx, env.Client, client.ObjectKeyFromObject(cluster))).To(Succeed())
	machines := []*infrav1.KubernetesMachine{
		createMachine(g, cluster, "life-cp", true), createMachine(g, cluster, "life-md-0", false),
	}
	for _, km := range machines {
		g.Eventually(func(g Gomega) {
			g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(km), km)).To(Succeed())
			g.Expect(km.Status.Initialization.Provisioned).To(HaveValue(BeTrue()))
		}, 60*time.Second, 100*time.Millisecond).Should(Succeed(), "machine %s provisioned", km.Name)
	}

	for _, obj := range []client.Object{machines[0], machines[1], kc} {
		g.Expect(env.Client.Delete(ctx, obj)).To(Succeed())
	}
	for _, obj := range []client.Object{machines[0], machines[1], kc} {
		g.Eventually(func() bool {
			return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj))
		}, 60*time.Second, 100*time.Millisecond).Should(BeTrue(), "%s deleted", obj.GetName())
	}
	expectNothingLeft(g, namespace)
	kubelet.stop()
	g.Expect(kubelet.recreated()).To(BeEmpty(), "a machine got a second Pod")
	killedBy, writes, err = s.stop()
	g.Expect(err).NotTo(HaveOccurred())
	return killedBy, writes
}

// expectNothingLeft checks that no object of the provider (node Pod,
// bootstrap Secret, Service, budget, NetworkPolicy) is left in the namespace.
func expectNothingLeft(g Gomega, namespace string) {
	left, err := envtest.Leftovers(context.Background(), env.Client, namespace)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(left).To(BeEmpty(), "left on the hosting cluster")
}

func newNamespace(g Gomega) string {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("crash-%d", namespaces.Add(1))}}
	g.Expect(env.Client.Create(context.Background(), ns)).To(Succeed())
	return ns.Name
}

func createCluster(g Gomega, namespace, name string) (*clusterv1.Cluster, *infrav1.KubernetesCluster) {
	cluster, kc, err := envtest.CreateCluster(context.Background(), env.Client, namespace, name, envtest.ClusterOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	return cluster, kc
}

// createMachine creates a Machine with its bootstrap data ready and its
// KubernetesMachine, as Cluster API and the kubeadm bootstrap provider do.
func createMachine(g Gomega, cluster *clusterv1.Cluster, name string, controlPlane bool) *infrav1.KubernetesMachine {
	fixture := "worker-join.yaml"
	if controlPlane {
		fixture = "controlplane-init.yaml"
	}
	data, err := envtest.BootstrapFixture(fixture)
	g.Expect(err).NotTo(HaveOccurred())
	_, km, err := envtest.CreateMachine(context.Background(), env.Client, cluster, name,
		envtest.MachineOptions{ControlPlane: controlPlane, BootstrapData: data})
	g.Expect(err).NotTo(HaveOccurred())
	return km
}

// kubelet stands in for the hosting cluster's kubelets: it starts every node
// Pod of the namespace (Running and Ready), finishes the deletion of every
// Pod that is terminating, and remembers each Pod's UID, to tell when a
// machine got a second Pod.
type kubelet struct {
	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	uids   map[string]types.UID
	second []string
}

func startKubelet(ctx context.Context, namespace string) *kubelet {
	ctx, cancel := context.WithCancel(ctx)
	k := &kubelet{cancel: cancel, done: make(chan struct{}), uids: map[string]types.UID{}}
	go func() {
		defer close(k.done)
		for ctx.Err() == nil {
			k.startPods(ctx, namespace)
			time.Sleep(50 * time.Millisecond)
		}
	}()
	return k
}

func (k *kubelet) startPods(ctx context.Context, namespace string) {
	pods := &corev1.PodList{}
	if err := env.Client.List(ctx, pods, client.InNamespace(namespace)); err != nil {
		return
	}
	for i := range pods.Items {
		pod := &pods.Items[i]
		k.remember(pod)
		if !pod.DeletionTimestamp.IsZero() {
			k.finishDeletion(ctx, pod)
			continue
		}
		if pod.Status.Phase == corev1.PodRunning {
			continue
		}
		pod.Status = corev1.PodStatus{
			Phase: corev1.PodRunning, PodIP: "10.244.0.7", StartTime: &metav1.Time{Time: time.Now()},
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
		}
		_ = env.Client.Status().Update(ctx, pod) // a conflict is retried on the next pass
	}
}

// finishDeletion does what the kubelet (or, for a Pod on no node, the Pod
// garbage collector) does once a terminating Pod's containers stopped: it
// deletes the Pod for good. A Pod's deletion is two steps in the API server
// (mark, then remove); a manager killed during its DELETE can leave the mark
// alone, and only a kubelet or the Pod garbage collector, neither of which
// runs here, completes it.
func (k *kubelet) finishDeletion(ctx context.Context, pod *corev1.Pod) {
	_ = env.Client.Delete(ctx, pod, client.GracePeriodSeconds(0), client.Preconditions{UID: &pod.UID}) // gone already is fine
}

func (k *kubelet) remember(pod *corev1.Pod) {
	k.mu.Lock()
	defer k.mu.Unlock()
	machine := pod.Labels[infrav1.MachineNameLabel]
	if first, ok := k.uids[machine]; ok && first != pod.UID {
		k.second = append(k.second, fmt.Sprintf("machine %s: Pod %s after %s", machine, pod.UID, first))
	}
	if _, ok := k.uids[machine]; !ok {
		k.uids[machine] = pod.UID
	}
}

func (k *kubelet) stop() {
	k.cancel()
	<-k.done
}

// recreated lists the machines that got a second Pod.
func (k *kubelet) recreated() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.second
}
