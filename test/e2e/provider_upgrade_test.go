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
	"fmt"
	"os"
	"regexp"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/cluster-api/util/contract"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/conversion"

	infrav1alpha1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1alpha1"
	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
)

// previousRelease is the release of the provider before the current one
// (metadata.yaml), whose CRDs stored v1alpha1; test/infra/management/build.sh
// puts it in the local repository.
const previousRelease = "v0.1.0"

// providerKinds are the kinds of the provider's CRDs.
var providerKinds = []string{"KubernetesCluster", "KubernetesClusterTemplate", "KubernetesMachine", "KubernetesMachineTemplate"}

// installPreviousRelease replaces the environment's provider with v0.1, as if
// the management cluster had been set up when v0.1 was current: clusterctl
// delete (CRDs included, which is why no provider object may exist), then
// clusterctl init of v0.1.
func installPreviousRelease(ctx context.Context, t *testing.T, g Gomega) {
	for _, kind := range []string{"KubernetesCluster", "KubernetesMachine"} {
		g.Expect(listProviderObjects(ctx, g, "", infrav1.GroupVersion.Version, kind)).To(BeEmpty(),
			"%ss exist: the upgrade test needs a management cluster without provider objects", kind)
	}
	_, err := env.command(ctx, t, nil, "CLUSTERCTL", clusterctlArgs("delete", "--infrastructure", "kubernetes",
		"--include-crd")...)
	g.Expect(err).NotTo(HaveOccurred())
	_, err = env.command(ctx, t, nil, "CLUSTERCTL", clusterctlArgs("init", "--infrastructure", "kubernetes:"+previousRelease,
		"--wait-providers", "--wait-provider-timeout", "600")...)
	g.Expect(err).NotTo(HaveOccurred())
	expectStorage(ctx, g, "v1alpha1", []string{"v1alpha1"})
	waitProviderWebhooks(ctx, g)
}

// clusterctlArgs adds the environment's kubeconfig and local repository to a
// clusterctl command.
func clusterctlArgs(args ...string) []string {
	return append(args, "--kubeconfig", env.settings["KUBECONFIG"], "--config", env.settings["CLUSTERCTL_CONFIG"])
}

// expectStorage checks every provider CRD's storage version and
// status.storedVersions.
func expectStorage(ctx context.Context, g Gomega, storage string, stored []string) {
	for _, kind := range providerKinds {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		name := contract.CalculateCRDName(infrav1.GroupVersion.Group, kind)
		g.Expect(env.client.Get(ctx, client.ObjectKey{Name: name}, crd)).To(Succeed())
		for _, v := range crd.Spec.Versions {
			g.Expect(v.Storage).To(Equal(v.Name == storage), "CRD %s version %s: storage", name, v.Name)
		}
		g.Expect(crd.Status.StoredVersions).To(Equal(stored), "CRD %s: status.storedVersions", name)
	}
}

// waitProviderWebhooks waits until a server-side dry run of a v1alpha1
// KubernetesCluster passes the conversion, defaulting and validating webhooks
// of the freshly installed provider.
func waitProviderWebhooks(ctx context.Context, g Gomega) {
	g.Eventually(func(g Gomega) {
		probe := &unstructured.Unstructured{}
		probe.SetGroupVersionKind(infrav1.GroupVersion.WithKind("KubernetesCluster"))
		probe.SetNamespace("default")
		probe.SetName("webhook-probe")
		kc := toV1alpha1(g, probe)
		g.Expect(env.client.Create(ctx, kc, client.DryRunAll)).To(Succeed())
	}).WithTimeout(3 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
}

// createClusterAsV1alpha1 generates a cluster at the previous Kubernetes
// minor (1 control plane, 1 worker) and creates its provider objects as
// v1alpha1, the way manifests written for v0.1 did.
func createClusterAsV1alpha1(ctx context.Context, t *testing.T, g Gomega, namespace, name string) *workloadCluster {
	objects := generateCluster(ctx, t, g, clusterSpec{namespace: namespace, name: name,
		version: env.settings["KUBERNETES_PREVIOUS_VERSION"], workers: 1},
		"KUBERNETES_NODE_IMAGE="+env.settings["KUBERNETES_PREVIOUS_NODE_IMAGE"])
	converted := 0
	for i, obj := range objects {
		if obj.GroupVersionKind().Group != infrav1.GroupVersion.Group {
			continue
		}
		objects[i] = toV1alpha1(g, obj)
		converted++
	}
	g.Expect(converted).To(BeNumerically(">=", 3), "the template's KubernetesCluster and KubernetesMachineTemplates")
	createAll(ctx, g, env.client, objects)
	return &workloadCluster{namespace: namespace, name: name, management: env.client, hostingNamespace: namespace}
}

// v1alpha1Pair returns an empty v1beta1 object of a provider kind that a
// cluster template holds, and its empty v1alpha1 counterpart.
func v1alpha1Pair(g Gomega, kind string) (conversion.Hub, conversion.Convertible) {
	switch kind {
	case "KubernetesCluster":
		return &infrav1.KubernetesCluster{}, &infrav1alpha1.KubernetesCluster{}
	case "KubernetesClusterTemplate":
		return &infrav1.KubernetesClusterTemplate{}, &infrav1alpha1.KubernetesClusterTemplate{}
	case "KubernetesMachineTemplate":
		return &infrav1.KubernetesMachineTemplate{}, &infrav1alpha1.KubernetesMachineTemplate{}
	}
	g.Expect(kind).To(BeEmpty(), "the templates hold no other provider kind")
	return nil, nil
}

// toV1alpha1 converts a v1beta1 object with the provider's own conversion
// into a v1alpha1 object for the API.
func toV1alpha1(g Gomega, obj *unstructured.Unstructured) *unstructured.Unstructured {
	hub, spoke := v1alpha1Pair(g, obj.GetKind())
	g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, hub)).To(Succeed())
	g.Expect(spoke.ConvertFrom(hub)).To(Succeed())
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(spoke)
	g.Expect(err).NotTo(HaveOccurred())
	converted := &unstructured.Unstructured{Object: content}
	converted.SetAPIVersion(infrav1alpha1.GroupVersion.String())
	converted.SetKind(obj.GetKind())
	return converted
}

// expectProviderUpgrade upgrades the provider from v0.1 to the current
// release with clusterctl and checks what docs/upgrade.md promises: the CRD
// migrator leaves status.storedVersions at v1beta1 alone, every object reads
// the same in both versions as before, objects written as v1alpha1 show the
// v1beta1 defaults, both versions can be written, and no node Pod noticed.
func expectProviderUpgrade(ctx context.Context, t *testing.T, g Gomega, w *workloadCluster) {
	pods := w.nodePods(ctx, g)
	g.Expect(pods).To(HaveLen(2))
	before := map[string]map[string]any{}
	for _, version := range []string{"v1alpha1", "v1beta1"} {
		before[version] = providerSpecs(ctx, g, w.namespace, version)
	}
	g.Expect(before["v1beta1"]).To(HaveLen(5), "KubernetesCluster, 2 KubernetesMachineTemplates, 2 KubernetesMachines")

	start := time.Now()
	_, err := env.command(ctx, t, nil, "CLUSTERCTL", clusterctlArgs("upgrade", "apply", "--infrastructure",
		"capk-system/kubernetes:"+currentRelease(g), "--wait-providers", "--wait-provider-timeout", "600")...)
	g.Expect(err).NotTo(HaveOccurred())
	g.Eventually(func(g Gomega) { expectStorage(ctx, g, "v1beta1", []string{"v1beta1"}) }).
		WithTimeout(3 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
	t.Logf("clusterctl upgrade apply %s -> %s and the storage migration took %s", previousRelease, currentRelease(g),
		time.Since(start).Round(time.Second))

	for _, version := range []string{"v1alpha1", "v1beta1"} {
		g.Expect(providerSpecs(ctx, g, w.namespace, version)).To(Equal(before[version]), "specs read as %s", version)
	}
	expectHubDefaults(ctx, g, w)
	expectWritableInBothVersions(ctx, g, w.namespace)
	g.Eventually(func(g Gomega) {
		expectMachinesProvisioned(ctx, g, w)
		w.expectNodesReady(ctx, g, 2)
	}).WithTimeout(2 * time.Minute).WithPolling(5 * time.Second).Should(Succeed())
	expectUntouched(g, pods, w.nodePods(ctx, g))
	t.Logf("after the upgrade: %d objects read the same as v1alpha1 and v1beta1, node Pods kept their UIDs, no restarts",
		len(before["v1beta1"]))
}

// currentRelease is the provider version clusterctl.yaml points at.
func currentRelease(g Gomega) string {
	config, err := os.ReadFile(env.settings["CLUSTERCTL_CONFIG"])
	g.Expect(err).NotTo(HaveOccurred())
	m := regexp.MustCompile(`infrastructure-kubernetes/(v[^/]+)/infrastructure-components\.yaml`).FindSubmatch(config)
	g.Expect(m).NotTo(BeNil(), "clusterctl.yaml names no release of this provider")
	return string(m[1])
}

// providerSpecs reads the spec of every provider object of the namespace in
// one version, by kind/name.
func providerSpecs(ctx context.Context, g Gomega, namespace, version string) map[string]any {
	specs := map[string]any{}
	for _, kind := range providerKinds {
		for _, obj := range listProviderObjects(ctx, g, namespace, version, kind) {
			specs[kind+"/"+obj.GetName()] = obj.Object["spec"]
		}
	}
	return specs
}

// listProviderObjects lists the objects of a provider kind in one version;
// all namespaces when namespace is empty.
func listProviderObjects(ctx context.Context, g Gomega, namespace, version, kind string) []unstructured.Unstructured {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(schema.GroupVersionKind{Group: infrav1.GroupVersion.Group, Version: version, Kind: kind + "List"})
	g.Expect(env.client.List(ctx, list, client.InNamespace(namespace))).To(Succeed())
	return list.Items
}

// expectHubDefaults checks that objects written as v1alpha1, which has no
// field for them, read as v1beta1 with the defaults of the v1beta1 fields.
func expectHubDefaults(ctx context.Context, g Gomega, w *workloadCluster) {
	kc := &infrav1.KubernetesCluster{}
	g.Expect(env.client.Get(ctx, client.ObjectKey{Namespace: w.namespace, Name: w.name}, kc)).To(Succeed())
	g.Expect(kc.Spec.ControlPlaneService.Port).To(BeEquivalentTo(infrav1.DefaultAPIServerPort))
	g.Expect(kc.Spec.DisruptionBudgets.ControlPlane).To(Equal(infrav1.ControlPlaneBudgetQuorum))
	g.Expect(kc.Spec.NetworkIsolation.Mode).To(Equal(infrav1.NetworkIsolationEnabled))
	kms := &infrav1.KubernetesMachineList{}
	g.Expect(env.client.List(ctx, kms, client.InNamespace(w.namespace))).To(Succeed())
	g.Expect(kms.Items).To(HaveLen(2))
	for _, km := range kms.Items {
		g.Expect(km.Spec.Spreading).To(Equal(infrav1.SpreadingPreferred), "KubernetesMachine %s", km.Name)
	}
}

// expectWritableInBothVersions writes an annotation on every provider object
// of the namespace through each version and reads both back through each.
func expectWritableInBothVersions(ctx context.Context, g Gomega, namespace string) {
	versions := []string{"v1alpha1", "v1beta1"}
	for _, kind := range providerKinds {
		for _, obj := range listProviderObjects(ctx, g, namespace, "v1beta1", kind) {
			for _, version := range versions {
				target := &unstructured.Unstructured{}
				target.SetAPIVersion(infrav1.GroupVersion.Group + "/" + version)
				target.SetKind(kind)
				target.SetNamespace(namespace)
				target.SetName(obj.GetName())
				patch := fmt.Sprintf(`{"metadata":{"annotations":{"e2e.capk.dev/written-as-%s":"true"}}}`, version)
				g.Expect(env.client.Patch(ctx, target, client.RawPatch(types.MergePatchType, []byte(patch)))).
					To(Succeed(), "%s %s as %s", kind, obj.GetName(), version)
			}
			for _, version := range versions {
				read := &unstructured.Unstructured{}
				read.SetAPIVersion(infrav1.GroupVersion.Group + "/" + version)
				read.SetKind(kind)
				g.Expect(env.client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: obj.GetName()}, read)).To(Succeed())
				for _, written := range versions {
					g.Expect(read.GetAnnotations()).To(HaveKeyWithValue("e2e.capk.dev/written-as-"+written, "true"),
						"%s %s read as %s", kind, obj.GetName(), version)
				}
			}
		}
	}
}
