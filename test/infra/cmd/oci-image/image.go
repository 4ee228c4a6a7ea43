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
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// build assembles the image of o and writes it to o.out.
func build(o options) error {
	ref, err := containerdName(o.ref)
	if err != nil {
		return err
	}
	layers := make([]v1.Layer, 0, len(o.layers)+1)
	for _, path := range o.layers {
		l, err := newFileLayer(path)
		if err != nil {
			return err
		}
		layers = append(layers, l)
	}
	if len(o.files) > 0 {
		l, err := filesLayer(o.files, filepath.Dir(o.out))
		if err != nil {
			return err
		}
		defer func() { _ = os.Remove(l.path) }() // a temporary file next to the output
		layers = append(layers, l)
	}
	img, err := assemble(layers, o)
	if err != nil {
		return err
	}
	return writeLayout(img, ref, o.out)
}

// containerdName is the fully qualified name containerd stores an image under
// (docker.io/library/busybox:latest for busybox).
func containerdName(ref string) (string, error) {
	tag, err := name.NewTag(ref)
	if err != nil {
		return "", fmt.Errorf("-ref %q: %w", ref, err)
	}
	registry := tag.RegistryStr()
	if registry == name.DefaultRegistry {
		registry = "docker.io"
	}
	return registry + "/" + tag.RepositoryStr() + ":" + tag.TagStr(), nil
}

// assemble stacks the layers on an empty OCI image and sets its configuration.
func assemble(layers []v1.Layer, o options) (v1.Image, error) {
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err := mutate.AppendLayers(img, layers...)
	if err != nil {
		return nil, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = "linux", runtime.GOARCH
	cfg.Created = v1.Time{Time: time.Unix(0, 0).UTC()}
	cfg.Config.Env = o.env
	cfg.Config.Entrypoint = o.entrypoint
	cfg.Config.Cmd = o.cmd
	cfg.Config.User = o.user
	cfg.Config.WorkingDir = o.workdir
	cfg.Config.StopSignal = o.stopSignal
	return mutate.ConfigFile(img, cfg)
}

// filesLayer writes the -file entries as one uncompressed tar next to the
// output; parent folders are created 0755, files are owned by root, and a fixed
// mtime keeps the digest stable from one build to the next.
func filesLayer(specs []string, dir string) (*fileLayer, error) {
	f, err := os.CreateTemp(dir, ".oci-image-files-*.tar")
	if err != nil {
		return nil, err
	}
	err = writeFiles(f, specs)
	if closeErr := f.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		return nil, errors.Join(err, os.Remove(f.Name()))
	}
	return newFileLayer(f.Name())
}

func writeFiles(w io.Writer, specs []string) error {
	tw := tar.NewWriter(w)
	dirs := map[string]bool{}
	for _, spec := range specs {
		src, dest, mode, err := parseFileSpec(spec)
		if err != nil {
			return err
		}
		if err := writeParents(tw, dirs, dest); err != nil {
			return err
		}
		if err := writeFile(tw, src, dest, mode); err != nil {
			return err
		}
	}
	return tw.Close()
}

// parseFileSpec splits SRC:DEST[:MODE]; the mode defaults to the source's.
func parseFileSpec(spec string) (src, dest string, mode int64, err error) {
	parts := strings.Split(spec, ":")
	if len(parts) < 2 || len(parts) > 3 || parts[0] == "" || !strings.HasPrefix(parts[1], "/") {
		return "", "", 0, fmt.Errorf("-file %q: want SRC:/ABSOLUTE/DEST[:MODE]", spec)
	}
	src, dest, mode = parts[0], parts[1], -1
	if len(parts) == 3 {
		if mode, err = strconv.ParseInt(parts[2], 8, 32); err != nil {
			return "", "", 0, fmt.Errorf("-file %q: mode %q is not octal", spec, parts[2])
		}
	}
	return src, dest, mode, nil
}

func writeParents(tw *tar.Writer, written map[string]bool, dest string) error {
	var parents []string
	for dir := filepath.Dir(dest); dir != "/" && !written[dir]; dir = filepath.Dir(dir) {
		parents = append([]string{dir}, parents...)
	}
	for _, dir := range parents {
		written[dir] = true
		hdr := &tar.Header{Name: strings.TrimPrefix(dir, "/") + "/", Mode: 0o755, Typeflag: tar.TypeDir, ModTime: time.Unix(0, 0)}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
	}
	return nil
}

func writeFile(tw *tar.Writer, src, dest string, mode int64) error {
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }() // read only
	info, err := f.Stat()
	if err != nil {
		return err
	}
	if mode < 0 {
		mode = int64(info.Mode().Perm())
	}
	hdr := &tar.Header{Name: strings.TrimPrefix(dest, "/"), Mode: mode, Size: info.Size(),
		Typeflag: tar.TypeReg, ModTime: time.Unix(0, 0)}
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	_, err = io.Copy(tw, f)
	return err
}

// fileLayer is an uncompressed tar file used as is: its digest is its diff ID.
type fileLayer struct {
	path   string
	digest v1.Hash
	size   int64
}

var _ v1.Layer = (*fileLayer)(nil)

func newFileLayer(path string) (*fileLayer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }() // read only
	h := sha256.New()
	size, err := io.Copy(h, f)
	if err != nil {
		return nil, fmt.Errorf("hashing layer %s: %w", path, err)
	}
	return &fileLayer{path: path, size: size,
		digest: v1.Hash{Algorithm: "sha256", Hex: fmt.Sprintf("%x", h.Sum(nil))}}, nil
}

func (l *fileLayer) Digest() (v1.Hash, error)             { return l.digest, nil }
func (l *fileLayer) DiffID() (v1.Hash, error)             { return l.digest, nil }
func (l *fileLayer) Size() (int64, error)                 { return l.size, nil }
func (l *fileLayer) MediaType() (types.MediaType, error)  { return types.OCIUncompressedLayer, nil }
func (l *fileLayer) Compressed() (io.ReadCloser, error)   { return os.Open(l.path) }
func (l *fileLayer) Uncompressed() (io.ReadCloser, error) { return os.Open(l.path) }
