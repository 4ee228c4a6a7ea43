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

// This program produced the CABPK fixtures in .. with the real
// sigs.k8s.io/cluster-api v1.14.2 cloudinit templates. Go never builds files
// under testdata, and the repository's go.sum lacks some of CABPK's
// dependencies, so run it from a scratch module:
//
//	mkdir /tmp/gen && cp main.go /tmp/gen && cd /tmp/gen
//	go mod init gen
//	go get sigs.k8s.io/cluster-api@v1.14.2 sigs.k8s.io/cluster-api/api@v1.14.2
//	go mod tidy
//	go run . && cp *.yaml <this folder>/..
//
// Keys and certificates are generated afresh on every run, so regenerating
// changes the fixtures but not what the tests check.
package main

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"fmt"
	"os"

	"github.com/blang/semver/v4"
	"k8s.io/utils/ptr"

	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	"sigs.k8s.io/cluster-api/bootstrap/kubeadm/pkg/cloudinit"
	kubeadmtypes "sigs.k8s.io/cluster-api/bootstrap/kubeadm/pkg/types"
	"sigs.k8s.io/cluster-api/bootstrap/kubeadm/pkg/types/upstream"
	"sigs.k8s.io/cluster-api/util/secret"
)

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func gzb64(s string) string {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte(s))
	w.Close()
	return base64.StdEncoding.EncodeToString(b.Bytes())
}

const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
rules:
- level: Metadata
`

const registriesConf = `[plugins."io.containerd.grpc.v1.cri".registry.mirrors."docker.io"]
  endpoint = ["https://mirror.example.internal"]
`

func extraFiles() []bootstrapv1.File {
	return []bootstrapv1.File{
		{Path: "/etc/capk/registry-mirror.toml", Owner: "root:root", Permissions: "0644", Encoding: bootstrapv1.Base64, Content: base64.StdEncoding.EncodeToString([]byte(registriesConf))},
		{Path: "/etc/kubernetes/audit/policy.yaml", Owner: "root:root", Permissions: "0600", Encoding: bootstrapv1.GzipBase64, Content: gzb64(auditPolicy)},
	}
}

var (
	version     = semver.MustParse("1.35.0")
	kubeletArgs = []bootstrapv1.Arg{
		{Name: "eviction-hard", Value: ptr.To("nodefs.available<0%,nodefs.inodesFree<0%,imagefs.available<0%")},
		{Name: "fail-swap-on", Value: ptr.To("false")},
	}
	nodeRegistration = bootstrapv1.NodeRegistrationOptions{CRISocket: "unix:///var/run/containerd/containerd.sock", KubeletExtraArgs: kubeletArgs}
	clusterConfig    = bootstrapv1.ClusterConfiguration{
		ControlPlaneEndpoint: "capk-demo-apiserver.capk-demo.svc:6443",
		APIServer:            bootstrapv1.APIServer{CertSANs: []string{"localhost", "127.0.0.1"}},
	}
)

func main() {
	certs := secret.NewCertificatesForInitialControlPlane(&clusterConfig)
	if err := certs.Generate(); err != nil {
		panic(err)
	}
	hashes := must(certs.GetByPurpose(secret.ClusterCA).Hashes())
	write("controlplane-init.yaml", must(cloudinit.NewInitControlPlane(initInput(certs))))
	write("controlplane-join.yaml", must(cloudinit.NewJoinControlPlane(controlPlaneJoinInput(certs, hashes))))
	write("worker-join.yaml", must(cloudinit.NewNode(workerInput(hashes))))
	fmt.Println("ok")
}

func write(name string, data []byte) {
	if err := os.WriteFile(name, data, 0o644); err != nil {
		panic(err)
	}
}

func initInput(certs secret.Certificates) *cloudinit.ControlPlaneInput {
	data := &upstream.AdditionalData{
		KubernetesVersion: ptr.To("v1.35.0"),
		ClusterName:       ptr.To("capk-demo"),
		DNSDomain:         ptr.To("cluster.local"),
		ServiceSubnet:     ptr.To("10.128.0.0/12"),
		PodSubnet:         ptr.To("192.168.0.0/16"),
	}
	ic := bootstrapv1.InitConfiguration{NodeRegistration: nodeRegistration}
	return &cloudinit.ControlPlaneInput{
		BaseUserData: cloudinit.BaseUserData{
			AdditionalFiles:     extraFiles(),
			BootCommands:        []string{"mkdir -p /var/lib/capk"},
			PreKubeadmCommands:  []string{"sysctl -w net.ipv4.ip_forward=1", "hostnamectl set-hostname capk-demo-control-plane-7x2bq"},
			PostKubeadmCommands: []string{"echo 'control plane ready' > /var/lib/capk/status"},
			NTP:                 &bootstrapv1.NTP{Enabled: ptr.To(true), Servers: []string{"time.example.internal"}},
			Users:               []bootstrapv1.User{{Name: "capk", Sudo: "ALL=(ALL) NOPASSWD:ALL", SSHAuthorizedKeys: []string{"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFakeFakeFakeFakeFakeFakeFakeFakeFakeFakeFake capk@example"}}},
			KubeadmVerbosity:    "--v 5",
			KubernetesVersion:   version,
		},
		Certificates:         certs,
		ClusterConfiguration: must(kubeadmtypes.MarshalClusterConfigurationForVersion(&clusterConfig, version, data)),
		InitConfiguration:    must(kubeadmtypes.MarshalInitConfigurationForVersion(&ic, version)),
	}
}

func joinConfig(token string, hashes []string) bootstrapv1.JoinConfiguration {
	return bootstrapv1.JoinConfiguration{
		NodeRegistration: nodeRegistration,
		Discovery: bootstrapv1.Discovery{BootstrapToken: bootstrapv1.BootstrapTokenDiscovery{
			Token: token, APIServerEndpoint: "capk-demo-apiserver.capk-demo.svc:6443", CACertHashes: hashes,
		}},
	}
}

func controlPlaneJoinInput(certs secret.Certificates, hashes []string) *cloudinit.ControlPlaneJoinInput {
	jc := joinConfig("abcdef.0123456789abcdef", hashes)
	jc.ControlPlane = &bootstrapv1.JoinControlPlane{}
	// A joining control plane gets the same CAs the init node generated.
	joinCerts := secret.NewControlPlaneJoinCerts(&clusterConfig)
	for _, c := range joinCerts {
		c.KeyPair = certs.GetByPurpose(c.Purpose).KeyPair
	}
	return &cloudinit.ControlPlaneJoinInput{
		BaseUserData: cloudinit.BaseUserData{
			AdditionalFiles:     extraFiles(),
			BootCommands:        []string{"mkdir -p /var/lib/capk"},
			PreKubeadmCommands:  []string{"sysctl -w net.ipv4.ip_forward=1"},
			PostKubeadmCommands: []string{"echo 'control plane joined' > /var/lib/capk/status"},
			KubernetesVersion:   version,
		},
		Certificates:      joinCerts,
		JoinConfiguration: must(kubeadmtypes.MarshalJoinConfigurationForVersion(&jc, version)),
	}
}

func workerInput(hashes []string) *cloudinit.NodeInput {
	jc := joinConfig("uvwxyz.9876543210fedcba", hashes)
	files := append(extraFiles(), bootstrapv1.File{Path: "/etc/environment", Append: ptr.To(true), Content: "CAPK_NODE_ROLE=worker\n"})
	return &cloudinit.NodeInput{
		BaseUserData: cloudinit.BaseUserData{
			AdditionalFiles:     files,
			BootCommands:        []string{"mkdir -p /var/lib/capk"},
			PreKubeadmCommands:  []string{"sysctl -w net.ipv4.ip_forward=1"},
			PostKubeadmCommands: []string{"echo 'worker joined' > /var/lib/capk/status"},
			DiskSetup: &bootstrapv1.DiskSetup{
				Partitions:  []bootstrapv1.Partition{{Device: "/dev/vdb", Layout: ptr.To(true), TableType: "gpt"}},
				Filesystems: []bootstrapv1.Filesystem{{Device: "/dev/vdb1", Filesystem: "ext4", Label: "containerd"}},
			},
			Mounts:            []bootstrapv1.MountPoints{{"LABEL=containerd", "/var/lib/containerd"}},
			KubernetesVersion: version,
		},
		JoinConfiguration: must(kubeadmtypes.MarshalJoinConfigurationForVersion(&jc, version)),
	}
}
