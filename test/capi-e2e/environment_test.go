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
	"testing"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/yaml"
)

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

const clusterctlYAML = `providers: []
cert-manager:
  url: file:///cache/repository/cert-manager/v1.21.2/cert-manager.yaml
  version: v1.21.2
CAPK_IMAGE: example.com/capk:v0.2.0
`

func TestReadEnvironmentAddsWhatTheConfigNeeds(t *testing.T) {
	g := NewWithT(t)
	config := writeFile(t, "clusterctl.yaml", clusterctlYAML)
	env := writeFile(t, "e2e.env", "KUBECONFIG=/k\nCLUSTERCTL_CONFIG="+config+"\nKUBERNETES_NODE_IMAGE=localhost/capk-node:v1.36.3\n")

	settings, err := readEnvironment(env)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(settings).To(HaveKeyWithValue("KUBECONFIG", "/k"))
	g.Expect(settings).To(HaveKeyWithValue("MANAGEMENT_REPOSITORY", filepath.Dir(config)))
	g.Expect(settings).To(HaveKeyWithValue("CAPK_IMAGE", "example.com/capk:v0.2.0"))
	g.Expect(settings).To(HaveKeyWithValue("CERT_MANAGER_URL", "file:///cache/repository/cert-manager/v1.21.2/cert-manager.yaml"))
	g.Expect(settings).To(HaveKeyWithValue("CERT_MANAGER_VERSION", "v1.21.2"))
	g.Expect(settings).To(HaveKeyWithValue("NODE_IMAGE_REPOSITORY", "localhost/capk-node"))
}

func TestReadEnvironmentRefusesAnIncompleteOne(t *testing.T) {
	g := NewWithT(t)
	_, err := readEnvironment(writeFile(t, "e2e.env", "KUBECONFIG=/k\n"))
	g.Expect(err).To(MatchError(ContainSubstring("no CLUSTERCTL_CONFIG")))

	config := writeFile(t, "clusterctl.yaml", "providers: []\n")
	_, err = readEnvironment(writeFile(t, "e2e.env", "CLUSTERCTL_CONFIG="+config+"\n"))
	g.Expect(err).To(MatchError(ContainSubstring("CAPK_IMAGE, cert-manager.url and cert-manager.version must all be set")))

	config = writeFile(t, "clusterctl.yaml", clusterctlYAML)
	_, err = readEnvironment(writeFile(t, "e2e.env", "CLUSTERCTL_CONFIG="+config+"\nKUBERNETES_NODE_IMAGE=capk-node\n"))
	g.Expect(err).To(MatchError(ContainSubstring(`KUBERNETES_NODE_IMAGE "capk-node" has no repository:tag form`)))
}

func TestResolveConfigNamesEveryMissingSetting(t *testing.T) {
	g := NewWithT(t)
	template := writeFile(t, "config.yaml", "a: ${A}\nb: ${B}\nc: ${C}\nb2: ${B}\n")
	out := filepath.Join(t.TempDir(), "resolved", "config.yaml")

	err := resolveConfig(template, out, map[string]string{"A": "1", "B": ""})
	g.Expect(err).To(MatchError(ContainSubstring("no setting for B, C")))
	g.Expect(out).NotTo(BeAnExistingFile())

	g.Expect(resolveConfig(template, out, map[string]string{"A": "1", "B": "2", "C": "3"})).To(Succeed())
	data, err := os.ReadFile(out)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(data)).To(Equal("a: 1\nb: 2\nc: 3\nb2: 2\n"))
}

func TestAddCertManagerKeepsTheRest(t *testing.T) {
	g := NewWithT(t)
	path := writeFile(t, "clusterctl-config.yaml", "providers:\n- name: cluster-api\n  type: CoreProvider\n  url: /r/components.yaml\nKUBERNETES_VERSION: v1.36.3\n")

	g.Expect(addCertManager(path, "file:///cm.yaml", "v1.21.2")).To(Succeed())
	data, err := os.ReadFile(path)
	g.Expect(err).NotTo(HaveOccurred())
	config := map[string]any{}
	g.Expect(yaml.Unmarshal(data, &config)).To(Succeed())
	g.Expect(config).To(HaveKeyWithValue("cert-manager", map[string]any{"url": "file:///cm.yaml", "version": "v1.21.2"}))
	g.Expect(config).To(HaveKeyWithValue("KUBERNETES_VERSION", "v1.36.3"))
	g.Expect(config["providers"]).To(HaveLen(1))
}

func TestImageRepositoryDropsOnlyTheTag(t *testing.T) {
	g := NewWithT(t)
	for image, want := range map[string]string{
		"localhost/capk-node:v1.36.3":                 "localhost/capk-node",
		"registry.example.com:5000/capk/node:v1.36.3": "registry.example.com:5000/capk/node",
		"kindest/node:v1.36.3":                        "kindest/node",
	} {
		got, ok := imageRepository(image)
		g.Expect(ok).To(BeTrue(), image)
		g.Expect(got).To(Equal(want), image)
	}
	for _, bad := range []string{"capk-node", "registry.example.com:5000/capk-node", ":v1", ""} {
		_, ok := imageRepository(bad)
		g.Expect(ok).To(BeFalse(), bad)
	}
}

func TestPodOfProviderIDRefusesOtherForms(t *testing.T) {
	g := NewWithT(t)
	namespace, name, err := podOfProviderID("kubernetes://tenant-a/e2e-md-0-abcde")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(namespace).To(Equal("tenant-a"))
	g.Expect(name).To(Equal("e2e-md-0-abcde"))
	for _, bad := range []string{"", "docker:///x/y", "kubernetes://", "kubernetes://ns", "kubernetes:///pod", "kubernetes://ns/", "kubernetes://ns/a/b"} {
		_, _, err := podOfProviderID(bad)
		g.Expect(err).To(HaveOccurred(), bad)
	}
}
