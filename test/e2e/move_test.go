//go:build e2e

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

package e2e

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/internal/hosting"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/internal/nodepod"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/test/envtest"
)

// startMovedCluster creates, on the first management cluster, the cluster the
// move test carries away: the remote-hosting flavor (1 control plane, 1
// worker), whose node Pods live in a namespace of their own on the hosting
// cluster, reached with a kubeconfig that has only the permissions
// docs/hosting-clusters.md lists. It does not wait for the cluster.
func startMovedCluster(ctx context.Context, t *testing.T, g Gomega) *workloadCluster {
	namespace := newNamespace(ctx, t, g)
	hostingNamespace := newNamespace(ctx, t, g)
	installPodnet(ctx, g, namespace)
	kubeconfig := restrictedHostingKubeconfig(ctx, t, g, hostingNamespace)
	w := createCluster(ctx, t, g, namespace, "moved", "remote-hosting", 1,
		"CAPK_HOSTING_KUBECONFIG_B64="+base64.StdEncoding.EncodeToString(kubeconfig),
		"CAPK_HOSTING_NAMESPACE="+hostingNamespace)
	w.hostingNamespace = hostingNamespace
	return w
}

// restrictedHostingKubeconfig applies the RBAC example of
// docs/hosting-clusters.md for a ServiceAccount in the hosting namespace and
// returns a kubeconfig with a token of that ServiceAccount: the test proves
// the documented permissions are enough.
func restrictedHostingKubeconfig(ctx context.Context, t *testing.T, g Gomega, hostingNamespace string) []byte {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: hostingNamespace, Name: "capk"}}
	g.Expect(env.client.Create(ctx, sa)).To(Succeed())
	rbac, err := envtest.DocumentedHostingRBAC(hostingNamespace)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(rbac).To(HaveLen(4), "the RBAC example of docs/hosting-clusters.md")
	createAll(ctx, g, env.client, rbac)
	t.Cleanup(func() {
		for _, obj := range rbac {
			_ = env.client.Delete(context.Background(), obj) // the cluster-scoped ones outlive the namespace
		}
	})

	token, err := env.clients.CoreV1().ServiceAccounts(hostingNamespace).CreateToken(ctx, sa.Name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](4 * 3600)}},
		metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	admin, err := clientcmd.LoadFromFile(env.settings["KUBECONFIG"])
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(clientcmdapi.FlattenConfig(admin)).To(Succeed())
	cluster := admin.Clusters[admin.Contexts[admin.CurrentContext].Cluster]
	g.Expect(cluster).NotTo(BeNil())
	data, err := clientcmd.Write(clientcmdapi.Config{
		Clusters:       map[string]*clientcmdapi.Cluster{"hosting": cluster},
		AuthInfos:      map[string]*clientcmdapi.AuthInfo{"capk": {Token: token.Status.Token}},
		Contexts:       map[string]*clientcmdapi.Context{"capk": {Cluster: "hosting", AuthInfo: "capk", Namespace: hostingNamespace}},
		CurrentContext: "capk",
	})
	g.Expect(err).NotTo(HaveOccurred())
	return data
}

// expectMove turns target (a workload cluster of the first management
// cluster) into a second management cluster with clusterctl init, moves w to
// it with clusterctl move and checks that no node Pod was touched, that the
// first management cluster keeps nothing of w, and that the second one
// manages w: it scales w's workers and finally deletes w.
func expectMove(ctx context.Context, t *testing.T, g Gomega, target, w *workloadCluster) {
	w.waitAvailable(ctx, t, g, 15*time.Minute)
	g.Eventually(func(g Gomega) { w.expectNodesReady(ctx, g, 2) }).
		WithTimeout(5 * time.Minute).WithPolling(5 * time.Second).Should(Succeed())

	start := time.Now()
	loadManagementImages(ctx, t, g, target)
	targetClient, targetKubeconfig := initManagementCluster(ctx, t, g, target)
	t.Logf("workload cluster %s became a management cluster in %s", target.name, time.Since(start).Round(time.Second))

	// After the move, target's controllers run in its node Pods, which w's
	// NetworkPolicy would refuse.
	allowAPIServerClients(ctx, g, w, target)
	before := w.nodePods(ctx, g)
	g.Expect(before).To(HaveLen(2))
	expectUntouched(g, before, before)
	start = time.Now()
	_, err := env.command(ctx, t, nil, "CLUSTERCTL", "move", "--kubeconfig", env.settings["KUBECONFIG"],
		"--to-kubeconfig", targetKubeconfig, "--namespace", w.namespace)
	g.Expect(err).NotTo(HaveOccurred())
	expectNoClusterObjects(ctx, g, env.client, w.namespace)
	w.management = targetClient
	g.Eventually(func(g Gomega) {
		expectMachinesProvisioned(ctx, g, w)
		w.expectNodesReady(ctx, g, 2)
	}).WithTimeout(5 * time.Minute).WithPolling(5 * time.Second).Should(Succeed())
	expectUntouched(g, before, w.nodePods(ctx, g))
	t.Logf("cluster %s: clusterctl move and reconciliation on the new management cluster took %s; "+
		"its node Pods kept their UIDs, no restarts", w.name, time.Since(start).Round(time.Second))

	scaleWorkers(ctx, t, g, w, 2)
	expectUntouched(g, before, w.nodePods(ctx, g))
	deleteCluster(ctx, t, g, w)
}

// loadManagementImages imports the images of Cluster API, cert-manager and
// the provider into the containerd of every worker node of w, the way `kind
// load` does: no registry is in reach.
func loadManagementImages(ctx context.Context, t *testing.T, g Gomega, w *workloadCluster) {
	tars, err := filepath.Glob(filepath.Join(env.settings["MANAGEMENT_IMAGES"], "*.tar"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(tars).NotTo(BeEmpty(), "no images in %s", env.settings["MANAGEMENT_IMAGES"])
	for _, m := range w.machines(ctx, g, client.HasLabels{clusterv1.MachineDeploymentNameLabel}) {
		pod := nodepod.PodName(m.Spec.InfrastructureRef.Name)
		for _, tar := range tars {
			image, err := os.Open(tar)
			g.Expect(err).NotTo(HaveOccurred())
			_, err = run(t, env.commandWithInput(ctx, t, image, nil, "KUBECTL", "exec", "-i", "-n", w.hostingNamespace,
				pod, "--", "ctr", "--namespace", "k8s.io", "images", "import", "-"))
			_ = image.Close()
			g.Expect(err).NotTo(HaveOccurred())
		}
	}
}

// initManagementCluster runs clusterctl init on the workload cluster w, from
// the same local repository as the first management cluster, and returns a
// client and a kubeconfig file for it.
func initManagementCluster(ctx context.Context, t *testing.T, g Gomega, w *workloadCluster) (client.Client, string) {
	kubeconfig := filepath.Join(t.TempDir(), w.name+".kubeconfig")
	g.Expect(os.WriteFile(kubeconfig, w.kubeconfig, 0o600)).To(Succeed())
	_, err := env.command(ctx, t, nil, "CLUSTERCTL", "init", "--kubeconfig", kubeconfig,
		"--config", env.settings["CLUSTERCTL_CONFIG"], "--infrastructure", "kubernetes",
		"--wait-providers", "--wait-provider-timeout", "600")
	g.Expect(err).NotTo(HaveOccurred())
	cfg, err := clientcmd.RESTConfigFromKubeConfig(w.kubeconfig)
	g.Expect(err).NotTo(HaveOccurred())
	c, err := newClient(cfg)
	g.Expect(err).NotTo(HaveOccurred())
	return c, kubeconfig
}

// expectUntouched checks that every Pod of before is in now with the same
// UID, running, and that none of its containers restarted.
func expectUntouched(g Gomega, before, now []corev1.Pod) {
	byName := map[string]corev1.Pod{}
	for _, p := range now {
		byName[p.Name] = p
	}
	for _, old := range before {
		p, found := byName[old.Name]
		g.Expect(found).To(BeTrue(), "node Pod %s is gone", old.Name)
		g.Expect(p.UID).To(Equal(old.UID), "node Pod %s was recreated", old.Name)
		g.Expect(p.Status.Phase).To(Equal(corev1.PodRunning), "node Pod %s", old.Name)
		for _, c := range p.Status.ContainerStatuses {
			g.Expect(c.RestartCount).To(BeZero(), "container %s of node Pod %s restarted", c.Name, p.Name)
		}
	}
}

// expectNoClusterObjects checks that a management cluster holds no Cluster
// API or provider objects in the namespace any more, and no hosting
// kubeconfig Secret.
func expectNoClusterObjects(ctx context.Context, g Gomega, c client.Client, namespace string) {
	for _, list := range []client.ObjectList{&clusterv1.ClusterList{}, &clusterv1.MachineList{},
		&infrav1.KubernetesClusterList{}, &infrav1.KubernetesMachineList{}, &infrav1.KubernetesMachineTemplateList{}} {
		g.Expect(c.List(ctx, list, client.InNamespace(namespace))).To(Succeed())
		g.Expect(meta.LenList(list)).To(BeZero(), "%T left on the first management cluster", list)
	}
	secrets := &corev1.SecretList{}
	g.Expect(c.List(ctx, secrets, client.InNamespace(namespace), client.HasLabels{hosting.KubeconfigLabel})).To(Succeed())
	g.Expect(secrets.Items).To(BeEmpty(), "hosting kubeconfig Secret left on the first management cluster")
}

// expectMachinesProvisioned checks that every KubernetesMachine of w on its
// management cluster has PodProvisioned=True.
func expectMachinesProvisioned(ctx context.Context, g Gomega, w *workloadCluster) {
	kms := &infrav1.KubernetesMachineList{}
	g.Expect(w.management.List(ctx, kms, client.InNamespace(w.namespace),
		client.MatchingLabels{clusterv1.ClusterNameLabel: w.name})).To(Succeed())
	g.Expect(kms.Items).NotTo(BeEmpty())
	for _, km := range kms.Items {
		g.Expect(meta.IsStatusConditionTrue(km.Status.Conditions, infrav1.KubernetesMachinePodProvisionedCondition)).
			To(BeTrue(), "KubernetesMachine %s:%s", km.Name, conditionSummary(km.Status.Conditions))
	}
}
