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
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	clusterctlv1 "sigs.k8s.io/cluster-api/cmd/clusterctl/api/v1alpha3"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/internal/nodepod"
)

func TestClusterGetsServiceEndpointAndProvisioned(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	tc := newTestCluster(t, g, ns, "svc", infrav1.KubernetesClusterSpec{})

	service := &corev1.Service{}
	g.Eventually(func() error {
		return env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: nodepod.ServiceName("svc")}, service)
	}, 20*time.Second).Should(Succeed())
	g.Expect(service.Spec.Type).To(Equal(corev1.ServiceTypeClusterIP))
	g.Expect(service.Spec.Selector).To(Equal(map[string]string{
		clusterv1.ClusterNameLabel: "svc", infrav1.ClusterNamespaceLabel: ns, infrav1.NodeRoleLabel: infrav1.NodeRoleControlPlane,
	}))
	g.Expect(service.Spec.Ports).To(HaveLen(1))
	g.Expect(service.Spec.Ports[0].Port).To(BeEquivalentTo(6443))
	g.Expect(service.Spec.Ports[0].TargetPort.IntValue()).To(Equal(6443))
	g.Expect(service.OwnerReferences).To(BeEmpty(), "hosting objects never point at management objects")

	kc := eventuallyKubernetesCluster(g, client.ObjectKeyFromObject(tc.kc), func(g Gomega, kc *infrav1.KubernetesCluster) {
		g.Expect(kc.Status.Initialization.Provisioned).To(HaveValue(BeTrue()))
	})
	g.Expect(kc.Spec.ControlPlaneEndpoint).To(Equal(clusterv1.APIEndpoint{Host: service.Spec.ClusterIP, Port: 6443}))
	g.Expect(kc.Finalizers).To(ContainElement(infrav1.ClusterFinalizer))
	for _, conditionType := range []string{clusterv1.ReadyCondition, infrav1.KubernetesClusterHostingClusterReachableCondition, infrav1.KubernetesClusterLoadBalancerAvailableCondition} {
		g.Expect(conditionOf(kc.Status.Conditions, conditionType).Status).To(Equal(metav1.ConditionTrue), conditionType)
	}
	g.Expect(conditionOf(kc.Status.Conditions, clusterv1.PausedCondition).Status).To(Equal(metav1.ConditionFalse))
}

func TestClusterServiceTypeAndUserEndpoint(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	err := env.Client.Create(ctx, &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "hosting-node-a", Labels: map[string]string{"topology.kubernetes.io/zone": "zone-a"}},
	})
	g.Expect(client.IgnoreAlreadyExists(err)).To(Succeed())
	tc := newTestCluster(t, g, ns, "nodeport", infrav1.KubernetesClusterSpec{
		ControlPlaneService:  infrav1.ControlPlaneService{Type: infrav1.ServiceTypeNodePort, Labels: map[string]string{"team": "a"}},
		ControlPlaneEndpoint: clusterv1.APIEndpoint{Host: "api.example.test", Port: 443},
	})
	kc := eventuallyKubernetesCluster(g, client.ObjectKeyFromObject(tc.kc), func(g Gomega, kc *infrav1.KubernetesCluster) {
		g.Expect(kc.Status.Initialization.Provisioned).To(HaveValue(BeTrue()))
	})
	g.Expect(kc.Spec.ControlPlaneEndpoint).To(Equal(clusterv1.APIEndpoint{Host: "api.example.test", Port: 443}), "a user's endpoint is kept")
	g.Expect(kc.Status.FailureDomains).To(ContainElement(HaveField("Name", "zone-a")), "failure domains come from the hosting nodes' zones")

	service := &corev1.Service{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: nodepod.ServiceName("nodeport")}, service)).To(Succeed())
	g.Expect(service.Spec.Type).To(Equal(corev1.ServiceTypeNodePort))
	g.Expect(service.Labels).To(HaveKeyWithValue("team", "a"))
}

func TestClusterOnRemoteHostingClusterThroughKubeconfigSecret(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	hostingNamespace := "remote-" + ns
	g.Expect(remote.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: hostingNamespace}})).To(Succeed())
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hosting"},
		Data:       map[string][]byte{"value": remote.Kubeconfig},
	}
	g.Expect(env.Client.Create(ctx, secret)).To(Succeed())
	tc := newTestCluster(t, g, ns, "remote", infrav1.KubernetesClusterSpec{
		HostingCluster: &infrav1.HostingClusterReference{SecretName: "hosting", Namespace: hostingNamespace},
	})

	kc := eventuallyKubernetesCluster(g, client.ObjectKeyFromObject(tc.kc), func(g Gomega, kc *infrav1.KubernetesCluster) {
		g.Expect(kc.Status.Initialization.Provisioned).To(HaveValue(BeTrue()))
	})
	service := &corev1.Service{}
	g.Expect(remote.Client.Get(ctx, client.ObjectKey{Namespace: hostingNamespace, Name: nodepod.ServiceName("remote")}, service)).To(Succeed())
	g.Expect(kc.Spec.ControlPlaneEndpoint.Host).To(Equal(service.Spec.ClusterIP))
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: nodepod.ServiceName("remote")}, &corev1.Service{})).
		To(Satisfy(apierrors.IsNotFound), "nothing lands on the management cluster")

	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(secret), secret)).To(Succeed())
	g.Expect(secret.Labels).To(HaveKey(clusterctlv1.ClusterctlMoveLabel), "the kubeconfig moves with the cluster")
	g.Expect(secret.Finalizers).NotTo(BeEmpty(), "the kubeconfig cannot be deleted under live machines")

	g.Expect(env.Client.Delete(ctx, tc.kc)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(remote.Client.Get(ctx, client.ObjectKeyFromObject(service), &corev1.Service{}))
	}, 20*time.Second).Should(BeTrue(), "deletion removes the Service from the hosting cluster")
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(secret), secret)).To(Succeed())
		g.Expect(secret.Finalizers).To(BeEmpty())
	}, 20*time.Second).Should(Succeed(), "the kubeconfig is released with its last cluster")
}

func TestUnreachableHostingClusterIsReportedAndRecovers(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hosting"}, Data: map[string][]byte{"value": deadKubeconfig(g)}}
	g.Expect(env.Client.Create(ctx, secret)).To(Succeed())
	tc := newTestCluster(t, g, ns, "unreachable", infrav1.KubernetesClusterSpec{
		HostingCluster: &infrav1.HostingClusterReference{SecretName: "hosting"},
	})
	eventuallyKubernetesCluster(g, client.ObjectKeyFromObject(tc.kc), func(g Gomega, kc *infrav1.KubernetesCluster) {
		reachable := conditionOf(kc.Status.Conditions, infrav1.KubernetesClusterHostingClusterReachableCondition)
		g.Expect(reachable.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(reachable.Reason).To(Equal(infrav1.KubernetesClusterHostingClusterUnreachableReason))
		g.Expect(kc.Status.Initialization.Provisioned).To(BeNil())
	})

	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(secret), secret)).To(Succeed())
	secret.Data["value"] = remote.Kubeconfig
	g.Expect(env.Client.Update(ctx, secret)).To(Succeed())
	eventuallyKubernetesCluster(g, client.ObjectKeyFromObject(tc.kc), func(g Gomega, kc *infrav1.KubernetesCluster) {
		g.Expect(conditionOf(kc.Status.Conditions, infrav1.KubernetesClusterHostingClusterReachableCondition).Status).To(Equal(metav1.ConditionTrue))
		g.Expect(kc.Status.Initialization.Provisioned).To(HaveValue(BeTrue()))
	})
}

func TestInvalidKubeconfigIsReported(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	tc := newTestCluster(t, g, ns, "invalid", infrav1.KubernetesClusterSpec{
		HostingCluster: &infrav1.HostingClusterReference{SecretName: "missing"},
	})
	eventuallyKubernetesCluster(g, client.ObjectKeyFromObject(tc.kc), func(g Gomega, kc *infrav1.KubernetesCluster) {
		reachable := conditionOf(kc.Status.Conditions, infrav1.KubernetesClusterHostingClusterReachableCondition)
		g.Expect(reachable.Reason).To(Equal(infrav1.KubernetesClusterHostingClusterInvalidReason))
		g.Expect(reachable.Message).To(ContainSubstring("missing"))
	})
}

// TestReadyHasNoMessageWhenAllIsWell: Cluster API mirrors the KubernetesCluster's
// and the KubernetesMachine's Ready into the Cluster's and Machine's conditions,
// where a message means something to look at (Cluster API's e2e framework
// wants the Cluster's Available True with none). The True conditions keep
// their own messages; a Ready that is not True carries the problem's.
func TestReadyHasNoMessageWhenAllIsWell(t *testing.T) {
	g := NewWithT(t)
	tc, tm, _ := provisionedWorker(t, g, "quiet", infrav1.KubernetesClusterSpec{})
	eventuallyKubernetesCluster(g, client.ObjectKeyFromObject(tc.kc), func(g Gomega, kc *infrav1.KubernetesCluster) {
		ready := conditionOf(kc.Status.Conditions, clusterv1.ReadyCondition)
		g.Expect(ready.Status).To(Equal(metav1.ConditionTrue))
		g.Expect(ready.Message).To(BeEmpty())
		g.Expect(conditionOf(kc.Status.Conditions, infrav1.KubernetesClusterLoadBalancerAvailableCondition).Message).To(ContainSubstring("serves"))
		g.Expect(conditionOf(kc.Status.Conditions, infrav1.KubernetesClusterHostingPoliciesReadyCondition).Message).To(ContainSubstring("NetworkPolicy"))
	})
	eventuallyKubernetesMachine(g, client.ObjectKeyFromObject(tm.km), func(g Gomega, km *infrav1.KubernetesMachine) {
		ready := conditionOf(km.Status.Conditions, clusterv1.ReadyCondition)
		g.Expect(ready.Status).To(Equal(metav1.ConditionTrue))
		g.Expect(ready.Message).To(BeEmpty())
	})

	broken := newTestCluster(t, g, newNamespace(t), "loud", remoteSpec("missing"))
	eventuallyKubernetesCluster(g, client.ObjectKeyFromObject(broken.kc), func(g Gomega, kc *infrav1.KubernetesCluster) {
		ready := conditionOf(kc.Status.Conditions, clusterv1.ReadyCondition)
		g.Expect(ready.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(ready.Message).To(ContainSubstring("HostingClusterReachable"))
		g.Expect(ready.Message).To(ContainSubstring("missing not found"))
	})
}
