//go:build tools

// Package tools pins containerd-fuse-overlayfs-grpc for the node image (see ../kind-base.sh).
package tools

import _ "github.com/containerd/fuse-overlayfs-snapshotter/v2/cmd/containerd-fuse-overlayfs-grpc"
