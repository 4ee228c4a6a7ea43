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

// The floor of make bench-nodes: the node image started by hand as bare node
// Pods, kubeadm init on one and then kubeadm join on another, with no
// Cluster API controller and no provider in between.

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	"sigs.k8s.io/cluster-api/util/certs"
	"sigs.k8s.io/cluster-api/util/kubeconfig"
	"sigs.k8s.io/cluster-api/util/secret"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/internal/bootstrap"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/internal/nodepod"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/test/envtest"
)

const (
	// floorCluster is the name the floor's node Pods carry as their cluster's.
	floorCluster      = "floor"
	floorKubeadmInit  = "/run/kubeadm/kubeadm.yaml"
	floorKubeadmJoin  = "/run/kubeadm/kubeadm-join-config.yaml"
	floorCriSocket    = "unix:///run/containerd/containerd.sock"
	floorSuccessMark  = " && echo success > " + bootstrap.SentinelPath
	floorPodCIDR      = "10.244.0.0/16" // the default template's
	floorServiceCIDR  = "10.96.0.0/12"  // the default template's
	floorAPIServerURL = "https://%s:6443"
)

// floorRun is one floor measurement: its hosting namespace, the workload
// cluster's certificates (made here, as the kubeadm bootstrap provider makes
// them) and its bootstrap token.
type floorRun struct {
	namespace string
	certs     secret.Certificates
	token     string
	// files and postKubeadm are the default template's control-plane files
	// and commands, workerFiles its workers' files.
	files, workerFiles []bootstrapv1.File
	postKubeadm        []string
}

func newFloorRun(g Gomega, namespace string) *floorRun {
	f := &floorRun{namespace: namespace, certs: secret.NewCertificatesForInitialControlPlane(&bootstrapv1.ClusterConfiguration{}),
		token: rand.String(6) + "." + rand.String(16)}
	g.Expect(f.certs.Generate()).To(Succeed())
	f.readTemplate(g)
	return f
}

// readTemplate takes the files and commands of the default template's
// KubeadmControlPlane and KubeadmConfigTemplate, so that the floor's nodes
// get the same kubelet settings and the same kube-proxy fix.
func (f *floorRun) readTemplate(g Gomega) {
	data, err := os.ReadFile(filepath.Join(envtest.RepositoryRoot(), "templates", "cluster-template.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	objects, err := envtest.DecodeObjects(data)
	g.Expect(err).NotTo(HaveOccurred())
	for _, obj := range objects {
		switch obj.GetKind() {
		case "KubeadmControlPlane":
			f.files = templateFiles(g, obj, "spec", "kubeadmConfigSpec", "files")
			f.postKubeadm, _, err = unstructured.NestedStringSlice(obj.Object, "spec", "kubeadmConfigSpec", "postKubeadmCommands")
			g.Expect(err).NotTo(HaveOccurred())
		case "KubeadmConfigTemplate":
			f.workerFiles = templateFiles(g, obj, "spec", "template", "spec", "files")
		}
	}
	g.Expect(f.files).NotTo(BeEmpty(), "the default template's control-plane files")
}

func templateFiles(g Gomega, obj *unstructured.Unstructured, path ...string) []bootstrapv1.File {
	raw, _, err := unstructured.NestedSlice(obj.Object, path...)
	g.Expect(err).NotTo(HaveOccurred())
	data, err := yaml.Marshal(raw)
	g.Expect(err).NotTo(HaveOccurred())
	var files []bootstrapv1.File
	g.Expect(yaml.Unmarshal(data, &files)).To(Succeed())
	return files
}

// node is a floor machine as the provider would render its node Pod.
func (f *floorRun) node(name string, controlPlane bool) nodepod.Node {
	return nodepod.Node{Name: name, Namespace: f.namespace, ClusterName: floorCluster, ControlPlane: controlPlane,
		HostingNamespace: f.namespace, Image: env.settings["KUBERNETES_NODE_IMAGE"]}
}

// start renders cloud-config into the provider's bootstrap script and creates
// the node's bootstrap Secret and Pod, the provider's own objects.
func (f *floorRun) start(ctx context.Context, g Gomega, node nodepod.Node, cloudConfig []byte) {
	script, err := bootstrap.Render(cloudConfig, "cloud-config", bootstrap.Node{Hostname: nodepod.PodName(node.Name)})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(env.client.Create(ctx, nodepod.NewBootstrapSecret(node, script.Content))).To(Succeed())
	g.Expect(env.client.Create(ctx, nodepod.NewPod(node))).To(Succeed())
}

// controlPlaneConfig is the cloud-config of kubeadm init, as the kubeadm
// bootstrap provider writes it: the certificates, the template's files, the
// kubeadm configuration, init and the template's post-kubeadm commands.
func (f *floorRun) controlPlaneConfig(g Gomega, name string) []byte {
	files := append(f.certs.AsFiles(), f.files...)
	files = append(files, bootstrapv1.File{Path: floorKubeadmInit, Owner: "root:root", Permissions: "0640",
		Content: f.initConfiguration(name)})
	commands := append([]string{"kubeadm init --config " + floorKubeadmInit + floorSuccessMark}, f.postKubeadm...)
	return cloudConfig(g, files, commands)
}

func (f *floorRun) initConfiguration(name string) string {
	return fmt.Sprintf(`apiVersion: kubeadm.k8s.io/v1beta4
kind: ClusterConfiguration
kubernetesVersion: %s
clusterName: %s
networking: {podSubnet: %s, serviceSubnet: %s}
apiServer:
  certSANs: [localhost, 127.0.0.1]
---
apiVersion: kubeadm.k8s.io/v1beta4
kind: InitConfiguration
bootstrapTokens: [{token: %s}]
nodeRegistration: %s
patches: {directory: /etc/kubernetes/patches}
`, env.settings["KUBERNETES_VERSION"], floorCluster, floorPodCIDR, floorServiceCIDR, f.token, nodeRegistration(name))
}

// workerConfig is the cloud-config of kubeadm join against the control
// plane's address.
func (f *floorRun) workerConfig(g Gomega, name, apiServer string) []byte {
	hashes, err := f.certs.GetByPurpose(secret.ClusterCA).Hashes()
	g.Expect(err).NotTo(HaveOccurred())
	join := fmt.Sprintf(`apiVersion: kubeadm.k8s.io/v1beta4
kind: JoinConfiguration
discovery:
  bootstrapToken: {apiServerEndpoint: "%s:6443", token: %s, caCertHashes: [%s]}
nodeRegistration: %s
patches: {directory: /etc/kubernetes/patches}
`, apiServer, f.token, strings.Join(hashes, ", "), nodeRegistration(name))
	files := append(append([]bootstrapv1.File{}, f.workerFiles...), bootstrapv1.File{Path: floorKubeadmJoin,
		Owner: "root:root", Permissions: "0640", Content: join})
	return cloudConfig(g, files, []string{"kubeadm join --config " + floorKubeadmJoin + floorSuccessMark})
}

// nodeRegistration is the default template's, with the node named as its
// Pod's host (the provider fills the kubeadm bootstrap provider's hostname
// variable with the same).
func nodeRegistration(name string) string {
	return fmt.Sprintf("{name: %s, criSocket: %q, ignorePreflightErrors: [SystemVerification, NumCPU, Mem]}",
		nodepod.PodName(name), floorCriSocket)
}

// cloudConfig is cloud-config that writes files and runs commands. Like the
// kubeadm bootstrap provider's, it writes a placeholder into the folder of
// the success sentinel, which the commands write but do not create.
func cloudConfig(g Gomega, files []bootstrapv1.File, commands []string) []byte {
	placeholder := bootstrapv1.File{Path: filepath.Join(filepath.Dir(bootstrap.SentinelPath), "placeholder"),
		Owner: "root:root", Permissions: "0640", Content: "the folder of the bootstrap success sentinel"}
	data, err := yaml.Marshal(map[string]any{"write_files": append(files, placeholder), "runcmd": commands})
	g.Expect(err).NotTo(HaveOccurred())
	return append([]byte("#cloud-config\n"), data...)
}

// workloadAdmin writes the workload cluster's admin kubeconfig for the
// control plane at apiServer where Cluster API keeps it (the Secret
// <cluster>-kubeconfig, which the timeline program reads) and returns a client.
func (f *floorRun) workloadAdmin(ctx context.Context, g Gomega, apiServer string) (client.Client, kubernetes.Interface) {
	ca := f.certs.GetByPurpose(secret.ClusterCA).KeyPair
	caCert, err := certs.DecodeCertPEM(ca.Cert)
	g.Expect(err).NotTo(HaveOccurred())
	caKey, err := certs.DecodePrivateKeyPEM(ca.Key)
	g.Expect(err).NotTo(HaveOccurred())
	config, err := kubeconfig.New(floorCluster, fmt.Sprintf(floorAPIServerURL, apiServer), caCert, caKey)
	g.Expect(err).NotTo(HaveOccurred())
	data, err := clientcmd.Write(*config)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(env.client.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: floorCluster + "-kubeconfig", Namespace: f.namespace},
		Data:       map[string][]byte{"value": data},
	})).To(Succeed())
	rest, err := clientcmd.RESTConfigFromKubeConfig(data)
	g.Expect(err).NotTo(HaveOccurred())
	c, err := client.New(rest, client.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	clients, err := kubernetes.NewForConfig(rest)
	g.Expect(err).NotTo(HaveOccurred())
	return c, clients
}

// waitBootstrapEnded waits for the node Pod's console to say that its
// bootstrap finished, and returns the Pod.
func (f *floorRun) waitBootstrapEnded(ctx context.Context, g Gomega, name string, timeout time.Duration) *corev1.Pod {
	pod := &corev1.Pod{}
	g.Eventually(func(g Gomega) {
		g.Expect(env.client.Get(ctx, client.ObjectKey{Namespace: f.namespace, Name: nodepod.PodName(name)}, pod)).To(Succeed())
		g.Expect(pod.Status.Phase).To(Equal(corev1.PodRunning), "node Pod %s", pod.Name)
		log, err := env.clients.CoreV1().Pods(f.namespace).GetLogs(pod.Name, &corev1.PodLogOptions{}).DoRaw(ctx)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(string(log)).NotTo(ContainSubstring(bootstrap.FailedMessage), "node Pod %s", pod.Name)
		g.Expect(string(log)).To(ContainSubstring("bootstrap: finished"), "node Pod %s", pod.Name)
	}).WithContext(ctx).WithTimeout(timeout).WithPolling(time.Second).Should(Succeed())
	return pod
}

// waitNodesReady waits until the workload cluster has want Nodes, all Ready.
func waitNodesReady(ctx context.Context, g Gomega, clients kubernetes.Interface, want int, timeout time.Duration) {
	g.Eventually(func(g Gomega) {
		nodes, err := clients.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(nodes.Items).To(HaveLen(want))
		for i := range nodes.Items {
			g.Expect(nodeReady(&nodes.Items[i])).To(BeTrue(), "Node %s", nodes.Items[i].Name)
		}
	}).WithContext(ctx).WithTimeout(timeout).WithPolling(time.Second).Should(Succeed())
}

// applyPodnet creates podnet's objects in the workload cluster, as the
// ClusterResourceSet of a Cluster API cluster does (create, once).
func applyPodnet(ctx context.Context, g Gomega, workload client.Client) {
	objects, err := envtest.DecodeObjects([]byte(tunnelledPodnet(g)))
	g.Expect(err).NotTo(HaveOccurred())
	createAll(ctx, g, workload, objects)
}
