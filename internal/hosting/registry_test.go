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

package hosting_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/internal/hosting"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/test/envtest"
)

var (
	env      *envtest.Environment
	remote   *envtest.HostingCluster
	registry *hosting.Registry
)

func TestMain(m *testing.M) {
	envtest.RunMain(m, run)
}

func run(m *testing.M) (int, error) {
	var err error
	if remote, err = envtest.StartHostingCluster(); err != nil {
		return 0, err
	}
	if env, err = envtest.Start(envtest.Options{ClusterAPICRDs: true}); err != nil {
		return 0, err
	}
	registry = hosting.NewRegistry(env.Manager, 20, 40)
	if err := env.Manager.Add(registry); err != nil {
		return 0, err
	}
	code := m.Run()
	if err := env.Stop(); err != nil {
		return code, err
	}
	return code, remote.Stop()
}

func kubeconfigSecret(g Gomega, namespace, contextNamespace string) *corev1.Secret {
	kubeconfig, err := envtest.KubeconfigFor(remote.Config, contextNamespace)
	g.Expect(err).NotTo(HaveOccurred())
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "hosting"}, Data: map[string][]byte{"value": kubeconfig}}
}

func TestManagementClusterIsTheDefaultHostingCluster(t *testing.T) {
	g := NewWithT(t)
	kc := &infrav1.KubernetesCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "dev"}}
	cluster, err := registry.For(context.Background(), kc)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cluster.Namespace).To(Equal("team-a"))
	g.Expect(cluster.Description).To(Equal("the management cluster"))
}

func TestRemoteClientIsBuiltOnceRebuiltOnChangeAndStoppedWhenUnused(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "registry-test"}}
	g.Expect(env.Client.Create(ctx, ns)).To(Succeed())
	secret := kubeconfigSecret(g, ns.Name, "nodes-a")
	g.Expect(env.Client.Create(ctx, secret)).To(Succeed())
	kc := &infrav1.KubernetesCluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "dev"},
		Spec:       infrav1.KubernetesClusterSpec{HostingCluster: &infrav1.HostingClusterReference{SecretName: "hosting", Key: "value"}},
	}

	first, err := registry.For(ctx, kc)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(first.Namespace).To(Equal("nodes-a"), "the kubeconfig's namespace when the spec names none")
	again, err := registry.For(ctx, kc)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(again.Client).To(BeIdenticalTo(first.Client), "one cached client per hosting cluster")
	g.Expect(registry.RunningRemotes()).To(Equal(1))

	changed := kubeconfigSecret(g, ns.Name, "nodes-b")
	secret.Data = changed.Data
	g.Expect(env.Client.Update(ctx, secret)).To(Succeed())
	var rebuilt *hosting.Cluster
	g.Eventually(func(g Gomega) {
		rebuilt, err = registry.For(ctx, kc)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(rebuilt.Namespace).To(Equal("nodes-b"))
	}, 10*time.Second).Should(Succeed())
	g.Expect(rebuilt.Client).NotTo(BeIdenticalTo(first.Client), "a changed kubeconfig gets a new client")
	g.Expect(registry.RunningRemotes()).To(Equal(1), "the outdated client is stopped")

	registry.Release(kc)
	g.Expect(registry.RunningRemotes()).To(Equal(0), "a client nobody uses is stopped")
}

func TestInvalidKubeconfigIsNotRetriedAsUnreachable(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "registry-invalid"}}
	g.Expect(env.Client.Create(ctx, ns)).To(Succeed())
	g.Expect(env.Client.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "hosting"}, Data: map[string][]byte{"value": []byte("not: [a kubeconfig")},
	})).To(Succeed())
	kc := &infrav1.KubernetesCluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "dev"},
		Spec:       infrav1.KubernetesClusterSpec{HostingCluster: &infrav1.HostingClusterReference{SecretName: "hosting", Key: "value"}},
	}
	_, err := registry.For(ctx, kc)
	g.Expect(err).To(MatchError(hosting.ErrInvalidKubeconfig))

	kc.Spec.HostingCluster.Key = "missing"
	_, err = registry.For(ctx, kc)
	g.Expect(err).To(MatchError(hosting.ErrInvalidKubeconfig))
	g.Expect(err.Error()).To(ContainSubstring(`has no key "missing"`))
}

func TestTrimNodeKeepsNameZoneAndAddresses(t *testing.T) {
	g := NewWithT(t)
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: "worker-1", UID: "uid-1", ResourceVersion: "42",
			Labels:      map[string]string{corev1.LabelTopologyZone: "zone-a", corev1.LabelHostname: "worker-1"},
			Annotations: map[string]string{"node.alpha.kubernetes.io/ttl": "0"},
		},
		Spec: corev1.NodeSpec{PodCIDR: "10.244.1.0/24"},
		Status: corev1.NodeStatus{
			Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "192.0.2.10"}},
			Images:    []corev1.ContainerImage{{Names: []string{"kindest/node:v1.36.3"}, SizeBytes: 1 << 30}},
		},
	}
	trimmed, err := hosting.TrimNode(node)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(trimmed).To(Equal(&corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: "worker-1", UID: "uid-1", ResourceVersion: "42",
			Labels: map[string]string{corev1.LabelTopologyZone: "zone-a"},
		},
		Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "192.0.2.10"}}},
	}))

	unzoned, err := hosting.TrimNode(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "plain", Labels: map[string]string{"a": "b"}}})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(unzoned.(*corev1.Node).Labels).To(BeNil(), "no zone, no labels")

	other := &corev1.Pod{}
	same, err := hosting.TrimNode(other)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(same).To(BeIdenticalTo(other), "anything else passes unchanged")
}

// TestCachesKeepOnlyWhatTheProviderReads writes through the management
// cluster and through a remote hosting cluster, and reads back through each
// one's cache: no object keeps the managedFields the API server stores (the
// live read shows them); a node Pod keeps its metadata and status, not its
// spec; a node bootstrap Secret keeps its owner labels, not its data; Cluster
// API's bootstrap data Secret keeps its data.
func TestCachesKeepOnlyWhatTheProviderReads(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "managed-fields"}}
	g.Expect(env.Client.Create(ctx, ns)).To(Succeed())
	g.Expect(remote.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns.Name}})).To(Succeed())
	g.Expect(env.Client.Create(ctx, kubeconfigSecret(g, ns.Name, ns.Name))).To(Succeed())
	kc := &infrav1.KubernetesCluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "dev"},
		Spec:       infrav1.KubernetesClusterSpec{HostingCluster: &infrav1.HostingClusterReference{SecretName: "hosting", Key: "value"}},
	}
	hostingCluster, err := registry.For(ctx, kc)
	g.Expect(err).NotTo(HaveOccurred())
	defer registry.Release(kc)

	owned := map[string]string{infrav1.ManagedByLabel: infrav1.ManagedByValue, clusterv1.ClusterNameLabel: "dev"}
	for _, c := range []struct {
		name         string
		writer       client.Client
		cached, live client.Reader
	}{
		{name: "management", writer: env.Client, cached: env.Manager.GetClient(), live: env.Manager.GetAPIReader()},
		{name: "remote hosting", writer: remote.Client, cached: hostingCluster.Client, live: hostingCluster.Reader},
	} {
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "node-bootstrap", Labels: owned},
			Data: map[string][]byte{"bootstrap.sh": []byte("kubeadm join")}}
		g.Expect(c.writer.Create(ctx, secret)).To(Succeed(), c.name)
		stored := &corev1.Secret{}
		g.Expect(c.live.Get(ctx, client.ObjectKeyFromObject(secret), stored)).To(Succeed(), c.name)
		g.Expect(stored.ManagedFields).NotTo(BeEmpty(), "%s: the API server keeps managedFields", c.name)
		g.Expect(stored.Data).NotTo(BeEmpty(), c.name)
		g.Eventually(func(g Gomega) {
			cached := &corev1.Secret{}
			g.Expect(c.cached.Get(ctx, client.ObjectKeyFromObject(secret), cached)).To(Succeed())
			g.Expect(cached.Labels).To(Equal(owned))
			g.Expect(cached.ManagedFields).To(BeEmpty())
			g.Expect(cached.Data).To(BeEmpty())
		}, 10*time.Second).Should(Succeed(), c.name)

		pod := endedNodePod(g, c.writer, ns.Name, owned)
		g.Eventually(func(g Gomega) {
			cached := &corev1.Pod{}
			g.Expect(c.cached.Get(ctx, client.ObjectKeyFromObject(pod), cached)).To(Succeed())
			g.Expect(cached.Labels).To(Equal(owned))
			g.Expect(cached.ManagedFields).To(BeEmpty())
			g.Expect(cached.Spec.Containers).To(BeEmpty())
			g.Expect(cached.Status.Phase).To(Equal(corev1.PodFailed))
			g.Expect(cached.Status.ContainerStatuses).To(Equal(pod.Status.ContainerStatuses))
		}, 10*time.Second).Should(Succeed(), c.name)
	}

	data := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "dev-md-0-bootstrap",
		Labels: map[string]string{clusterv1.ClusterNameLabel: "dev"}},
		Type: clusterv1.ClusterSecretType, Data: map[string][]byte{"value": []byte("#cloud-config"), "format": []byte("cloud-config")}}
	g.Expect(env.Client.Create(ctx, data)).To(Succeed())
	g.Eventually(func(g Gomega) {
		cached := &corev1.Secret{}
		g.Expect(env.Manager.GetClient().Get(ctx, client.ObjectKeyFromObject(data), cached)).To(Succeed())
		g.Expect(cached.Data).To(Equal(data.Data))
	}, 10*time.Second).Should(Succeed(), "Cluster API's bootstrap data")
}

// endedNodePod creates a Pod with the given labels and gives it the status of
// a node container that exited.
func endedNodePod(g Gomega, c client.Client, namespace string, labels map[string]string) *corev1.Pod {
	ctx := context.Background()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "node", Labels: labels},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "node", Image: "kindest/node:v1.36.3"}}},
	}
	g.Expect(c.Create(ctx, pod)).To(Succeed())
	pod.Status = corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{{
		Name: "node", Image: "kindest/node:v1.36.3",
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 255, Reason: "Error"}},
	}}}
	g.Expect(c.Status().Update(ctx, pod)).To(Succeed())
	return pod
}

// TestManagementCacheKeepsOfAMachineItsSpecAndNode gives a Machine conditions
// and a Node, as Cluster API's Machine controller does, and reads it back
// through the management cluster's cache: its metadata, spec and Node are
// kept, its conditions are not (the live read has them).
func TestManagementCacheKeepsOfAMachineItsSpecAndNode(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "machine-trim"}}
	g.Expect(env.Client.Create(ctx, ns)).To(Succeed())
	machine := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "dev-md-0", Labels: map[string]string{clusterv1.ClusterNameLabel: "dev"}},
		Spec: clusterv1.MachineSpec{
			ClusterName: "dev", Version: envtest.MachineVersion, FailureDomain: "zone-a",
			Bootstrap:         clusterv1.Bootstrap{DataSecretName: ptr.To("dev-md-0-bootstrap")},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "KubernetesMachine", Name: "dev-md-0"},
		},
	}
	g.Expect(env.Client.Create(ctx, machine)).To(Succeed())
	machine.Status.NodeRef = clusterv1.MachineNodeReference{Name: "dev-md-0"}
	machine.Status.Phase = string(clusterv1.MachinePhaseRunning)
	machine.Status.Conditions = []metav1.Condition{{
		Type: clusterv1.MachineReadyCondition, Status: metav1.ConditionTrue, Reason: clusterv1.MachineReadyReason, LastTransitionTime: metav1.Now(),
	}}
	g.Expect(env.Client.Status().Update(ctx, machine)).To(Succeed())

	stored := &clusterv1.Machine{}
	g.Expect(env.Manager.GetAPIReader().Get(ctx, client.ObjectKeyFromObject(machine), stored)).To(Succeed())
	g.Expect(stored.Status.Conditions).NotTo(BeEmpty(), "the API server keeps the conditions")
	g.Eventually(func(g Gomega) {
		cached := &clusterv1.Machine{}
		g.Expect(env.Manager.GetClient().Get(ctx, client.ObjectKeyFromObject(machine), cached)).To(Succeed())
		g.Expect(cached.Status.NodeRef).To(Equal(machine.Status.NodeRef))
		g.Expect(cached.Spec).To(Equal(stored.Spec))
		g.Expect(cached.Labels).To(Equal(machine.Labels))
		g.Expect(cached.ManagedFields).To(BeEmpty())
		g.Expect(cached.Status.Conditions).To(BeEmpty())
		g.Expect(cached.Status.Phase).To(BeEmpty())
	}, 10*time.Second).Should(Succeed())
}
