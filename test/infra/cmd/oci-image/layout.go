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
	"io"
	"os"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// writeLayout streams img as an OCI image-layout tarball (oci-layout,
// index.json, blobs/sha256/...) straight to out: the layers are copied once,
// with no layout folder on disk in between. The index names the image by ref.
func writeLayout(img v1.Image, ref, out string) error {
	tmp := out + ".partial"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	err = streamLayout(f, img, ref)
	if closeErr := f.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		return errors.Join(err, os.Remove(tmp))
	}
	return os.Rename(tmp, out)
}

func streamLayout(w io.Writer, img v1.Image, ref string) error {
	tw := tar.NewWriter(w)
	if err := addBytes(tw, "oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)); err != nil {
		return err
	}
	index, err := indexFor(img, ref)
	if err != nil {
		return err
	}
	if err := addBytes(tw, "index.json", index); err != nil {
		return err
	}
	if err := addBlobs(tw, img); err != nil {
		return err
	}
	return tw.Close()
}

// indexFor is index.json with the one manifest, named the way containerd and
// the OCI spec read names.
func indexFor(img v1.Image, ref string) ([]byte, error) {
	desc, err := descriptor(img)
	if err != nil {
		return nil, err
	}
	desc.Annotations = map[string]string{
		"io.containerd.image.name":          ref,
		"org.opencontainers.image.ref.name": ref[strings.LastIndex(ref, ":")+1:],
	}
	return json.Marshal(v1.IndexManifest{
		SchemaVersion: 2,
		MediaType:     types.OCIImageIndex,
		Manifests:     []v1.Descriptor{*desc},
	})
}

func descriptor(img v1.Image) (*v1.Descriptor, error) {
	raw, err := img.RawManifest()
	if err != nil {
		return nil, err
	}
	digest, err := img.Digest()
	if err != nil {
		return nil, err
	}
	mt, err := img.MediaType()
	if err != nil {
		return nil, err
	}
	return &v1.Descriptor{MediaType: mt, Size: int64(len(raw)), Digest: digest}, nil
}

// addBlobs writes the manifest, the config and every layer under blobs/.
func addBlobs(tw *tar.Writer, img v1.Image) error {
	manifest, err := img.RawManifest()
	if err != nil {
		return err
	}
	digest, err := img.Digest()
	if err != nil {
		return err
	}
	if err := addBytes(tw, blobPath(digest), manifest); err != nil {
		return err
	}
	config, err := img.RawConfigFile()
	if err != nil {
		return err
	}
	configName, err := img.ConfigName()
	if err != nil {
		return err
	}
	if err := addBytes(tw, blobPath(configName), config); err != nil {
		return err
	}
	layers, err := img.Layers()
	if err != nil {
		return err
	}
	for _, l := range layers {
		if err := addLayer(tw, l); err != nil {
			return err
		}
	}
	return nil
}

func addLayer(tw *tar.Writer, l v1.Layer) error {
	digest, err := l.Digest()
	if err != nil {
		return err
	}
	size, err := l.Size()
	if err != nil {
		return err
	}
	rc, err := l.Compressed()
	if err != nil {
		return err
	}
	defer func() { _ = rc.Close() }() // read only
	if err := tw.WriteHeader(fileHeader(blobPath(digest), size)); err != nil {
		return err
	}
	_, err = io.Copy(tw, rc)
	return err
}

func addBytes(tw *tar.Writer, name string, content []byte) error {
	if err := tw.WriteHeader(fileHeader(name, int64(len(content)))); err != nil {
		return err
	}
	_, err := tw.Write(content)
	return err
}

func fileHeader(name string, size int64) *tar.Header {
	return &tar.Header{Name: name, Mode: 0o644, Size: size, Typeflag: tar.TypeReg, ModTime: time.Unix(0, 0)}
}

func blobPath(h v1.Hash) string { return "blobs/" + h.Algorithm + "/" + h.Hex }
