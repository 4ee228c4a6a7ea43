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
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// node is an image under test: its layers' entries by path, bottom layer first.
type node struct {
	layers []map[string]tar.Header
	data   map[string][]byte // regular files' contents, by path
	config v1.ConfigFile
}

const dockerfile = `FROM x AS base
COPY --chmod=0755 files/usr/local/bin/* /usr/local/bin/
RUN chmod 755 /kind /kind/bin && \
    echo "Installing Packages ..." \
    && DEBIAN_FRONTEND=noninteractive clean-install \
      systemd \
      jq procps \
    && find /lib/systemd/system/sysinit.target.wants/ -delete
RUN systemctl enable kubelet.service \
    && systemctl mask systemd-binfmt.service
ARG CONTAINERD_VERSION="%s"
`

// writeRecipe writes a small images/base folder whose one program is the
// module this test binary carries at its version (so that a real binary's
// Go build information can be checked), and returns the folder, the program
// and the test binary.
func writeRecipe(t *testing.T) (string, program, []byte) {
	t.Helper()
	info, ok := debug.ReadBuildInfo()
	if !ok {
		t.Fatal("the test binary has no build information")
	}
	var dep *debug.Module
	for _, d := range info.Deps {
		if d.Path == "github.com/google/go-containerregistry" {
			dep = d
		}
	}
	if dep == nil {
		t.Fatal("the test binary does not carry go-containerregistry")
	}
	dir := t.TempDir()
	write(t, filepath.Join(dir, "Dockerfile"), strings.Replace(dockerfile, "%s", dep.Version, 1))
	write(t, filepath.Join(dir, "files/usr/local/bin/entrypoint"), "#!/bin/bash\nexec \"$@\"\n")
	write(t, filepath.Join(dir, "files/etc/containerd/config.toml"), "version = 2\n")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	binary, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	return dir, program{"usr/local/bin/containerd", dep.Path, "CONTAINERD_VERSION"}, binary
}

func write(t *testing.T, file, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// goodNode is what build-kind.sh makes of the recipe above: a merged-/usr
// Debian layer with kind's files, and a node layer.
func goodNode(binary []byte) *node {
	n := &node{data: map[string][]byte{}, layers: []map[string]tar.Header{{}, {}}}
	n.config.Config.Entrypoint = []string{"/usr/local/bin/entrypoint", "/sbin/init"}
	n.config.Config.Env = []string{"container=docker"}
	n.config.Config.StopSignal = "SIGRTMIN+3"
	n.link(0, "sbin", "usr/sbin")
	n.link(0, "usr/sbin/init", "/usr/lib/systemd/systemd")
	n.file(0, "usr/lib/systemd/systemd", 0o755, "systemd")
	n.file(0, "usr/local/bin/entrypoint", 0o755, "#!/bin/bash\nexec \"$@\"\n")
	n.file(0, "etc/containerd/config.toml", 0o644, "version = 2\n")
	n.file(0, "var/lib/dpkg/status", 0o644, "Package: systemd\nStatus: install ok installed\n\n"+
		"Package: jq\nStatus: install ok installed\n\nPackage: procps\nStatus: install ok installed\n")
	n.link(0, "etc/systemd/system/multi-user.target.wants/kubelet.service", "/etc/systemd/system/kubelet.service")
	n.link(0, "etc/systemd/system/systemd-binfmt.service", "/dev/null")
	n.dir(0, "etc/kubernetes/manifests")
	n.file(1, "usr/local/bin/containerd", 0o755, string(binary))
	n.file(1, "etc/containerd/cri-base.json", 0o644,
		`{"process":{"args":["sh"]},"hooks":{"createContainer":[{"path":"/kind/bin/mount-product-files.sh"}]}}`)
	for _, b := range []string{"kubeadm", "kubelet", "kubectl"} {
		n.file(1, "usr/bin/"+b, 0o755, b)
	}
	n.file(1, "kind/version", 0o644, "v1.36.3")
	n.file(1, "var/lib/containerd/io.containerd.metadata.v1.bolt/meta.db", 0o644, "bolt")
	return n
}

func (n *node) file(layer int, p string, mode int64, content string) {
	n.layers[layer][p] = tar.Header{Name: p, Typeflag: tar.TypeReg, Mode: mode, Size: int64(len(content))}
	n.data[p] = []byte(content)
}

func (n *node) link(layer int, p, target string) {
	n.layers[layer][p] = tar.Header{Name: p, Typeflag: tar.TypeSymlink, Linkname: target, Mode: 0o777}
}

func (n *node) dir(layer int, p string) {
	n.layers[layer][p] = tar.Header{Name: p + "/", Typeflag: tar.TypeDir, Mode: 0o755}
}

// write stores the image as an OCI image-layout tarball, the way
// test/infra/cmd/oci-image does: uncompressed layers, one manifest.
func (n *node) write(t *testing.T) string {
	t.Helper()
	blobs := map[string][]byte{}
	add := func(data []byte) v1.Descriptor {
		sum := sha256.Sum256(data)
		h := v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(sum[:])}
		blobs[blobName(h)] = data
		return v1.Descriptor{Digest: h, Size: int64(len(data))}
	}
	var manifest v1.Manifest
	manifest.SchemaVersion = 2
	for _, layer := range n.layers {
		manifest.Layers = append(manifest.Layers, add(n.layerTar(t, layer)))
	}
	manifest.Config = add(mustJSON(t, n.config))
	index := v1.IndexManifest{SchemaVersion: 2, Manifests: []v1.Descriptor{add(mustJSON(t, manifest))}}
	var out bytes.Buffer
	tw := tar.NewWriter(&out)
	entries := []struct {
		name string
		data []byte
	}{{"index.json", mustJSON(t, index)}}
	for name, data := range blobs {
		entries = append(entries, struct {
			name string
			data []byte
		}{name, data})
	}
	for _, e := range entries {
		writeEntry(t, tw, tar.Header{Name: e.name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(e.data))}, e.data)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "node.tar")
	if err := os.WriteFile(file, out.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

func (n *node) layerTar(t *testing.T, layer map[string]tar.Header) []byte {
	var out bytes.Buffer
	tw := tar.NewWriter(&out)
	for p, h := range layer {
		h.Name = "./" + h.Name // as `tar -C dir .` writes them
		writeEntry(t, tw, h, n.data[p])
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func writeEntry(t *testing.T, tw *tar.Writer, h tar.Header, data []byte) {
	t.Helper()
	if err := tw.WriteHeader(&h); err != nil {
		t.Fatal(err)
	}
	if h.Typeflag == tar.TypeReg {
		if _, err := tw.Write(data); err != nil {
			t.Fatal(err)
		}
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func checkNodeImage(t *testing.T, n *node, dir string, p program) []string {
	t.Helper()
	r, err := readRecipe(dir)
	if err != nil {
		t.Fatal(err)
	}
	img, err := openImage(n.write(t))
	if err != nil {
		t.Fatal(err)
	}
	problems, err := checkImage(img, r, []program{p}, "v1.36.3")
	if err != nil {
		t.Fatal(err)
	}
	return problems
}

func TestAnImageBuiltByTheRecipePasses(t *testing.T) {
	dir, p, binary := writeRecipe(t)
	if problems := checkNodeImage(t, goodNode(binary), dir, p); len(problems) > 0 {
		t.Fatalf("problems in an image that follows the recipe:\n%s", strings.Join(problems, "\n"))
	}
	r, err := readRecipe(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := summary(r, []program{p}), "2 files, 1 programs, 3 packages, 2 units"; got != want {
		t.Errorf("summary = %q, want %q", got, want)
	}
}

// TestEveryDriftIsReported changes one thing at a time in a good image and
// wants the one problem that names it.
func TestEveryDriftIsReported(t *testing.T) {
	dir, p, binary := writeRecipe(t)
	for _, tc := range []struct {
		name   string
		change func(n *node)
		want   string
	}{
		{"a kind file replaced by a later layer", func(n *node) { n.file(1, "etc/containerd/config.toml", 0o644, "version = 3\n") },
			"/etc/containerd/config.toml: differs from kind's"},
		{"a kind file missing", func(n *node) { delete(n.layers[0], "usr/local/bin/entrypoint") },
			"/usr/local/bin/entrypoint: kind's file is missing"},
		{"a script that is not executable", func(n *node) {
			n.file(0, "usr/local/bin/entrypoint", 0o644, "#!/bin/bash\nexec \"$@\"\n")
		}, "/usr/local/bin/entrypoint: mode 644, kind's Dockerfile gives 755"},
		{"a program of another version", func(n *node) {
			n.file(1, "usr/local/bin/containerd", 0o755, "not a Go binary")
		}, "/usr/local/bin/containerd: no Go build information"},
		{"a package not installed", func(n *node) {
			n.file(0, "var/lib/dpkg/status", 0o644, "Package: systemd\nStatus: install ok installed\n\nPackage: jq\nStatus: deinstall ok config-files\n")
		}, "package jq of kind's Dockerfile is not installed"},
		{"a unit not enabled", func(n *node) {
			delete(n.layers[0], "etc/systemd/system/multi-user.target.wants/kubelet.service")
		}, "kubelet.service is not enabled"},
		{"a unit not masked", func(n *node) { n.file(0, "etc/systemd/system/systemd-binfmt.service", 0o644, "") },
			"systemd-binfmt.service is not masked"},
		{"/sbin/init elsewhere", func(n *node) { n.link(0, "usr/sbin/init", "/bin/bash") },
			"/sbin/init resolves to /bin/bash"},
		{"another Kubernetes version", func(n *node) { n.file(1, "kind/version", 0o644, "v1.35.4") },
			`/kind/version is "v1.35.4", want "v1.36.3"`},
		{"no preloaded store", func(n *node) {
			delete(n.layers[1], "var/lib/containerd/io.containerd.metadata.v1.bolt/meta.db")
		}, "/var/lib/containerd/io.containerd.metadata.v1.bolt/meta.db is missing"},
		{"no kind hook", func(n *node) { n.file(1, "etc/containerd/cri-base.json", 0o644, `{"process":{"rlimits":[]}}`) },
			"cri-base.json sets rlimits"},
		{"another entrypoint", func(n *node) { n.config.Config.Entrypoint = []string{"/sbin/init"} },
			"entrypoint is"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := goodNode(binary)
			tc.change(n)
			problems := checkNodeImage(t, n, dir, p)
			if !strings.Contains(strings.Join(problems, "\n"), tc.want) {
				t.Errorf("problems %q lack %q", problems, tc.want)
			}
		})
	}
}

func TestAProgramOfAnotherVersionIsReported(t *testing.T) {
	dir, p, binary := writeRecipe(t)
	dockerfile, err := os.ReadFile(filepath.Join(dir, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	changed := strings.Replace(string(dockerfile), `CONTAINERD_VERSION="`, `CONTAINERD_VERSION="v0.0.1-`, 1)
	write(t, filepath.Join(dir, "Dockerfile"), changed)
	problems := checkNodeImage(t, goodNode(binary), dir, p)
	want := "/usr/local/bin/containerd: built from github.com/google/go-containerregistry"
	if len(problems) != 1 || !strings.HasPrefix(problems[0], want) || !strings.Contains(problems[0], "v0.0.1-") {
		t.Errorf("problems = %q, want one that starts %q and names the ARG's version", problems, want)
	}
}
