//go:build tools

// Package tools pins kind, whose module carries its node image recipe
// (images/base); no kind program is built.
package tools

import _ "sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
