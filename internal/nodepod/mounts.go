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

// Package nodepod renders the Pod (and its hosting objects) that runs one
// Kubernetes node of a workload cluster.
package nodepod

import (
	"path"
	"strings"
)

// ReservedMountPaths are the paths the node container mounts for itself: a
// kind-style node needs them, so user volumes may neither replace them nor sit
// above them (which would hide them).
var ReservedMountPaths = []string{
	"/",
	"/bin",
	"/boot",
	"/dev",
	"/etc",
	"/etc/capk", // the bootstrap Secret's mount (bootstrap.MountPath)
	"/lib",
	"/lib/modules",
	"/proc",
	"/run",
	"/run/cluster-api",
	"/sbin",
	"/sys",
	"/tmp",
	"/usr",
	"/var",
	"/var/lib/containerd", // the image's preloaded content store
	ContainerdSnapshotsPath,
	"/var/lib/kubelet",
}

// MountPathConflict tells why a user volume may not be mounted at mountPath, or
// returns "" when it may.
func MountPathConflict(mountPath string) string {
	if !path.IsAbs(mountPath) {
		return "must be an absolute path"
	}
	if path.Clean(mountPath) != mountPath {
		return "must be a clean path (no '.', '..', double or trailing slashes)"
	}
	for _, reserved := range ReservedMountPaths {
		if reserved == mountPath {
			return "is a path the node mounts for itself"
		}
		if IsUnder(reserved, mountPath) {
			return "would hide " + reserved + ", which the node mounts for itself"
		}
	}
	return ""
}

// IsUnder reports whether child lies strictly below parent.
func IsUnder(child, parent string) bool {
	if parent == "/" {
		return child != "/"
	}
	return strings.HasPrefix(child, parent+"/")
}
