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

package main

import (
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseNodes(t *testing.T) {
	got, err := parseNodes("b=10.251.0.2,c=10.251.0.3", "a")
	if err != nil || len(got) != 2 || got[0].name != "b" || !got[1].ip.Equal(net.IPv4(10, 251, 0, 3)) {
		t.Fatalf("parseNodes = %v, %v", got, err)
	}
	if got, err := parseNodes("", "a"); err != nil || got != nil {
		t.Errorf("no nodes: %v, %v", got, err)
	}
	for value, why := range map[string]string{
		"b":                      "not NAME=IP",
		"b=10.251.0.300":         "not NAME=IP",
		"B=10.251.0.2":           "DNS label",
		"b/c=10.251.0.2":         "DNS label",
		"a=10.251.0.2":           "named twice",
		"b=10.251.0.2,b=1.2.3.4": "named twice",
	} {
		if _, err := parseNodes(value, "a"); err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("parseNodes(%q) = %v, want an error saying %q", value, err, why)
		}
	}
}

// TestRunIssuesNodeIdentities runs the whole command into a folder and checks
// what a further hosting node's kubelet needs: a serving certificate for its
// name and address, and a kubeconfig whose client certificate is the Node's
// identity under NodeRestriction, both chaining to the cluster CA.
func TestRunIssuesNodeIdentities(t *testing.T) {
	dir := t.TempDir()
	o := options{dir: dir, nodeName: "a", nodeIP: net.IPv4(10, 251, 0, 1), serviceIP: net.IPv4(10, 253, 0, 1),
		server: "https://10.251.0.1:6443", validity: time.Hour,
		extra: []node{{name: "b", ip: net.IPv4(10, 251, 0, 2)}, {name: "c", ip: net.IPv4(10, 251, 0, 3)}}}
	if err := run(o); err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(readCert(t, filepath.Join(dir, "ca.crt")))
	for _, n := range append([]node{{name: "a", ip: o.nodeIP}}, o.extra...) {
		stem, serverStem := "kubelet-"+n.name, "kubelet-server-"+n.name
		if n.name == o.nodeName { // the first node keeps the names of a one-node cluster
			stem, serverStem = "kubelet", "kubelet-server"
		}
		server := readCert(t, filepath.Join(dir, serverStem+".crt"))
		if _, err := server.Verify(x509.VerifyOptions{Roots: roots, DNSName: n.name, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
			t.Errorf("node %s's serving certificate: %v", n.name, err)
		}
		if len(server.IPAddresses) != 1 || !server.IPAddresses[0].Equal(n.ip) {
			t.Errorf("node %s's serving certificate is for %v, want %s", n.name, server.IPAddresses, n.ip)
		}
		client := kubeconfigCert(t, filepath.Join(dir, stem+".kubeconfig"))
		if _, err := client.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
			t.Errorf("node %s's client certificate: %v", n.name, err)
		}
		if client.Subject.CommonName != "system:node:"+n.name || !slices.Equal(client.Subject.Organization, []string{"system:nodes"}) {
			t.Errorf("node %s's client certificate is %s", n.name, client.Subject)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "kubelet-a.kubeconfig")); err == nil {
		t.Error("the first node got a second kubeconfig")
	}
}

func readCert(t *testing.T, path string) *x509.Certificate {
	t.Helper()
	b, err := os.ReadFile(path) //nolint:gosec // the test's own folder
	if err != nil {
		t.Fatal(err)
	}
	return parsePEM(t, b)
}

func parsePEM(t *testing.T, b []byte) *x509.Certificate {
	t.Helper()
	block, _ := pem.Decode(b)
	if block == nil {
		t.Fatalf("no PEM block in %q", b)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

var clientData = regexp.MustCompile(`client-certificate-data: (\S+)`)

func kubeconfigCert(t *testing.T, path string) *x509.Certificate {
	t.Helper()
	b, err := os.ReadFile(path) //nolint:gosec // the test's own folder
	if err != nil {
		t.Fatal(err)
	}
	m := clientData.FindSubmatch(b)
	if m == nil {
		t.Fatalf("%s has no client certificate", path)
	}
	der, err := base64.StdEncoding.DecodeString(string(m[1]))
	if err != nil {
		t.Fatal(err)
	}
	return parsePEM(t, der)
}
