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

package capie2e

import (
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	capispecs "sigs.k8s.io/cluster-api/test/e2e"
	"sigs.k8s.io/cluster-api/test/framework"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/test/envtest"
)

// The self-hosted spec moves a cluster into itself and back. Its node Pods
// must stay where they are while the management cluster changes, so the
// cluster is of the remote-hosting flavor: its KubernetesCluster names the
// hosting cluster (the environment's) by a kubeconfig Secret, which moves with
// it; the kubeconfig has only the permissions docs/hosting-clusters.md lists.
// Before clusterctl init on the workload cluster, the images of Cluster API,
// cert-manager and the provider are imported into its node Pods' containerd,
// as kind load does for the docker provider: no registry is in reach. Then
// Cluster API and the provider are installed with the Cluster API Operator as
// docs/install.md shows (the spec's clusterctl init finds them and does
// nothing), so the move's target is an operator-managed cluster. After
// each move the suite checks that no node Pod was recreated or restarted. The
// Kubernetes upgrade of the spec is skipped (SkipUpgrade).
var _ = Describe("When testing Cluster API working on self-hosted clusters", minutes(8), func() {
	var (
		hostingNamespace string
		nodePods         []corev1.Pod // before the moves
		moveErrs         []error      // what the checks after the moves found
	)
	BeforeEach(func() {
		hostingNamespace = useHostingNamespace("self-hosted-nodes-")
		// The checks run inside the spec's AfterEach, where a failed assertion
		// would skip the move back and the deletion: they record, this asserts.
		moveErrs = nil
		DeferCleanup(func() {
			Expect(errors.Join(moveErrs...)).NotTo(HaveOccurred())
		})
	})

	checkNodePods := func(after string) {
		By("Checking that no node Pod was recreated or restarted " + after)
		moveErrs = append(moveErrs, untouched(nodePods, listNodePods(hostingNamespace)))
	}
	capispecs.SelfHostedSpec(ctx, func() capispecs.SelfHostedSpecInput {
		return capispecs.SelfHostedSpecInput{
			E2EConfig:            e2eConfig,
			ClusterctlConfigPath: clusterctlConfigPath,
			BootstrapClusterProxy: leftoverCheckingProxy{ClusterProxy: bootstrapClusterProxy,
				beforeClusterDelete: func() { checkNodePods("by the move back") }},
			ArtifactFolder: artifactFolder,
			SkipCleanup:    skipCleanup,
			Flavor:         "remote-hosting",
			SkipUpgrade:    true,
			// Called for the spec's namespace on the management cluster, and on
			// the workload cluster before clusterctl init and the move.
			PostNamespaceCreated: func(proxy framework.ClusterProxy, _ string) {
				if proxy.GetName() != bootstrapClusterProxy.GetName() {
					loadManagementImages(hostingNamespace)
					nodePods = listNodePods(hostingNamespace)
					installWithOperator(proxy, filepath.Join(artifactFolder, "clusters", proxy.GetName()))
				}
			},
			// Called on the self-hosted cluster after the move into it.
			PreCleanupSelfHostedCluster: func(framework.ClusterProxy) { checkNodePods("by the move into the cluster") },
		}
	})
})

// useHostingNamespace makes a hosting namespace for a spec's remote-hosting
// clusters and a kubeconfig for it with the documented permissions, and hands
// both to the flavors (CAPK_HOSTING_NAMESPACE, CAPK_HOSTING_KUBECONFIG_B64)
// until the spec ends; then it deletes the namespace. It returns the
// namespace's name, prefix and a random suffix.
func useHostingNamespace(prefix string) string {
	name := prefix + rand.String(6)
	createHostingNamespace(name)
	DeferCleanup(func() {
		if !skipCleanup {
			deleteHostingNamespace(name)
		}
	})
	kubeconfig := restrictedHostingKubeconfig(name)
	Expect(os.Setenv("CAPK_HOSTING_NAMESPACE", name)).To(Succeed())
	Expect(os.Setenv("CAPK_HOSTING_KUBECONFIG_B64", base64.StdEncoding.EncodeToString(kubeconfig))).To(Succeed())
	DeferCleanup(func() {
		Expect(os.Unsetenv("CAPK_HOSTING_NAMESPACE")).To(Succeed())
		Expect(os.Unsetenv("CAPK_HOSTING_KUBECONFIG_B64")).To(Succeed())
	})
	return name
}

// createHostingNamespace creates a namespace for node Pods on the hosting
// cluster (the environment's) that allows privileged Pods.
func createHostingNamespace(name string) {
	namespace := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name:   name,
		Labels: map[string]string{"pod-security.kubernetes.io/enforce": "privileged"},
	}}
	Expect(bootstrapClusterProxy.GetClient().Create(ctx, namespace)).To(Succeed())
}

// deleteHostingNamespace deletes it once its clusters are gone, after
// checking that the provider deleted everything it made in it: the namespace's
// deletion would remove those objects anyway.
func deleteHostingNamespace(name string) {
	By("Checking that nothing the provider made is left in hosting namespace " + name)
	expectNothingLeft(func() (string, error) { return envtest.Leftovers(ctx, bootstrapClusterProxy.GetClient(), name) })
	namespace := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	Expect(bootstrapClusterProxy.GetClient().Delete(ctx, namespace)).To(Succeed())
}

// loadManagementImages imports every image of the environment's management
// components into the containerd of each node Pod in the hosting namespace:
// the controllers run on the workers, and cert-manager and the providers'
// Deployments of the environment also tolerate control-plane nodes.
func loadManagementImages(hostingNamespace string) {
	tars, err := filepath.Glob(filepath.Join(settings["MANAGEMENT_IMAGES"], "*.tar"))
	Expect(err).NotTo(HaveOccurred())
	Expect(tars).NotTo(BeEmpty(), "no images in %s", settings["MANAGEMENT_IMAGES"])
	for _, pod := range listNodePods(hostingNamespace) {
		for _, tar := range tars {
			By("Importing " + filepath.Base(tar) + " into node Pod " + pod.Name)
			image, err := os.Open(tar) //nolint:gosec // the environment's own images
			Expect(err).NotTo(HaveOccurred())
			cmd := exec.CommandContext(ctx, settings["KUBECTL"], "--kubeconfig", settings["KUBECONFIG"],
				"exec", "-i", "-n", hostingNamespace, pod.Name, "--", "ctr", "--namespace", "k8s.io", "images", "import", "-")
			cmd.Stdin = image
			out, err := cmd.CombinedOutput()
			Expect(image.Close()).To(Succeed())
			Expect(err).NotTo(HaveOccurred(), "importing %s: %s", tar, out)
		}
	}
}

// listNodePods lists the node Pods in a hosting namespace.
func listNodePods(hostingNamespace string) []corev1.Pod {
	pods := &corev1.PodList{}
	Expect(bootstrapClusterProxy.GetClient().List(ctx, pods, client.InNamespace(hostingNamespace),
		client.MatchingLabels{infrav1.ManagedByLabel: infrav1.ManagedByValue})).To(Succeed())
	Expect(pods.Items).NotTo(BeEmpty(), "no node Pods in %s", hostingNamespace)
	return pods.Items
}

// untouched says how now differs from before, if it does: every node Pod of
// before must be in now with the same UID, running, and with no more
// container restarts than before.
func untouched(before, now []corev1.Pod) error {
	current := map[string]corev1.Pod{}
	for _, pod := range now {
		current[pod.Name] = pod
	}
	var errs []error
	for _, pod := range before {
		after, ok := current[pod.Name]
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("node Pod %s is gone", pod.Name))
		case after.UID != pod.UID:
			errs = append(errs, fmt.Errorf("node Pod %s was recreated", pod.Name))
		case after.Status.Phase != corev1.PodRunning:
			errs = append(errs, fmt.Errorf("node Pod %s is %s", pod.Name, after.Status.Phase))
		case restarts(after) != restarts(pod):
			errs = append(errs, fmt.Errorf("node Pod %s restarted %d times", pod.Name, restarts(after)-restarts(pod)))
		}
	}
	return errors.Join(errs...)
}

func restarts(pod corev1.Pod) int32 {
	var n int32
	for _, status := range pod.Status.ContainerStatuses {
		n += status.RestartCount
	}
	return n
}
