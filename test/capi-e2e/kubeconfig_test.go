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
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// restrictedHostingKubeconfig applies the RBAC example of
// docs/hosting-clusters.md for a ServiceAccount capk in the hosting namespace
// and returns a kubeconfig for the environment's API server with a 4-hour
// token of that ServiceAccount. The spec thereby proves the documented
// permissions are enough, and the cluster template (which the framework writes
// to the artifacts) holds no administrator credentials.
func restrictedHostingKubeconfig(hostingNamespace string) []byte {
	c := bootstrapClusterProxy.GetClient()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: hostingNamespace, Name: "capk"}}
	Expect(c.Create(ctx, sa)).To(Succeed())
	for _, obj := range documentedHostingRBAC(hostingNamespace) {
		Expect(c.Create(ctx, obj)).To(Succeed())
		if obj.GetNamespace() == "" { // the namespaced ones go with the namespace
			DeferCleanup(func() { Expect(client.IgnoreNotFound(c.Delete(ctx, obj))).To(Succeed()) })
		}
	}
	token, err := bootstrapClusterProxy.GetClientSet().CoreV1().ServiceAccounts(hostingNamespace).CreateToken(ctx, sa.Name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](4 * 3600)}},
		metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())

	admin, err := clientcmd.LoadFromFile(settings["KUBECONFIG"])
	Expect(err).NotTo(HaveOccurred())
	Expect(clientcmdapi.FlattenConfig(admin)).To(Succeed())
	server := admin.Clusters[admin.Contexts[admin.CurrentContext].Cluster]
	Expect(server).NotTo(BeNil(), "no cluster in %s", settings["KUBECONFIG"])
	data, err := clientcmd.Write(clientcmdapi.Config{
		Clusters:       map[string]*clientcmdapi.Cluster{"hosting": server},
		AuthInfos:      map[string]*clientcmdapi.AuthInfo{"capk": {Token: token.Status.Token}},
		Contexts:       map[string]*clientcmdapi.Context{"capk": {Cluster: "hosting", AuthInfo: "capk", Namespace: hostingNamespace}},
		CurrentContext: "capk",
	})
	Expect(err).NotTo(HaveOccurred())
	return data
}

// documentedHostingRBAC decodes the first YAML block after the heading
// "Permissions the kubeconfig needs" of docs/hosting-clusters.md, for a
// ServiceAccount in hostingNamespace and with cluster-scoped names of its own.
func documentedHostingRBAC(hostingNamespace string) []client.Object {
	doc, err := os.ReadFile(filepath.Join(repositoryRoot, "docs", "hosting-clusters.md"))
	Expect(err).NotTo(HaveOccurred())
	_, section, found := strings.Cut(string(doc), "### Permissions the kubeconfig needs")
	Expect(found).To(BeTrue(), "docs/hosting-clusters.md lost its permissions section")
	_, block, found := strings.Cut(section, "```yaml\n")
	Expect(found).To(BeTrue(), "no YAML block in the permissions section of docs/hosting-clusters.md")
	block, _, found = strings.Cut(block, "```")
	Expect(found).To(BeTrue())
	block = strings.ReplaceAll(block, "workload-nodes", hostingNamespace)
	block = strings.ReplaceAll(block, "name: capk-hosting-read", "name: capk-hosting-read-"+hostingNamespace)
	var objects []client.Object
	for _, document := range strings.Split(block, "\n---\n") {
		obj := &unstructured.Unstructured{}
		Expect(yaml.Unmarshal([]byte(document), &obj.Object)).To(Succeed())
		objects = append(objects, obj)
	}
	Expect(objects).To(HaveLen(4), "the RBAC example of docs/hosting-clusters.md")
	return objects
}
