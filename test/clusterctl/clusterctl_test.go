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

package clusterctl

import (
	"context"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/test/envtest"
)

// certManagerModule holds the cert-manager CRDs the components need.
const certManagerModule = "github.com/cert-manager/cert-manager@v1.21.2"

var (
	// env has the Cluster API, cert-manager and provider CRDs and the provider's webhooks.
	env *envtest.Environment
	// bare has only cert-manager's CRDs: the provider's components install on it.
	bare *envtest.HostingCluster
)

func TestMain(m *testing.M) {
	envtest.RunMain(m, run)
}

func run(m *testing.M) (int, error) {
	certManager, err := envtest.ModuleDir(certManagerModule)
	if err != nil {
		return 0, err
	}
	certManagerCRDs := filepath.Join(certManager, "deploy", "crds")
	env, err = envtest.Start(envtest.Options{ClusterAPICRDs: true, ClusterAPIWebhooks: true, ExtraCRDPaths: []string{certManagerCRDs}})
	if err != nil {
		return 0, err
	}
	if bare, err = envtest.StartHostingCluster(certManagerCRDs); err != nil {
		return 0, errors.Join(err, env.Stop())
	}
	code := m.Run()
	return code, errors.Join(env.Stop(), bare.Stop())
}

// readComponents returns the components as clusterctl renders them for
// installation: clusterctl generate provider fails on any variable without a
// default, as clusterctl init would.
func readComponents(t *testing.T, g Gomega, env ...string) []*unstructured.Unstructured {
	data, err := os.ReadFile(filepath.Join(envtest.RepositoryRoot(), "out", "infrastructure-components.yaml"))
	g.Expect(err).NotTo(HaveOccurred(), "run 'make release-manifests' (make test does)")
	g.Expect(string(data)).To(ContainSubstring("${CAPK_IMAGE:="), "the image is substitutable")
	_, err = substituteDefaults(data)
	g.Expect(err).NotTo(HaveOccurred())

	dir := t.TempDir()
	config, err := localRepository(dir)
	g.Expect(err).NotTo(HaveOccurred())
	rendered, err := clusterctl(dir, env, "generate", "provider", "--infrastructure", "kubernetes:"+providerVersion, "--config", config)
	g.Expect(err).NotTo(HaveOccurred())
	objects, err := envtest.DecodeObjects(rendered)
	g.Expect(err).NotTo(HaveOccurred())
	return objects
}

func TestComponentsFollowTheClusterctlContract(t *testing.T) {
	g := NewWithT(t)
	objects := readComponents(t, g, "CAPK_IMAGE=registry.example/capk:v9")
	image := ""
	namespaces := 0
	for _, obj := range objects {
		g.Expect(obj.GetLabels()).To(HaveKeyWithValue("cluster.x-k8s.io/provider", "infrastructure-kubernetes"), "%s %s", obj.GetKind(), obj.GetName())
		switch obj.GetKind() {
		case "Namespace":
			namespaces++
		case "CustomResourceDefinition":
			g.Expect(obj.GetLabels()).To(HaveKeyWithValue("cluster.x-k8s.io/v1beta2", "v1alpha1_v1beta1"))
		case "Deployment":
			containers, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
			g.Expect(containers).To(HaveLen(1))
			g.Expect(containers[0]).To(HaveKeyWithValue("name", "manager"))
			image, _ = containers[0].(map[string]any)["image"].(string)
			args, _ := containers[0].(map[string]any)["args"].([]any)
			g.Expect(args).To(ContainElements("--leader-elect", "--namespace=", "--watch-filter="), "clusterctl installs providers watching all namespaces")
		}
		if obj.GetNamespace() != "" {
			g.Expect(obj.GetNamespace()).To(Equal("capk-system"), "%s %s", obj.GetKind(), obj.GetName())
		}
	}
	g.Expect(namespaces).To(Equal(1), "exactly one Namespace, the default target namespace")
	g.Expect(image).To(Equal("registry.example/capk:v9"), "CAPK_IMAGE sets the manager image")
	expectReferencesResolve(g, objects)
}

// expectReferencesResolve checks the references that kustomize's namePrefix
// must rewrite: a Certificate's issuer and secret, the Deployment's volume.
// cert-manager never issues a certificate whose Issuer does not exist, and the
// manager then waits forever for its webhook certificate.
func expectReferencesResolve(g Gomega, objects []*unstructured.Unstructured) {
	names := map[string]bool{}
	for _, obj := range objects {
		names[obj.GetKind()+"/"+obj.GetName()] = true
	}
	secrets := map[string]bool{}
	for _, obj := range objects {
		switch obj.GetKind() {
		case "Certificate":
			issuer, _, _ := unstructured.NestedString(obj.Object, "spec", "issuerRef", "name")
			g.Expect(names).To(HaveKey("Issuer/"+issuer), "Certificate %s names Issuer %q", obj.GetName(), issuer)
			secret, _, _ := unstructured.NestedString(obj.Object, "spec", "secretName")
			secrets[secret] = true
		}
	}
	for _, obj := range objects {
		if obj.GetKind() != "Deployment" {
			continue
		}
		volumes, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "volumes")
		for _, v := range volumes {
			if secret, ok, _ := unstructured.NestedString(v.(map[string]any), "secret", "secretName"); ok {
				g.Expect(secrets).To(HaveKey(secret), "Deployment volume Secret %q is issued by a Certificate", secret)
			}
		}
	}
}

func TestComponentsAreAcceptedByTheAPIServer(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	objects := readComponents(t, g)
	for _, obj := range objects {
		if obj.GetKind() == "Namespace" || obj.GetKind() == "CustomResourceDefinition" {
			g.Expect(serverSideApply(ctx, bare.Client, []*unstructured.Unstructured{obj}, false)).To(Succeed())
		}
	}
	g.Expect(serverSideApply(ctx, bare.Client, objects, true)).To(Succeed(), "the API server accepts every object")
}

// flavors are the templates users generate with clusterctl --flavor.
var flavors = []struct {
	name string
	env  []string
}{
	{name: ""},
	{name: "remote-hosting", env: []string{"CAPK_HOSTING_KUBECONFIG_B64=" + base64.StdEncoding.EncodeToString([]byte("apiVersion: v1\nkind: Config\n"))}},
	{name: "persistent-etcd"},
	{name: "topology"},
}

func TestEveryFlavorGeneratesAndIsAcceptedByTheAPIServer(t *testing.T) {
	dir := t.TempDir()
	config, err := localRepository(dir)
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig, err := envtest.KubeconfigFor(env.Config, "")
	if err != nil {
		t.Fatal(err)
	}
	kubeconfigPath := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfigPath, kubeconfig, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, flavor := range flavors {
		t.Run("flavor "+flavor.name, func(t *testing.T) {
			g := NewWithT(t)
			ctx := context.Background()
			namespace := "flavor-" + strings.TrimSuffix(flavor.name+"-x", "-x")
			if flavor.name == "" {
				namespace = "flavor-default"
			}
			g.Expect(client.IgnoreAlreadyExists(env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}))).To(Succeed())
			args := []string{"generate", "cluster", "dev", "--config", config, "--kubeconfig", kubeconfigPath,
				"--infrastructure", "kubernetes:" + providerVersion, "--target-namespace", namespace,
				"--kubernetes-version", "v1.36.3", "--control-plane-machine-count", "1", "--worker-machine-count", "2"}
			if flavor.name != "" {
				args = append(args, "--flavor", flavor.name)
			}
			out, err := clusterctl(dir, flavor.env, args...)
			g.Expect(err).NotTo(HaveOccurred())
			objects, err := envtest.DecodeObjects(out)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(objects).NotTo(BeEmpty())
			t.Logf("clusterctl %s: %d objects", strings.Join(args[:3], " "), len(objects))

			g.Expect(serverSideApply(ctx, env.Client, objects, true)).To(Succeed(), "a dry run is accepted")
			g.Expect(serverSideApply(ctx, env.Client, objects, false)).To(Succeed())
			before := resourceVersions(g, objects)
			g.Expect(serverSideApply(ctx, env.Client, objects, false)).To(Succeed())
			g.Expect(resourceVersions(g, objects)).To(Equal(before), "applying the same manifests again changes nothing")
		})
	}
}

// resourceVersions reads back every applied object's resourceVersion.
func resourceVersions(g Gomega, objects []*unstructured.Unstructured) map[string]string {
	versions := map[string]string{}
	for _, obj := range objects {
		current := &unstructured.Unstructured{}
		current.SetGroupVersionKind(obj.GroupVersionKind())
		key := client.ObjectKey{Namespace: obj.GetNamespace(), Name: obj.GetName()}
		g.Expect(env.Client.Get(context.Background(), key, current)).To(Succeed())
		versions[obj.GetKind()+"/"+key.String()] = current.GetResourceVersion()
	}
	return versions
}
