//go:build tools

// Package tools pins crictl (sigs.k8s.io/cri-tools) for the node image (see ../kind-base.sh).
package tools

import _ "sigs.k8s.io/cri-tools/cmd/crictl"
