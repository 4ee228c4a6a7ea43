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
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	clusterctlconfig "sigs.k8s.io/cluster-api/cmd/clusterctl/config"
	"sigs.k8s.io/cluster-api/test/framework"
)

const (
	// installPage is the page whose Cluster API Operator section the
	// self-hosted spec follows.
	installPage = "../../docs/install.md"
	// The versions that page installs, as in config/kubernetes.yaml.
	capiVersion = "v1.14.2"
	capkVersion = "v0.2.0"
)

// installWithOperator installs Cluster API, its kubeadm providers and this
// provider on a cluster as docs/install.md's "Cluster API Operator" section
// tells users to: cert-manager and the operator first, then the page's
// commands and objects, read from the page and run as they are written, and
// the clusterctl inventory that `clusterctl move` needs in its target. The
// operator (test/infra/builds/capi-operator.sh) runs as a process on this
// machine until the spec ends; its log goes to logFolder.
func installWithOperator(proxy framework.ClusterProxy, logFolder string) {
	Expect(settings["CAPI_OPERATOR"]).NotTo(BeEmpty(),
		"the environment has no Cluster API Operator: bring it up without CAPK_CAPI_OPERATOR=0")
	kubeconfig := proxy.GetKubeconfigPath()
	page, err := os.ReadFile(installPage)
	Expect(err).NotTo(HaveOccurred())

	By("Installing cert-manager, which the operator does not install")
	kubectl(kubeconfig, nil, "apply", "--server-side", "-f", strings.TrimPrefix(settings["CERT_MANAGER_URL"], "file://"))
	kubectl(kubeconfig, nil, "wait", "--for=condition=Established", "--timeout=2m",
		"crd/certificates.cert-manager.io", "crd/issuers.cert-manager.io")
	By("Installing the Cluster API Operator's CRDs and starting the operator")
	crds := filepath.Join(settings["CAPI_OPERATOR"], "crds")
	kubectl(kubeconfig, nil, "apply", "--server-side", "-f", crds)
	kubectl(kubeconfig, nil, "wait", "--for=condition=Established", "--timeout=2m", "-f", crds)
	startOperator(kubeconfig, logFolder)

	By("Creating the namespaces, the variables and the components' ConfigMaps as " + installPage + " does")
	runShell(kubeconfig, docBlock(page, "sh", "for namespace in "))
	By("Applying the four provider objects of " + installPage)
	kubectl(kubeconfig, docBlock(page, "yaml", "apiVersion: operator.cluster.x-k8s.io/"), "apply", "-f", "-")
	By("Waiting for the providers to be Ready as " + installPage + " does")
	runShell(kubeconfig, docBlock(page, "sh", "kubectl -n capi-system wait "))
	By("Writing the clusterctl inventory of " + installPage)
	kubectl(kubeconfig, clusterctlconfig.ClusterctlAPIManifest, "apply", "--server-side", "-f", "-")
	kubectl(kubeconfig, docBlock(page, "yaml", "apiVersion: clusterctl.cluster.x-k8s.io/"), "apply", "-f", "-")
}

// docBlock is the one fenced block of a language in a page whose text starts
// with start.
func docBlock(page []byte, language, start string) []byte {
	blocks := regexp.MustCompile("(?s)```"+language+"\n("+regexp.QuoteMeta(start)+".*?)```").FindAllSubmatch(page, -1)
	Expect(blocks).To(HaveLen(1), "%s shows one %s block that starts with %q", installPage, language, start)
	return blocks[0][1]
}

// kubectl runs kubectl against a cluster with stdin (if any) and fails the
// spec with its output when it fails.
func kubectl(kubeconfig string, stdin []byte, args ...string) {
	cmd := exec.CommandContext(ctx, settings["KUBECTL"], append([]string{"--kubeconfig", kubeconfig}, args...)...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	out, err := cmd.CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "kubectl %s: %s", strings.Join(args, " "), out)
}

// runShell runs a block of the page with bash in a folder laid out as the
// page assumes: capi/ holds Cluster API's release files (components and
// metadata.yaml) and out/ this provider's (make release-manifests), both
// taken from the environment's clusterctl repository; kubectl is on the PATH
// and KUBECONFIG and CAPK_IMAGE are set.
func runShell(kubeconfig string, script []byte) {
	folder := GinkgoT().TempDir()
	repository := settings["MANAGEMENT_REPOSITORY"]
	capi := filepath.Join(repository, "cluster-api", capiVersion)
	links := map[string]string{
		"capi/core-components.yaml":          filepath.Join(capi, "core-components.yaml"),
		"capi/bootstrap-components.yaml":     filepath.Join(repository, "bootstrap-kubeadm", capiVersion, "bootstrap-components.yaml"),
		"capi/control-plane-components.yaml": filepath.Join(repository, "control-plane-kubeadm", capiVersion, "control-plane-components.yaml"),
		"capi/metadata.yaml":                 filepath.Join(capi, "metadata.yaml"),
		"out/infrastructure-components.yaml": filepath.Join(repository, "infrastructure-kubernetes", capkVersion, "infrastructure-components.yaml"),
		"out/metadata.yaml":                  filepath.Join(repository, "infrastructure-kubernetes", capkVersion, "metadata.yaml"),
	}
	for link, target := range links {
		Expect(os.MkdirAll(filepath.Join(folder, filepath.Dir(link)), 0o750)).To(Succeed())
		Expect(target).To(BeAnExistingFile())
		Expect(os.Symlink(target, filepath.Join(folder, link))).To(Succeed())
	}
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", string(script))
	cmd.Dir = folder
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig, "CAPK_IMAGE="+settings["CAPK_IMAGE"],
		"PATH="+filepath.Dir(settings["KUBECTL"])+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "running\n%s\nfrom %s: %s", script, installPage, out)
}

// startOperator starts the operator against a cluster, logging to
// logFolder/capi-operator.log, and stops it when the spec ends. Its webhooks
// are never called (as a process, it registers no webhook configuration),
// but its webhook server needs a certificate: a throw-away self-signed one,
// on a free port. Its health, diagnostics and profiler endpoints are off.
func startOperator(kubeconfig, logFolder string) {
	certs := GinkgoT().TempDir()
	writeSelfSignedCertificate(certs)
	Expect(os.MkdirAll(logFolder, 0o750)).To(Succeed())
	log, err := os.Create(filepath.Join(logFolder, "capi-operator.log")) //nolint:gosec // the spec's artifact folder
	Expect(err).NotTo(HaveOccurred())
	cmd := exec.Command(filepath.Join(settings["CAPI_OPERATOR"], "capi-operator"), //nolint:gosec // the environment's build
		"--kubeconfig", kubeconfig, "--webhook-cert-dir", certs, "--webhook-port", strconv.Itoa(freePort()),
		"--health-addr", "0", "--diagnostics-address", "0", "--profiler-address", "", "--v", "2")
	// clusterctl's library reads its configuration from $HOME: an empty one.
	cmd.Env = append(os.Environ(), "HOME="+GinkgoT().TempDir())
	cmd.Stdout, cmd.Stderr = log, log
	Expect(cmd.Start()).To(Succeed())
	DeferCleanup(func() {
		Expect(cmd.Process.Kill()).To(Succeed())
		_ = cmd.Wait() // killed: its error says so
		Expect(log.Close()).To(Succeed())
	})
}

// freePort is a TCP port that nothing listened on a moment ago.
func freePort() int {
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	defer func() { Expect(listener.Close()).To(Succeed()) }()
	return listener.Addr().(*net.TCPAddr).Port
}

// writeSelfSignedCertificate writes tls.crt and tls.key, valid for a day, to folder.
func writeSelfSignedCertificate(folder string) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	Expect(err).NotTo(HaveOccurred())
	template := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "capi-operator"},
		DNSNames:     []string{"localhost"},
		NotBefore:    time.Now().Add(-time.Minute),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	Expect(err).NotTo(HaveOccurred())
	keyDER, err := x509.MarshalECPrivateKey(key)
	Expect(err).NotTo(HaveOccurred())
	Expect(os.WriteFile(filepath.Join(folder, "tls.crt"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)).To(Succeed())
	Expect(os.WriteFile(filepath.Join(folder, "tls.key"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600)).To(Succeed())
}
