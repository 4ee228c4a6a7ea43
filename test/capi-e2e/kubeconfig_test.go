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
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/test/envtest"
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
	rbac, err := envtest.DocumentedHostingRBAC(hostingNamespace)
	Expect(err).NotTo(HaveOccurred())
	Expect(rbac).To(HaveLen(4), "the RBAC example of docs/hosting-clusters.md")
	for _, obj := range rbac {
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
