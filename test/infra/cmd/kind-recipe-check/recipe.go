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

package main

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
)

// recipe is what kind's base image promises, read from its images/base folder.
type recipe struct {
	// args are the Dockerfile's ARG defaults (the versions it builds).
	args map[string]string
	// packages are the Debian packages of its clean-install.
	packages []string
	// files maps a path in the image (no leading slash) to its source file.
	files map[string]string
	// enabled and masked are the systemd units of its systemctl lines.
	enabled, masked []string
}

var argLine = regexp.MustCompile(`^ARG ([A-Z_]+)="([^"]*)"$`)

// readRecipe reads kind's images/base folder.
func readRecipe(dir string) (recipe, error) {
	r := recipe{args: map[string]string{}, files: map[string]string{}}
	dockerfile, err := os.ReadFile(filepath.Join(dir, "Dockerfile"))
	if err != nil {
		return r, err
	}
	lines := strings.Split(string(dockerfile), "\n")
	for _, line := range lines {
		if m := argLine.FindStringSubmatch(line); m != nil {
			r.args[m[1]] = m[2]
		}
	}
	r.packages = cleanInstallPackages(lines)
	r.enabled = systemctlUnits(lines, "enable")
	r.masked = systemctlUnits(lines, "mask")
	if len(r.packages) == 0 {
		return r, fmt.Errorf("%s: no clean-install package list", filepath.Join(dir, "Dockerfile"))
	}
	root := filepath.Join(dir, "files")
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(root, p)
		r.files[filepath.ToSlash(rel)] = p
		return err
	})
	return r, err
}

// cleanInstallPackages returns the words of the continuation lines after the
// line that ends in "clean-install \", up to the line that starts with "&&".
func cleanInstallPackages(lines []string) []string {
	var packages []string
	in := false
	for _, line := range lines {
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasSuffix(trimmed, "clean-install \\"):
			in = true
		case in && strings.HasPrefix(trimmed, "&&"):
			return packages
		case in:
			packages = append(packages, strings.Fields(strings.TrimSuffix(trimmed, "\\"))...)
		}
	}
	return nil
}

// systemctlUnits returns the units of every "systemctl <verb> <unit>" in the lines.
func systemctlUnits(lines []string, verb string) []string {
	var units []string
	for _, line := range lines {
		fields := strings.Fields(line)
		for i := 0; i+2 < len(fields); i++ {
			if fields[i] == "systemctl" && fields[i+1] == verb {
				units = append(units, fields[i+2])
			}
		}
	}
	return units
}

// fileMode is the mode the Dockerfile's COPY lines give a file: scripts 0755,
// everything else 0644.
func fileMode(p string) int64 {
	if dir := path.Dir(p); dir == "usr/local/bin" || dir == "kind/bin" {
		return 0o755
	}
	return 0o644
}

// program is a binary kind builds from source and the module version it must
// carry, named by the Dockerfile's ARG.
type program struct {
	path   string
	module string
	arg    string
}

// kindPrograms are the programs of kind's base Dockerfile, where it installs them.
var kindPrograms = []program{
	{"usr/local/bin/containerd", "github.com/containerd/containerd/v2", "CONTAINERD_VERSION"},
	{"usr/local/bin/ctr", "github.com/containerd/containerd/v2", "CONTAINERD_VERSION"},
	{"usr/local/bin/containerd-shim-runc-v2", "github.com/containerd/containerd/v2", "CONTAINERD_VERSION"},
	{"usr/local/sbin/runc", "github.com/opencontainers/runc", "RUNC_VERSION"},
	{"usr/local/bin/crictl", "sigs.k8s.io/cri-tools", "CRICTL_VERSION"},
	{"opt/cni/bin/host-local", "github.com/containernetworking/plugins", "CNI_PLUGINS_VERSION"},
	{"opt/cni/bin/loopback", "github.com/containernetworking/plugins", "CNI_PLUGINS_VERSION"},
	{"opt/cni/bin/ptp", "github.com/containernetworking/plugins", "CNI_PLUGINS_VERSION"},
	{"opt/cni/bin/portmap", "github.com/containernetworking/plugins", "CNI_PLUGINS_VERSION"},
	{"usr/local/bin/containerd-fuse-overlayfs-grpc", "github.com/containerd/fuse-overlayfs-snapshotter/v2",
		"CONTAINERD_FUSE_OVERLAYFS_VERSION"},
}

// installedPackages reads the names of the packages dpkg's status file lists
// as installed.
func installedPackages(status []byte) map[string]bool {
	installed := map[string]bool{}
	var name string
	scanner := bufio.NewScanner(strings.NewReader(string(status)))
	scanner.Buffer(make([]byte, 1<<20), 1<<20)
	for scanner.Scan() {
		line := scanner.Text()
		switch {
		case strings.HasPrefix(line, "Package: "):
			name = strings.TrimPrefix(line, "Package: ")
		case line == "Status: install ok installed":
			installed[name] = true
		}
	}
	return installed
}
