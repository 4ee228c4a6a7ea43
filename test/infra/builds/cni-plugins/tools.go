//go:build tools

// Package tools pins the four CNI plugins kind's base image carries (see
// ../kind-base.sh).
package tools

import (
	_ "github.com/containernetworking/plugins/plugins/ipam/host-local"
	_ "github.com/containernetworking/plugins/plugins/main/loopback"
	_ "github.com/containernetworking/plugins/plugins/main/ptp"
	_ "github.com/containernetworking/plugins/plugins/meta/portmap"
)
