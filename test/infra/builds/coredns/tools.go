//go:build tools

// Package tools pins CoreDNS so that `go build github.com/coredns/coredns` builds
// the DNS server kubeadm deploys in workload clusters (its image is preloaded in
// the offline node image).
package tools

import _ "github.com/coredns/coredns"
