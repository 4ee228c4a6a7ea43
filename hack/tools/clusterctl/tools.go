//go:build tools

// Package tools pins the Cluster API commands the project builds from source:
// clusterctl and the three managers clusterctl installs (core, kubeadm bootstrap,
// kubeadm control plane). Their main packages are not at the module root: the
// core manager is sigs.k8s.io/cluster-api/core.
package tools

import (
	_ "sigs.k8s.io/cluster-api/bootstrap/kubeadm"
	_ "sigs.k8s.io/cluster-api/cmd/clusterctl"
	_ "sigs.k8s.io/cluster-api/controlplane/kubeadm"
	_ "sigs.k8s.io/cluster-api/core"
)
