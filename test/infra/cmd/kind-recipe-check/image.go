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
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// image is the merged file system of the one image in an OCI image-layout
// tarball (as test/infra/cmd/oci-image writes them: uncompressed layers), and
// its configuration. File contents are read on demand.
type image struct {
	file    string
	config  v1.ConfigFile
	entries map[string]entry // the merged view: a path (no leading slash) to its last entry
}

// entry is a path's header in the topmost layer that has it.
type entry struct {
	layer  string // the layer's blob name in the layout
	header tar.Header
}

// maxMetadata bounds the blobs read as JSON (index, manifest, config).
const maxMetadata = 4 << 20

func openImage(file string) (*image, error) {
	small, err := readSmallBlobs(file)
	if err != nil {
		return nil, err
	}
	layers, config, err := manifestOf(small)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	img := &image{file: file, config: config}
	perLayer, err := layerHeaders(file, layers)
	if err != nil {
		return nil, err
	}
	img.entries = merge(layers, perLayer)
	return img, nil
}

// readSmallBlobs reads index.json and every blob small enough to be metadata.
func readSmallBlobs(file string) (map[string][]byte, error) {
	small := map[string][]byte{}
	err := walkTar(file, func(h *tar.Header, r io.Reader) error {
		if h.Typeflag != tar.TypeReg || h.Size > maxMetadata {
			return nil
		}
		data, err := io.ReadAll(r)
		small[h.Name] = data
		return err
	})
	return small, err
}

// manifestOf follows index.json to the image's manifest and returns its
// layers' blob names, in order, and its configuration.
func manifestOf(small map[string][]byte) ([]string, v1.ConfigFile, error) {
	var config v1.ConfigFile
	var index v1.IndexManifest
	if err := json.Unmarshal(small["index.json"], &index); err != nil || len(index.Manifests) != 1 {
		return nil, config, fmt.Errorf("index.json: want one manifest (%v)", err)
	}
	var manifest v1.Manifest
	if err := json.Unmarshal(small[blobName(index.Manifests[0].Digest)], &manifest); err != nil {
		return nil, config, fmt.Errorf("manifest: %w", err)
	}
	if err := json.Unmarshal(small[blobName(manifest.Config.Digest)], &config); err != nil {
		return nil, config, fmt.Errorf("config: %w", err)
	}
	layers := make([]string, 0, len(manifest.Layers))
	for _, l := range manifest.Layers {
		layers = append(layers, blobName(l.Digest))
	}
	return layers, config, nil
}

func blobName(d v1.Hash) string { return "blobs/" + d.Algorithm + "/" + d.Hex }

// layerHeaders reads the headers of every layer's entries.
func layerHeaders(file string, layers []string) (map[string][]tar.Header, error) {
	want := map[string]bool{}
	for _, l := range layers {
		want[l] = true
	}
	headers := map[string][]tar.Header{}
	err := walkTar(file, func(h *tar.Header, r io.Reader) error {
		if !want[h.Name] {
			return nil
		}
		return walkReader(r, func(lh *tar.Header, _ io.Reader) error {
			headers[h.Name] = append(headers[h.Name], *lh)
			return nil
		})
	})
	for _, l := range layers {
		if _, ok := headers[l]; !ok && err == nil {
			err = fmt.Errorf("%s: layer %s is missing", file, l)
		}
	}
	return headers, err
}

// merge applies the layers in order: a later entry replaces an earlier one,
// and a whiteout (.wh.<name>) removes the path and everything below it.
func merge(layers []string, headers map[string][]tar.Header) map[string]entry {
	entries := map[string]entry{}
	for _, l := range layers {
		for _, h := range headers[l] {
			p := cleanPath(h.Name)
			if base := path.Base(p); strings.HasPrefix(base, ".wh.") {
				removeTree(entries, path.Join(path.Dir(p), strings.TrimPrefix(base, ".wh.")))
				continue
			}
			entries[p] = entry{layer: l, header: h}
		}
	}
	delete(entries, ".")
	return entries
}

func removeTree(entries map[string]entry, p string) {
	for name := range entries {
		if name == p || strings.HasPrefix(name, p+"/") {
			delete(entries, name)
		}
	}
}

// cleanPath is a layer entry's path without "./", a leading or a trailing slash.
func cleanPath(name string) string {
	return strings.TrimPrefix(path.Clean("/"+name), "/")
}

// resolve follows symbolic links in every component of p, as the kernel would
// inside the image, and returns the path of the entry p names.
func (img *image) resolve(p string) (string, error) {
	p = cleanPath(p)
	for hops := 0; hops < 40; hops++ {
		target, done := img.resolveOnce(p)
		if done {
			return p, nil
		}
		p = target
	}
	return "", fmt.Errorf("/%s: too many levels of symbolic links", p)
}

// resolveOnce replaces the first component of p that is a symbolic link by
// its target; done is true when no component is one.
func (img *image) resolveOnce(p string) (string, bool) {
	parts := strings.Split(p, "/")
	for i := range parts {
		prefix := strings.Join(parts[:i+1], "/")
		e, ok := img.entries[prefix]
		if !ok || e.header.Typeflag != tar.TypeSymlink {
			continue
		}
		rest := strings.Join(parts[i+1:], "/")
		target := e.header.Linkname
		if !path.IsAbs(target) {
			target = path.Join(path.Dir(prefix), target)
		}
		return cleanPath(path.Join(target, rest)), false
	}
	return p, true
}

// lookup returns the entry p names after following symbolic links.
func (img *image) lookup(p string) (entry, string, bool) {
	resolved, err := img.resolve(p)
	if err != nil {
		return entry{}, "", false
	}
	e, ok := img.entries[resolved]
	return e, resolved, ok
}

// contents reads the regular files the paths name (after following symbolic
// links); a path that names none is left out of the result.
func (img *image) contents(paths ...string) (map[string][]byte, error) {
	byLayer := map[string]map[string][]string{} // layer -> resolved path -> requested paths
	for _, p := range paths {
		e, resolved, ok := img.lookup(p)
		if !ok || e.header.Typeflag != tar.TypeReg {
			continue
		}
		if byLayer[e.layer] == nil {
			byLayer[e.layer] = map[string][]string{}
		}
		byLayer[e.layer][resolved] = append(byLayer[e.layer][resolved], cleanPath(p))
	}
	out := map[string][]byte{}
	err := walkTar(img.file, func(h *tar.Header, r io.Reader) error {
		wanted := byLayer[h.Name]
		if wanted == nil {
			return nil
		}
		return walkReader(r, func(lh *tar.Header, lr io.Reader) error {
			requested := wanted[cleanPath(lh.Name)]
			if requested == nil {
				return nil
			}
			data, err := io.ReadAll(lr)
			for _, p := range requested {
				out[p] = data // a later entry of the same path in the layer wins, as in merge
			}
			return err
		})
	})
	return out, err
}

func walkTar(file string, fn func(*tar.Header, io.Reader) error) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	return walkReader(f, fn)
}

func walkReader(r io.Reader, fn func(*tar.Header, io.Reader) error) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := fn(h, tr); err != nil {
			return err
		}
	}
}
