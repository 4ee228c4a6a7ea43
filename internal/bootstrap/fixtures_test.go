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

package bootstrap

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/yaml"
)

// The fixtures in testdata were produced by CABPK v1.14.2's own cloudinit
// package (see testdata/generator), with freshly generated throwaway keys.
type fixture struct {
	name        string
	file        string
	ignoredKeys []string
	// calls are the stubbed commands runcmd and bootcmd must make, in order.
	calls []string
	// status is what the post-kubeadm command writes to /var/lib/capk/status.
	status string
}

var fixtures = []fixture{
	{
		name:        "control plane init",
		file:        "controlplane-init.yaml",
		ignoredKeys: []string{"ntp", "users"},
		calls: []string{
			"sysctl -w net.ipv4.ip_forward=1",
			"hostnamectl set-hostname capk-demo-control-plane-7x2bq",
			"kubeadm init --config $ROOT/run/kubeadm/kubeadm.yaml --v 5",
		},
		status: "control plane ready\n",
	},
	{
		name:        "control plane join",
		file:        "controlplane-join.yaml",
		ignoredKeys: nil,
		calls: []string{
			"sysctl -w net.ipv4.ip_forward=1",
			"kubeadm join --config $ROOT/run/kubeadm/kubeadm-join-config.yaml",
		},
		status: "control plane joined\n",
	},
	{
		name:        "worker join",
		file:        "worker-join.yaml",
		ignoredKeys: []string{"disk_setup", "fs_setup", "mounts"},
		calls: []string{
			"sysctl -w net.ipv4.ip_forward=1",
			"kubeadm join --config $ROOT/run/kubeadm/kubeadm-join-config.yaml",
		},
		status: "worker joined\n",
	},
}

// Plain text of the encoded extra files in every fixture, as given to CABPK.
const (
	registryMirrorPath = "/etc/capk/registry-mirror.toml" // base64
	registryMirrorText = `[plugins."io.containerd.grpc.v1.cri".registry.mirrors."docker.io"]
  endpoint = ["https://mirror.example.internal"]
`
	auditPolicyPath = "/etc/kubernetes/audit/policy.yaml" // gzip+base64
	auditPolicyText = `apiVersion: audit.k8s.io/v1
kind: Policy
rules:
- level: Metadata
`
)

// expectedFile is a write_files entry decoded by the test itself, not by the
// code under test, so that the two decoders check each other.
type expectedFile struct {
	Path        string `json:"path"`
	Content     string `json:"content"`
	Encoding    string `json:"encoding"`
	Owner       string `json:"owner"`
	Permissions string `json:"permissions"`
}

func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	return data
}

func expectedFiles(t *testing.T, data []byte) []expectedFile {
	t.Helper()
	g := NewWithT(t)
	var doc struct {
		WriteFiles []expectedFile `json:"write_files"`
	}
	g.Expect(yaml.Unmarshal(data, &doc)).To(Succeed())
	for i, f := range doc.WriteFiles {
		switch f.Encoding {
		case "":
		case "base64":
			decoded, err := base64.StdEncoding.DecodeString(f.Content)
			g.Expect(err).NotTo(HaveOccurred())
			doc.WriteFiles[i].Content = string(decoded)
		case "gzip+base64":
			decoded, err := base64.StdEncoding.DecodeString(f.Content)
			g.Expect(err).NotTo(HaveOccurred())
			r, err := gzip.NewReader(bytes.NewReader(decoded))
			g.Expect(err).NotTo(HaveOccurred())
			plain, err := io.ReadAll(r)
			g.Expect(err).NotTo(HaveOccurred())
			doc.WriteFiles[i].Content = string(plain)
		default:
			t.Fatalf("fixture uses encoding %q the test cannot decode", f.Encoding)
		}
	}
	return doc.WriteFiles
}

func TestCABPKFixturesListTheirIgnoredKeys(t *testing.T) {
	for _, fx := range fixtures {
		t.Run(fx.name, func(t *testing.T) {
			g := NewWithT(t)
			script, err := Render(readFixture(t, fx.file), "cloud-config", Node{})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(script.IgnoredKeys).To(Equal(fx.ignoredKeys))
		})
	}
}

func TestCABPKFixturesHaveBase64AndGzipBase64Files(t *testing.T) {
	for _, fx := range fixtures {
		t.Run(fx.name, func(t *testing.T) {
			g := NewWithT(t)
			data := string(readFixture(t, fx.file))
			g.Expect(data).To(HavePrefix("## template: jinja\n#cloud-config\n"))
			g.Expect(data).To(ContainSubstring("path: " + registryMirrorPath + "\n    encoding: \"base64\""))
			g.Expect(data).To(ContainSubstring("path: " + auditPolicyPath + "\n    encoding: \"gzip+base64\""))
		})
	}
}

// TestRenderedCABPKFixturesBootstrapANode runs each fixture's script for real
// and checks every file, every command and the success sentinel.
func TestRenderedCABPKFixturesBootstrapANode(t *testing.T) {
	for _, fx := range fixtures {
		t.Run(fx.name, func(t *testing.T) {
			g := NewWithT(t)
			data := readFixture(t, fx.file)
			script, root := renderForTest(t, string(data), Node{})
			run := runScript(t, root, rootCommandPaths(t, script.Content))
			g.Expect(run.exitCode).To(Equal(0), run.output)

			files := expectedFiles(t, data)
			expectFilesWritten(t, run, files)
			g.Expect(run.read(registryMirrorPath)).To(Equal(registryMirrorText))
			g.Expect(run.read(auditPolicyPath)).To(Equal(auditPolicyText))

			g.Expect(strings.Split(strings.TrimSpace(run.read("calls.log")), "\n")).
				To(Equal(expandRoot(fx.calls, root)))
			g.Expect(run.read(SentinelPath)).To(Equal("success\n"))
			g.Expect(run.read("/var/lib/capk/status")).To(Equal(fx.status))
			g.Expect(run.output).To(HaveSuffix("bootstrap: finished\n"))
			expectNoContentLeaked(t, run.output, files)
		})
	}
}

// TestRenderedCABPKFixturesStopWhenKubeadmFails checks that a failed kubeadm
// leaves no sentinel, skips postKubeadmCommands and says where it stopped.
func TestRenderedCABPKFixturesStopWhenKubeadmFails(t *testing.T) {
	for _, fx := range fixtures {
		t.Run(fx.name, func(t *testing.T) {
			g := NewWithT(t)
			data := readFixture(t, fx.file)
			script, root := renderForTest(t, string(data), Node{})
			run := runScript(t, root, rootCommandPaths(t, script.Content), "KUBEADM_EXIT=7")

			g.Expect(run.exitCode).NotTo(Equal(0))
			g.Expect(run.read(SentinelPath)).To(Equal("<missing>"))
			g.Expect(run.read("/var/lib/capk/status")).To(Equal("<missing>"))
			kubeadmStep := strconv.Itoa(len(fx.calls))
			g.Expect(run.output).To(MatchRegexp(`bootstrap: failed while running runcmd %s/\d+ \(exit code \d+\)\n$`, kubeadmStep))
			expectNoContentLeaked(t, run.output, expectedFiles(t, data))
		})
	}
}

func expectFilesWritten(t *testing.T, run scriptRun, files []expectedFile) {
	t.Helper()
	g := NewWithT(t)
	var chowns []string
	for _, f := range files {
		g.Expect(run.read(f.Path)).To(Equal(f.Content), "content of %s", f.Path)
		want := uint64(0o644)
		if f.Permissions != "" {
			var err error
			want, err = strconv.ParseUint(f.Permissions, 8, 32)
			g.Expect(err).NotTo(HaveOccurred())
		}
		g.Expect(fileMode(t, run.root, f.Path)).To(Equal(os.FileMode(want)), "mode of %s", f.Path)
		owner := f.Owner
		if owner == "" {
			owner = "root:root"
		}
		chowns = append(chowns, "-- "+owner+" "+filepath.Join(run.root, f.Path))
	}
	g.Expect(strings.Split(strings.TrimSpace(run.read("chown.log")), "\n")).To(Equal(chowns))
}

// expectNoContentLeaked checks that no line of any file's content (keys,
// tokens, kubeadm configs) shows up in the script's stdout or stderr.
func expectNoContentLeaked(t *testing.T, output string, files []expectedFile) {
	t.Helper()
	g := NewWithT(t)
	g.Expect(output).NotTo(ContainSubstring("PRIVATE KEY"))
	g.Expect(output).NotTo(ContainSubstring("token:"))
	for _, f := range files {
		for _, line := range strings.Split(f.Content, "\n") {
			if len(strings.TrimSpace(line)) >= 12 {
				g.Expect(output).NotTo(ContainSubstring(line), "content of %s leaked", f.Path)
			}
		}
	}
}

func expandRoot(lines []string, root string) []string {
	out := make([]string, len(lines))
	for i, line := range lines {
		out[i] = strings.ReplaceAll(line, "$ROOT", root)
	}
	return out
}
