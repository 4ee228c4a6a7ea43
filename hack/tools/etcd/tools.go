//go:build tools

// Package tools pins etcd's server so that `go build go.etcd.io/etcd/server/v3` builds it.
package tools

import _ "go.etcd.io/etcd/server/v3"
