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
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/layout"
)

// TestBuildWritesALoadableLayout builds an image from a -file and reads the
// tarball back as an OCI layout: name annotation, config and layer content.
func TestBuildWritesALoadableLayout(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "hello")
	if err := os.WriteFile(src, []byte("#!/bin/sh\necho hi\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "image.tar")
	o, err := parseFlags([]string{"-ref", "busybox:1", "-out", out, "-file", src + ":/usr/local/bin/hello:0755",
		"-entrypoint", `["/usr/local/bin/hello"]`, "-env", "PATH=/usr/local/bin", "-stop-signal", "SIGRTMIN+3"})
	if err != nil {
		t.Fatal(err)
	}
	if err := build(o); err != nil {
		t.Fatal(err)
	}

	index, err := layout.ImageIndexFromPath(untar(t, out, filepath.Join(dir, "layout")))
	if err != nil {
		t.Fatal(err)
	}
	manifest, err := index.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if got := manifest.Manifests[0].Annotations["io.containerd.image.name"]; got != "docker.io/library/busybox:1" {
		t.Errorf("image name = %q, want docker.io/library/busybox:1", got)
	}
	img, err := index.Image(manifest.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cfg.Config.Entrypoint, []string{"/usr/local/bin/hello"}) || cfg.Config.StopSignal != "SIGRTMIN+3" ||
		!slices.Equal(cfg.Config.Env, []string{"PATH=/usr/local/bin"}) {
		t.Errorf("config = %+v", cfg.Config)
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("layers = %d, %v; want 1", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rc.Close() }()
	var names []string
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, hdr.Name)
		if hdr.Name == "usr/local/bin/hello" && hdr.Mode != 0o755 {
			t.Errorf("mode of hello = %o, want 755", hdr.Mode)
		}
	}
	if want := []string{"usr/", "usr/local/", "usr/local/bin/", "usr/local/bin/hello"}; !slices.Equal(names, want) {
		t.Errorf("layer entries = %v, want %v", names, want)
	}
}

func TestParseFlagsRejectsBadInput(t *testing.T) {
	for name, args := range map[string][]string{
		"no ref":         {"-out", "x", "-file", "a:/a"},
		"no layers":      {"-ref", "a:1", "-out", "x"},
		"relative dest":  {"-ref", "a:1", "-out", "x", "-file", "a:b"},
		"bad entrypoint": {"-ref", "a:1", "-out", "x", "-file", "a:/a", "-entrypoint", "/pause"},
		"bad mode":       {"-ref", "a:1", "-out", "x", "-file", "a:/a:rwx"},
	} {
		if _, err := parseFlags(args); err == nil {
			t.Errorf("%s: accepted %v", name, args)
		}
	}
}

func untar(t *testing.T, file, dir string) string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }() // read only
	tr := tar.NewReader(f)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return dir
		}
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, hdr.Name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		content, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
