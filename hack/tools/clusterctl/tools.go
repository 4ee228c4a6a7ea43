//go:build tools

// Package tools pins the Cluster API commands the project builds from source.
package tools

import _ "sigs.k8s.io/cluster-api/cmd/clusterctl"
