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

// Package bootstrap turns Cluster API bootstrap data into a bash script that a
// node Pod runs exactly once from a systemd unit.
//
// Node Pods run a kind-style node image with systemd but without cloud-init,
// so the subset of cloud-config that the Cluster API kubeadm bootstrap
// provider (CABPK) emits is translated here into plain shell: bootcmd, then
// write_files, then runcmd, which is the order cloud-init runs those modules.
package bootstrap

import (
	"errors"
	"fmt"
)

const (
	formatCloudConfig = "cloud-config"
	productionRoot    = "/"
)

var (
	// ErrUnsupportedFormat is returned when the bootstrap data Secret's format
	// key names anything other than cloud-config (for example ignition).
	ErrUnsupportedFormat = errors.New("unsupported bootstrap data format")

	// ErrInvalidCloudConfig is returned when the bootstrap data is not a
	// cloud-config document this package can translate.
	ErrInvalidCloudConfig = errors.New("invalid cloud-config bootstrap data")
)

// Script is the bash script rendered from bootstrap data.
type Script struct {
	// Content is the bash script. It embeds file contents such as private
	// keys and join tokens, so it must be stored and handled like a Secret.
	Content []byte

	// IgnoredKeys lists, sorted, the top-level cloud-config keys that the
	// script does not act on (for example users, ntp or disk_setup), so that
	// callers can log them.
	IgnoredKeys []string
}

// options holds settings that only tests change.
type options struct {
	// root is prefixed to every write_files path; tests set it to a
	// temporary directory so that a rendered script can be run for real
	// without touching the host. Commands are not rewritten.
	root string
}

// Node is the node Pod a script is rendered for.
type Node struct {
	// Hostname replaces the cloud-init instance-data variables for the
	// machine's name ({{ ds.meta_data.hostname }}); a node Pod has no instance
	// data. Empty leaves them as they are.
	Hostname string

	// ProviderID, when set, is passed to the kubelet (--provider-id) before
	// anything else runs, so that the Node registers with the machine's
	// providerID and Cluster API matches them without anyone patching the Node.
	ProviderID string
}

// Render turns bootstrap data into a bash script for node. format is the value
// of the bootstrap data Secret's "format" key: "" and "cloud-config" mean
// cloud-config, which is the only supported format.
func Render(data []byte, format string, node Node) (*Script, error) {
	return render(data, format, node, options{root: productionRoot})
}

func render(data []byte, format string, node Node, opts options) (*Script, error) {
	if format != "" && format != formatCloudConfig {
		return nil, fmt.Errorf("%w %q: only %s is supported", ErrUnsupportedFormat, format, formatCloudConfig)
	}
	if node.Hostname != "" {
		data = substituteHostname(data, node.Hostname)
	}
	cfg, err := parseCloudConfig(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidCloudConfig, err)
	}
	return &Script{
		Content:     renderScript(cfg, node.ProviderID, opts.root),
		IgnoredKeys: cfg.ignoredKeys,
	}, nil
}
