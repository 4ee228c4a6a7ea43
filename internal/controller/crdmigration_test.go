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
	"strconv"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apidiscovery "k8s.io/apiserver/pkg/endpoints/discovery"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1alpha1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1alpha1"
	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
)

// TestStorageVersionMigration plays an upgrade from v0.1, whose CRDs stored
// v1alpha1, on a real API server: objects written while v1alpha1 is the
// storage version, then the CRDs switched to v1beta1 storage as the new
// release's CRDs are. The CRD migrator rewrites the objects and leaves
// status.storedVersions at v1beta1 alone; the objects read the same.
func TestStorageVersionMigration(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	namespace := newNamespace(t)
	crds := map[string]string{"kubernetesclusters": "KubernetesCluster", "kubernetesmachinetemplates": "KubernetesMachineTemplate"}
	t.Cleanup(func() {
		for resource := range crds {
			setStorageVersion(NewWithT(t), resource, "v1beta1")
		}
	})
	for resource, kind := range crds {
		setStorageVersion(g, resource, "v1alpha1")
		expectOnlyStoredVersion(g, resource, "v1alpha1")
		// The objects below must be written as v1alpha1 for the migration to have work.
		expectServedStorageVersion(g, resource, kind, "v1alpha1")
	}

	kc := &infrav1alpha1.KubernetesCluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "old"},
		Spec:       infrav1alpha1.KubernetesClusterSpec{ControlPlaneServiceType: "NodePort"},
	}
	g.Expect(env.Client.Create(ctx, kc)).To(Succeed())
	template := &infrav1alpha1.KubernetesMachineTemplate{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "old"},
		Spec: infrav1alpha1.KubernetesMachineTemplateSpec{Template: infrav1alpha1.KubernetesMachineTemplateResource{
			Spec: infrav1alpha1.KubernetesMachineSpec{Image: "localhost/capk-node:v1.35.4",
				NodeSelector: map[string]string{"disk": "ssd"}},
		}},
	}
	g.Expect(env.Client.Create(ctx, template)).To(Succeed())
	for resource, obj := range map[string]client.Object{"kubernetesclusters": kc, "kubernetesmachinetemplates": template} {
		expectStoredAs(g, resource, obj, infrav1alpha1.GroupVersion.String())
	}
	clusterBefore, templateBefore := readHub(g, kc, template)
	// The migrator lists KubernetesClusters from the manager's cache: one the
	// cache has not seen yet, or has seen at an older version, would be skipped.
	g.Eventually(func(g Gomega) {
		cached := &infrav1.KubernetesCluster{}
		g.Expect(env.Manager.GetClient().Get(ctx, client.ObjectKeyFromObject(clusterBefore), cached)).To(Succeed())
		g.Expect(cached.ResourceVersion).To(Equal(clusterBefore.ResourceVersion))
	}).WithTimeout(10 * time.Second).WithPolling(100 * time.Millisecond).Should(Succeed())

	for resource := range crds {
		setStorageVersion(g, resource, "v1beta1")
		expectOnlyStoredVersion(g, resource, "v1beta1")
	}
	clusterAfter, templateAfter := readHub(g, kc, template)
	g.Expect(clusterAfter.Spec).To(Equal(clusterBefore.Spec))
	g.Expect(templateAfter.Spec).To(Equal(templateBefore.Spec))
	g.Expect(clusterAfter.Spec.ControlPlaneService.Type).To(BeEquivalentTo("NodePort"))
	g.Expect(templateAfter.Spec.Template.Spec.Spreading).
		To(Equal(infrav1.SpreadingPreferred), "hub-only fields of objects written as v1alpha1 are defaulted")
	g.Expect(clusterAfter.ResourceVersion).NotTo(Equal(clusterBefore.ResourceVersion), "the migrator rewrote the object")
	g.Expect(templateAfter.ResourceVersion).NotTo(Equal(templateBefore.ResourceVersion), "the migrator rewrote the object")
	// What the rewrite stored is not checked: the migrator starts on the CRD
	// change, and the API server may still store the old version for a moment
	// (the same lag as above), which a real upgrade, where the CRDs are applied
	// long before, does not meet.
}

// expectStoredAs waits until obj is stored in etcd as apiVersion. The API
// server takes up a new storage version a moment after its discovery shows
// it (both follow the CRD, apart), so an object written in that moment is
// stored in the old one; a rewrite (a label that changes) stores it again.
func expectStoredAs(g Gomega, resource string, obj client.Object, apiVersion string) {
	ctx := context.Background()
	rewrites := 0
	g.Eventually(func(g Gomega) {
		stored, err := env.StoredAPIVersion(ctx, infrav1.GroupVersion.Group, resource, obj.GetNamespace(), obj.GetName())
		g.Expect(err).NotTo(HaveOccurred())
		if stored == apiVersion {
			return
		}
		rewrites++
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
		obj.SetLabels(map[string]string{"rewrite": strconv.Itoa(rewrites)})
		g.Expect(env.Client.Update(ctx, obj)).To(Succeed())
		g.Expect(stored).To(Equal(apiVersion))
	}).WithTimeout(30 * time.Second).WithPolling(200 * time.Millisecond).Should(Succeed())
}

// setStorageVersion makes version the storage version of the provider's CRD of
// resource, as applying a release's CRDs does.
func setStorageVersion(g Gomega, resource, version string) {
	g.Eventually(func(g Gomega) {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Name: crdName(resource)}, crd)).To(Succeed())
		for i := range crd.Spec.Versions {
			crd.Spec.Versions[i].Storage = crd.Spec.Versions[i].Name == version
		}
		g.Expect(env.Client.Update(context.Background(), crd)).To(Succeed())
	}).WithTimeout(10 * time.Second).Should(Succeed())
}

// expectOnlyStoredVersion waits until the migrator handled the CRD's current
// generation and its status.storedVersions holds version alone.
func expectOnlyStoredVersion(g Gomega, resource, version string) {
	g.Eventually(func(g Gomega) {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Name: crdName(resource)}, crd)).To(Succeed())
		g.Expect(crd.Annotations).To(HaveKeyWithValue(clusterv1.CRDMigrationObservedGenerationAnnotation,
			strconv.FormatInt(crd.Generation, 10)))
		g.Expect(crd.Status.StoredVersions).To(Equal([]string{version}))
	}).WithTimeout(30 * time.Second).WithPolling(200 * time.Millisecond).Should(Succeed())
}

// crdName is the name of the provider's CRD of resource.
func crdName(resource string) string { return resource + "." + infrav1.GroupVersion.Group }

// expectServedStorageVersion waits until the API server writes new objects of
// resource as version: its discovery names that version's storage hash once
// the API server has seen the CRD change, and its handlers read the same.
func expectServedStorageVersion(g Gomega, resource, kind, version string) {
	api, err := discovery.NewDiscoveryClientForConfig(env.Config)
	g.Expect(err).NotTo(HaveOccurred())
	want := apidiscovery.StorageVersionHash(infrav1.GroupVersion.Group, version, kind)
	g.Eventually(func(g Gomega) {
		resources, err := api.ServerResourcesForGroupVersion(infrav1.GroupVersion.String())
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(resources.APIResources).To(ContainElement(And(
			HaveField("Name", resource), HaveField("StorageVersionHash", want))))
	}).WithTimeout(30 * time.Second).WithPolling(200 * time.Millisecond).Should(Succeed())
}

// readHub reads the cluster and the template as v1beta1.
func readHub(g Gomega, kc *infrav1alpha1.KubernetesCluster,
	template *infrav1alpha1.KubernetesMachineTemplate) (*infrav1.KubernetesCluster, *infrav1.KubernetesMachineTemplate) {
	hubCluster, hubTemplate := &infrav1.KubernetesCluster{}, &infrav1.KubernetesMachineTemplate{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(kc), hubCluster)).To(Succeed())
	g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(template), hubTemplate)).To(Succeed())
	return hubCluster, hubTemplate
}

// TestV1alpha1ServedWithDeprecationWarning checks that every request to a
// v1alpha1 resource gets the deprecation warning, and that v1beta1 gets none.
func TestV1alpha1ServedWithDeprecationWarning(t *testing.T) {
	g := NewWithT(t)
	namespace := newNamespace(t)
	warnings := &warningRecorder{}
	cfg := rest.CopyConfig(env.Config)
	cfg.WarningHandler = warnings
	api, err := dynamic.NewForConfig(cfg)
	g.Expect(err).NotTo(HaveOccurred())
	const deprecated = "infrastructure.cluster.x-k8s.io/v1alpha1 is deprecated; use infrastructure.cluster.x-k8s.io/v1beta1"
	for _, resource := range []string{"kubernetesclusters", "kubernetesclustertemplates", "kubernetesmachines",
		"kubernetesmachinetemplates"} {
		_, err := api.Resource(infrav1alpha1.GroupVersion.WithResource(resource)).Namespace(namespace).
			List(context.Background(), metav1.ListOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(warnings.take()).To(ConsistOf(deprecated), "v1alpha1 %s", resource)
		_, err = api.Resource(infrav1.GroupVersion.WithResource(resource)).Namespace(namespace).
			List(context.Background(), metav1.ListOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(warnings.take()).To(BeEmpty(), "v1beta1 %s", resource)
	}
}

// warningRecorder keeps the warnings of API responses.
type warningRecorder struct {
	mu       sync.Mutex
	warnings []string
}

func (r *warningRecorder) HandleWarningHeader(_ int, _ string, text string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.warnings = append(r.warnings, text)
}

// take returns the warnings recorded so far and forgets them.
func (r *warningRecorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	taken := r.warnings
	r.warnings = nil
	return taken
}
