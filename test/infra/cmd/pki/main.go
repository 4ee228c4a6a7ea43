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

// Command pki writes every certificate, key and kubeconfig the hosting cluster
// needs into one folder: its first node's with the control plane's, and with
// -nodes the kubelet identities of further hosting nodes. ECDSA P-256 keys keep generation instant on a
// busy two-core machine (RSA would take seconds); every component of
// Kubernetes and etcd accepts them, service-account signing included (ES256).
//
// Two CAs, as kubeadm does: etcd trusts only its own CA, so a client
// certificate of the cluster CA (the admin's, say) cannot talk to etcd.
package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"flag"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// options are the command-line inputs; everything else is derived.
type options struct {
	dir       string
	nodeName  string
	nodeIP    net.IP
	serviceIP net.IP
	server    string
	validity  time.Duration
	// extra are the further hosting nodes, each with a kubelet of its own.
	extra []node
}

// node is a kubelet's identity: its Node name and the address it serves on.
type node struct {
	name string
	ip   net.IP
}

// authority is a CA that signs the leaf certificates.
type authority struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

// leaf describes one certificate to issue.
type leaf struct {
	name   string // file name stem
	cn     string
	org    []string
	server bool // serverAuth usage, needs SANs
	client bool // clientAuth usage
	ips    []net.IP
	dns    []string
}

func main() {
	o := parseFlags()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "pki:", err)
		os.Exit(1)
	}
}

func parseFlags() options {
	var o options
	var nodeIP, serviceIP, nodes string
	flag.StringVar(&o.dir, "dir", "", "output folder (created)")
	flag.StringVar(&o.nodeName, "node-name", "", "name of the Node (kubelet identity)")
	flag.StringVar(&nodeIP, "node-ip", "", "address the API server and kubelet serve on")
	flag.StringVar(&serviceIP, "service-ip", "", "ClusterIP of the kubernetes Service")
	flag.StringVar(&o.server, "server", "", "API server URL written into the kubeconfigs")
	flag.StringVar(&nodes, "nodes", "", "further hosting nodes as NAME=IP,...: kubelet-server-NAME and kubelet-NAME.kubeconfig each")
	flag.DurationVar(&o.validity, "validity", 365*24*time.Hour, "lifetime of every certificate")
	flag.Parse()
	o.nodeIP, o.serviceIP = net.ParseIP(nodeIP), net.ParseIP(serviceIP)
	if o.dir == "" || o.nodeName == "" || o.nodeIP == nil || o.serviceIP == nil || o.server == "" {
		fmt.Fprintln(os.Stderr, "pki: -dir, -node-name, -node-ip, -service-ip and -server are required")
		os.Exit(2)
	}
	var err error
	if o.extra, err = parseNodes(nodes, o.nodeName); err != nil {
		fmt.Fprintln(os.Stderr, "pki: -nodes:", err)
		os.Exit(2)
	}
	return o
}

// parseNodes reads NAME=IP,NAME=IP. A name is a file name stem and a Node
// name, so it is a DNS label, and no two nodes share a name (the first
// node's, first, included).
func parseNodes(value, first string) ([]node, error) {
	if value == "" {
		return nil, nil
	}
	seen := map[string]bool{first: true}
	var out []node
	for _, item := range strings.Split(value, ",") {
		name, addr, ok := strings.Cut(item, "=")
		ip := net.ParseIP(addr)
		switch {
		case !ok || ip == nil:
			return nil, fmt.Errorf("%q is not NAME=IP", item)
		case !dnsLabel.MatchString(name):
			return nil, fmt.Errorf("%q: the name must be a DNS label (lower case letters, digits, '-')", item)
		case seen[name]:
			return nil, fmt.Errorf("%q: node %s is named twice", item, name)
		}
		seen[name] = true
		out = append(out, node{name: name, ip: ip})
	}
	return out, nil
}

var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)

func run(o options) error {
	if err := os.MkdirAll(o.dir, 0o700); err != nil {
		return err
	}
	ca, err := newAuthority(o, "ca", "capk-hosting-ca")
	if err != nil {
		return err
	}
	etcdCA, err := newAuthority(o, "etcd-ca", "capk-hosting-etcd-ca")
	if err != nil {
		return err
	}
	loopback := []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
	// etcd serves clients and its (single) peer URL with the same pair.
	etcdServer := leaf{name: "etcd-server", cn: "etcd", server: true, client: true, ips: loopback, dns: []string{"localhost"}}
	if err := issue(o, etcdCA, etcdServer); err != nil {
		return err
	}
	if err := issue(o, etcdCA, leaf{name: "apiserver-etcd-client", cn: "kube-apiserver-etcd-client", client: true}); err != nil {
		return err
	}
	for _, l := range clusterLeaves(o, loopback) {
		if err := issue(o, ca, l); err != nil {
			return err
		}
	}
	if err := serviceAccountKey(o); err != nil {
		return err
	}
	return kubeconfigs(o, ca)
}

// clusterLeaves are the certificates signed by the cluster CA.
func clusterLeaves(o options, loopback []net.IP) []leaf {
	return []leaf{
		{name: "apiserver", cn: "kube-apiserver", server: true,
			ips: append([]net.IP{o.nodeIP, o.serviceIP}, loopback...),
			dns: []string{"localhost", o.nodeName, "kubernetes", "kubernetes.default", "kubernetes.default.svc",
				"kubernetes.default.svc.cluster.local"}},
		// The API server's identity towards kubelets (logs, exec, port-forward).
		{name: "apiserver-kubelet-client", cn: "kube-apiserver-kubelet-client", org: []string{"system:masters"}, client: true},
		// The kubelet's serving certificate; the API server verifies it against the CA.
		kubeletServer("kubelet-server", node{name: o.nodeName, ip: o.nodeIP}),
	}
}

func kubeletServer(stem string, n node) leaf {
	return leaf{name: stem, cn: n.name, server: true, ips: []net.IP{n.ip}, dns: []string{n.name}}
}

// kubeletClient is the identity NodeRestriction ties to Node n.
func kubeletClient(stem string, n node) leaf {
	return leaf{name: stem, cn: "system:node:" + n.name, org: []string{"system:nodes"}, client: true}
}

// users are the client identities that get a kubeconfig; RBAC's bootstrap
// policy already binds these user and group names.
var users = []leaf{
	{name: "admin", cn: "kubernetes-admin", org: []string{"system:masters"}, client: true},
	{name: "controller-manager", cn: "system:kube-controller-manager", client: true},
	{name: "scheduler", cn: "system:kube-scheduler", client: true},
	{name: "kube-proxy", cn: "system:kube-proxy", client: true},
}

func kubeconfigs(o options, ca authority) error {
	all := append([]leaf{}, users...)
	all = append(all, kubeletClient("kubelet", node{name: o.nodeName, ip: o.nodeIP}))
	for _, n := range o.extra {
		if err := issue(o, ca, kubeletServer("kubelet-server-"+n.name, n)); err != nil {
			return err
		}
		all = append(all, kubeletClient("kubelet-"+n.name, n))
	}
	for _, u := range all {
		if err := issue(o, ca, u); err != nil {
			return err
		}
		if err := writeKubeconfig(o, u.name); err != nil {
			return err
		}
	}
	return nil
}

func newKey() (*ecdsa.PrivateKey, error) { return ecdsa.GenerateKey(elliptic.P256(), rand.Reader) }

func serial() (*big.Int, error) { return rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127)) }

func newAuthority(o options, name, cn string) (authority, error) {
	key, err := newKey()
	if err != nil {
		return authority{}, err
	}
	sn, err := serial()
	if err != nil {
		return authority{}, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: sn, Subject: pkix.Name{CommonName: cn},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(o.validity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return authority{}, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return authority{}, err
	}
	return authority{cert: cert, key: key}, writePair(o.dir, name, der, key)
}

func issue(o options, ca authority, l leaf) error {
	key, err := newKey()
	if err != nil {
		return err
	}
	sn, err := serial()
	if err != nil {
		return err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: sn, Subject: pkix.Name{CommonName: l.cn, Organization: l.org},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(o.validity),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		IPAddresses: l.ips, DNSNames: l.dns,
	}
	if l.server {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageServerAuth)
	}
	if l.client {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageClientAuth)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return fmt.Errorf("issue %s: %w", l.name, err)
	}
	return writePair(o.dir, l.name, der, key)
}

// serviceAccountKey writes the key pair that signs ServiceAccount tokens.
func serviceAccountKey(o options) error {
	key, err := newKey()
	if err != nil {
		return err
	}
	if err := writeKey(filepath.Join(o.dir, "sa.key"), key); err != nil {
		return err
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(o.dir, "sa.pub"), pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), 0o644)
}

func writePair(dir, name string, der []byte, key *ecdsa.PrivateKey) error {
	crt := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	if err := os.WriteFile(filepath.Join(dir, name+".crt"), crt, 0o644); err != nil {
		return err
	}
	return writeKey(filepath.Join(dir, name+".key"), key)
}

func writeKey(path string, key *ecdsa.PrivateKey) error {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), 0o600)
}

// writeKubeconfig embeds the CA and the user's pair so that the file works
// when copied elsewhere (the admin's copy is handed to tests).
func writeKubeconfig(o options, user string) error {
	read := func(name string) (string, error) {
		b, err := os.ReadFile(filepath.Join(o.dir, name))
		return base64.StdEncoding.EncodeToString(b), err
	}
	ca, err := read("ca.crt")
	if err != nil {
		return err
	}
	crt, err := read(user + ".crt")
	if err != nil {
		return err
	}
	key, err := read(user + ".key")
	if err != nil {
		return err
	}
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: capk-hosting
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: %s
  user:
    client-certificate-data: %s
    client-key-data: %s
contexts:
- name: capk-hosting
  context: {cluster: capk-hosting, user: %s}
current-context: capk-hosting
`, o.server, ca, user, crt, key, user)
	return os.WriteFile(filepath.Join(o.dir, user+".kubeconfig"), []byte(cfg), 0o600)
}
