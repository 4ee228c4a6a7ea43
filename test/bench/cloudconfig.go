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

package bench

import (
	"fmt"
	"strings"

	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/test/envtest"
)

// BootstrapData is the cloud-config the kubeadm bootstrap provider would write
// for a machine, shortened to what shapes the provider's work: kubeadm's
// configuration file, a few other files and the kubeadm command. The endpoint
// is the control-plane Service the provider names <cluster>-apiserver.
func BootstrapData(namespace, clusterName string, controlPlane bool) []byte {
	endpoint := fmt.Sprintf("%s-apiserver.%s.svc:6443", clusterName, namespace)
	var kubeadmFile, kubeadmCommand string
	if controlPlane {
		kubeadmFile = "/run/kubeadm/kubeadm.yaml"
		kubeadmCommand = "kubeadm init --config /run/kubeadm/kubeadm.yaml"
	} else {
		kubeadmFile = "/run/kubeadm/kubeadm-join-config.yaml"
		kubeadmCommand = "kubeadm join --config /run/kubeadm/kubeadm-join-config.yaml"
	}
	var b strings.Builder
	b.WriteString("## template: jinja\n#cloud-config\n\nwrite_files:\n")
	writeFile(&b, kubeadmFile, "0640", kubeadmConfig(endpoint, clusterName, controlPlane))
	writeFile(&b, "/etc/kubernetes/patches/kubeletconfiguration0+strategic.yaml", "0644",
		"apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\ncgroupDriver: systemd\nfailSwapOn: false\n")
	writeFile(&b, "/run/cluster-api/placeholder", "0640",
		"This placeholder file is used to create the /run/cluster-api sub directory\n")
	b.WriteString("runcmd:\n")
	fmt.Fprintf(&b, "  - %q\n", kubeadmCommand+" && echo success > /run/cluster-api/bootstrap-success.complete")
	return []byte(b.String())
}

// writeFile adds one write_files entry with a literal block of content.
func writeFile(b *strings.Builder, path, permissions, content string) {
	fmt.Fprintf(b, "-   path: %s\n    owner: root:root\n    permissions: '%s'\n    content: |\n", path, permissions)
	for _, line := range strings.Split(strings.TrimSuffix(content, "\n"), "\n") {
		fmt.Fprintf(b, "      %s\n", line)
	}
}

// kubeadmConfig is an InitConfiguration with a ClusterConfiguration for the
// first control-plane machine, a JoinConfiguration for the others.
func kubeadmConfig(endpoint, clusterName string, controlPlane bool) string {
	nodeRegistration := "nodeRegistration:\n" +
		"  criSocket: unix:///run/containerd/containerd.sock\n" +
		"  ignorePreflightErrors:\n  - SystemVerification\n  - NumCPU\n  - Mem\n" +
		"patches:\n  directory: /etc/kubernetes/patches\n"
	if !controlPlane {
		return "apiVersion: kubeadm.k8s.io/v1beta4\nkind: JoinConfiguration\n" +
			"discovery:\n  bootstrapToken:\n    apiServerEndpoint: " + endpoint + "\n" +
			"    caCertHashes:\n    - sha256:4ea11675c2695ae921ec77470df33b3643529da5853ef475492d80407a9b95bb\n" +
			"    token: abcdef.0123456789abcdef\n" + nodeRegistration
	}
	return "apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\n" +
		"clusterName: " + clusterName + "\ncontrolPlaneEndpoint: " + endpoint + "\n" +
		"kubernetesVersion: " + envtest.MachineVersion + "\n" +
		"networking:\n  podSubnet: 10.244.0.0/16\n  serviceSubnet: 10.96.0.0/12\n" +
		"apiServer:\n  certSANs:\n  - localhost\n  - 127.0.0.1\n" +
		"---\napiVersion: kubeadm.k8s.io/v1beta4\nkind: InitConfiguration\n" + nodeRegistration
}
