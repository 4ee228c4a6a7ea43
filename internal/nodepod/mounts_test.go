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

package nodepod

import "testing"

func TestMountPathConflict(t *testing.T) {
	tests := []struct {
		mountPath    string
		wantConflict bool
	}{
		{mountPath: "/var/lib/etcd", wantConflict: false},
		{mountPath: "/data", wantConflict: false},
		{mountPath: "/mnt/disks/a", wantConflict: false},
		{mountPath: "relative/path", wantConflict: true},
		{mountPath: "/var/lib/../etc", wantConflict: true},
		{mountPath: "/data/", wantConflict: true},
		{mountPath: "/var", wantConflict: true},
		{mountPath: "/var/lib", wantConflict: true},
		{mountPath: "/lib/modules", wantConflict: true},
		{mountPath: "/run/cluster-api", wantConflict: true},
		{mountPath: "/", wantConflict: true},
		{mountPath: "/var/lib/containerd", wantConflict: true},
		{mountPath: "/var/lib/containerd/io.containerd.snapshotter.v1.overlayfs", wantConflict: true},
	}
	for _, tt := range tests {
		t.Run(tt.mountPath, func(t *testing.T) {
			got := MountPathConflict(tt.mountPath)
			if (got != "") != tt.wantConflict {
				t.Fatalf("MountPathConflict(%q) = %q, want conflict %v", tt.mountPath, got, tt.wantConflict)
			}
		})
	}
}
