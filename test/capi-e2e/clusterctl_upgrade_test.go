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
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	capispecs "sigs.k8s.io/cluster-api/test/e2e"
	"sigs.k8s.io/cluster-api/test/framework"
	"sigs.k8s.io/cluster-api/util/contract"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
)

// previousRelease is the provider's release before the current one; the
// environment's local repository holds it (test/infra/management/build.sh) and
// config/kubernetes.yaml lists it.
const previousRelease = "v0.1.0"

// The clusterctl upgrade spec makes a workload cluster a management cluster
// with the provider's previous release, creates a cluster from it, runs
// `clusterctl upgrade apply` to the current release and checks that the
// cluster is reconciled without a rollout and still scales. Both clusters are
// of the remote-hosting flavors, with node Pods in one hosting namespace: node
// Pods in node Pods would not boot. Cluster API has one release here, so the
// "old" clusterctl is the environment's own, served on the loopback because
// the spec downloads it. The suite adds that the upgrade recreates or restarts
// no node Pod, and that it migrates the provider's storage as docs/upgrade.md
// says: v0.1's CRDs store v1alpha1, the current ones v1beta1, and afterwards
// every provider object reads the same in both versions as before.
var _ = Describe("When testing clusterctl upgrades from the provider's previous release", minutes(16), func() {
	var (
		hostingNamespace string
		clusterctlURL    string
		nodePods         []corev1.Pod   // before the upgrade
		specs            map[string]any // of the provider objects before the upgrade, by version/kind/namespace/name
	)
	BeforeEach(func() {
		hostingNamespace = useHostingNamespace("clusterctl-upgrade-nodes-")
		clusterctl := settings["CLUSTERCTL"]
		server := httptest.NewServer(http.FileServer(http.Dir(filepath.Dir(clusterctl))))
		DeferCleanup(server.Close)
		clusterctlURL = server.URL + "/" + filepath.Base(clusterctl)
	})
	capispecs.ClusterctlUpgradeSpec(ctx, func() capispecs.ClusterctlUpgradeSpecInput {
		return capispecs.ClusterctlUpgradeSpecInput{
			E2EConfig:                       e2eConfig,
			ClusterctlConfigPath:            clusterctlConfigPath,
			BootstrapClusterProxy:           specProxy,
			ArtifactFolder:                  artifactFolder,
			SkipCleanup:                     skipCleanup,
			InitWithBinary:                  clusterctlURL,
			InitWithKubernetesVersion:       e2eConfig.MustGetVariable(capispecs.KubernetesVersion),
			InitWithInfrastructureProviders: []string{"kubernetes:" + previousRelease},
			MgmtFlavor:                      "remote-hosting",
			WorkloadFlavor:                  "remote-hosting-workload",
			PreInit: func(framework.ClusterProxy) {
				loadManagementImages(hostingNamespace)
			},
			PreUpgrade: func(management framework.ClusterProxy) {
				nodePods = listNodePods(hostingNamespace)
				Expect(storage(management.GetClient())).To(Equal(everyKind("v1alpha1")), "the previous release's CRDs")
				specs = providerSpecs(management.GetClient())
				Expect(specs).NotTo(BeEmpty())
			},
			PostUpgrade: func(management framework.ClusterProxy, _, _ string) {
				By("Checking that the upgrade recreated or restarted no node Pod")
				Expect(untouched(nodePods, listNodePods(hostingNamespace))).To(Succeed())
				By("Checking that the provider's objects moved to v1beta1 storage and read as before")
				Eventually(func() (map[string]string, error) { return storage(management.GetClient()) }).
					WithTimeout(3 * time.Minute).WithPolling(5 * time.Second).
					Should(Equal(everyKind("v1beta1")))
				Expect(providerSpecs(management.GetClient())).To(Equal(specs))
			},
		}
	})
})

// providerKinds are the kinds of the provider's CRDs.
var providerKinds = []string{"KubernetesCluster", "KubernetesClusterTemplate", "KubernetesMachine",
	"KubernetesMachineTemplate"}

// storage says, for each provider kind, the version its CRD stores and its
// status.storedVersions, as "<storage> <storedVersions>".
func storage(c client.Client) (map[string]string, error) {
	found := map[string]string{}
	for _, kind := range providerKinds {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(ctx, client.ObjectKey{Name: contract.CalculateCRDName(infrav1.GroupVersion.Group, kind)}, crd); err != nil {
			return nil, err
		}
		for _, v := range crd.Spec.Versions {
			if v.Storage {
				found[kind] = v.Name
			}
		}
		found[kind] += " " + fmt.Sprint(crd.Status.StoredVersions)
	}
	return found, nil
}

// everyKind is what storage returns when every provider CRD stores version
// and lists only it as stored.
func everyKind(version string) map[string]string {
	want := map[string]string{}
	for _, kind := range providerKinds {
		want[kind] = version + " [" + version + "]"
	}
	return want
}

// providerSpecs reads the spec of every provider object of the cluster in
// both served versions, by version/kind/namespace/name.
func providerSpecs(c client.Client) map[string]any {
	specs := map[string]any{}
	for _, version := range []string{"v1alpha1", "v1beta1"} {
		for _, kind := range providerKinds {
			list := &unstructured.UnstructuredList{}
			list.SetAPIVersion(infrav1.GroupVersion.Group + "/" + version)
			list.SetKind(kind + "List")
			Expect(c.List(ctx, list)).To(Succeed())
			for _, obj := range list.Items {
				specs[version+"/"+kind+"/"+obj.GetNamespace()+"/"+obj.GetName()] = obj.Object["spec"]
			}
		}
	}
	return specs
}
