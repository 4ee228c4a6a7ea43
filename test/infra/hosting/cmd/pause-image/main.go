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

// Command pause-image packs a static pause binary into a one-layer OCI image
// and writes it as an OCI image-layout tarball that `ctr images import`
// accepts. The index entry carries the full reference in
// io.containerd.image.name, which containerd uses as the image name, so the
// import needs no --base-name and the sandbox image name the kubelet and
// containerd expect (registry.k8s.io/pause:<v>) exists without any registry.
package main

import (
	"archive/tar"
	"bytes"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

func main() {
	binary := flag.String("binary", "", "static pause executable to pack as /pause")
	ref := flag.String("ref", "registry.k8s.io/pause:3.10.2", "image reference to record")
	out := flag.String("out", "", "OCI layout tarball to write")
	flag.Parse()
	if *binary == "" || *out == "" {
		fmt.Fprintln(os.Stderr, "pause-image: -binary and -out are required")
		os.Exit(2)
	}
	if err := run(*binary, *ref, *out); err != nil {
		fmt.Fprintln(os.Stderr, "pause-image:", err)
		os.Exit(1)
	}
}

func run(binary, ref, out string) error {
	tag, err := name.NewTag(ref)
	if err != nil {
		return err
	}
	img, err := image(binary)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp(filepath.Dir(out), ".pause-layout-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	annotations := map[string]string{
		"io.containerd.image.name":          tag.Name(),
		"org.opencontainers.image.ref.name": tag.TagStr(),
	}
	if err := p.AppendImage(img, layout.WithAnnotations(annotations)); err != nil {
		return err
	}
	return tarDir(dir, out)
}

// image builds the OCI image: one layer holding /pause, run as nobody like
// the upstream image.
func image(binary string) (v1.Image, error) {
	exe, err := os.ReadFile(binary)
	if err != nil {
		return nil, err
	}
	layerTar, err := singleFileTar("pause", exe)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	if img, err = mutate.AppendLayers(img, layer); err != nil {
		return nil, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = "linux", runtime.GOARCH
	cfg.Config.Entrypoint = []string{"/pause"}
	cfg.Config.User = "65535:65535"
	return mutate.ConfigFile(img, cfg)
}

// singleFileTar is a layer with one root-owned executable; a fixed mtime keeps
// the image digest stable from one build to the next.
func singleFileTar(path string, content []byte) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	hdr := &tar.Header{Name: path, Mode: 0o755, Size: int64(len(content)), ModTime: time.Unix(0, 0), Typeflag: tar.TypeReg}
	if err := tw.WriteHeader(hdr); err != nil {
		return nil, err
	}
	if _, err := tw.Write(content); err != nil {
		return nil, err
	}
	return buf.Bytes(), tw.Close()
}

// tarDir writes the layout folder as an uncompressed tarball, paths relative
// to its root (oci-layout, index.json, blobs/...).
func tarDir(dir, out string) error {
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(f)
	walkErr := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == dir {
			return err
		}
		return addToTar(tw, dir, path, d)
	})
	if walkErr != nil {
		f.Close()
		return walkErr
	}
	if err := tw.Close(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func addToTar(tw *tar.Writer, root, path string, d fs.DirEntry) error {
	info, err := d.Info()
	if err != nil {
		return err
	}
	rel, err := filepath.Rel(root, path)
	if err != nil {
		return err
	}
	hdr, err := tar.FileInfoHeader(info, "")
	if err != nil {
		return err
	}
	hdr.Name = filepath.ToSlash(rel)
	if d.IsDir() {
		hdr.Name += "/"
	}
	if err := tw.WriteHeader(hdr); err != nil || d.IsDir() {
		return err
	}
	content, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	_, err = tw.Write(content)
	return err
}
