//go:build tools

// Package tools pins runc for the node image (see ../kind-base.sh).
package tools

import _ "github.com/opencontainers/runc"
