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
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/test/envtest"
)

// createAll creates the objects in order, as `kubectl create` would.
func createAll(ctx context.Context, g Gomega, c client.Client, objects []*unstructured.Unstructured) {
	for _, obj := range objects {
		g.Expect(c.Create(ctx, obj)).To(Succeed(), "creating %s %s", obj.GetKind(), obj.GetName())
	}
}

// newNamespace creates a namespace for one test; the namespace allows
// privileged Pods, which node Pods are.
func newNamespace(ctx context.Context, t testing.TB, g Gomega) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name:   "e2e-" + rand.String(5),
		Labels: map[string]string{"pod-security.kubernetes.io/enforce": "privileged"},
	}}
	g.Expect(env.client.Create(ctx, ns)).To(Succeed())
	t.Logf("namespace %s", ns.Name)
	return ns.Name
}

// podnetCommand is the podnet container's command in its manifest.
const podnetCommand = "command: [/usr/local/bin/podnet]"

// installPodnet gives every Cluster labelled cni=podnet in the namespace the
// pod network of the offline node image, through a ClusterResourceSet (the
// way Cluster API users install a CNI). Here podnet tunnels every peer
// (-encap=always): node Pods on one hosting node would otherwise always be
// routed directly, and the VXLAN path that node Pods on different hosting
// nodes take would go untested. Cluster API's specs run the default.
func installPodnet(ctx context.Context, g Gomega, namespace string) {
	configMap := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "podnet", Namespace: namespace},
		Data:       map[string]string{"podnet.yaml": tunnelledPodnet(g)},
	}
	g.Expect(env.client.Create(ctx, configMap)).To(Succeed())
	data, err := os.ReadFile(filepath.Join(filepath.Dir(env.settings["PODNET_MANIFEST"]), "clusterresourceset.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	crs, err := envtest.DecodeObjects(data)
	g.Expect(err).NotTo(HaveOccurred())
	for _, obj := range crs {
		obj.SetNamespace(namespace)
	}
	createAll(ctx, g, env.client, crs)
}

// tunnelledPodnet is podnet's manifest with every peer tunnelled.
func tunnelledPodnet(g Gomega) string {
	manifest, err := os.ReadFile(env.settings["PODNET_MANIFEST"])
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(strings.Count(string(manifest), podnetCommand)).To(Equal(1), "podnet's manifest changed its command")
	return strings.Replace(string(manifest), podnetCommand, "command: [/usr/local/bin/podnet, -encap=always]", 1)
}
