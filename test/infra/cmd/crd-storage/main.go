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

// Command crd-storage rewrites the CustomResourceDefinitions of one API group
// in a multi-document manifest so that another served version is their
// storage version: what moving the +kubebuilder:storageversion marker to that
// version generates. The management build uses it to write the provider's
// previous release, v0.1, whose CRDs stored v1alpha1, for the upgrade test.
// Every other document passes through byte for byte.
//
//	crd-storage -group infrastructure.cluster.x-k8s.io -version v1alpha1 <in.yaml >out.yaml
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"

	"sigs.k8s.io/yaml"
)

var separator = regexp.MustCompile(`(?m)^---[ \t]*$`)

func main() {
	group := flag.String("group", "", "API group of the CRDs to rewrite")
	version := flag.String("version", "", "version to make the storage version")
	flag.Parse()
	if *group == "" || *version == "" {
		fmt.Fprintln(os.Stderr, "usage: crd-storage -group G -version V <in.yaml >out.yaml")
		os.Exit(2)
	}
	in, err := io.ReadAll(os.Stdin)
	if err == nil {
		var out []byte
		out, err = rewrite(in, *group, *version)
		if err == nil {
			_, err = os.Stdout.Write(out)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "crd-storage:", err)
		os.Exit(1)
	}
}

// rewrite returns in with the storage version of every CRD of group set to
// version; it fails when no CRD of the group serves that version.
func rewrite(in []byte, group, version string) ([]byte, error) {
	docs := separator.Split(string(in), -1)
	changed := 0
	for i, doc := range docs {
		out, ok, err := rewriteCRD([]byte(doc), group, version)
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i+1, err)
		}
		if ok {
			docs[i] = "\n" + string(out)
			changed++
		}
	}
	if changed == 0 {
		return nil, fmt.Errorf("no CustomResourceDefinition of group %s serves %s", group, version)
	}
	var b bytes.Buffer
	for i, doc := range docs {
		if i > 0 {
			b.WriteString("---")
		}
		b.WriteString(doc)
	}
	return b.Bytes(), nil
}

// rewriteCRD sets the storage flags of one document when it is a CRD of group
// that serves version; ok tells whether it did.
func rewriteCRD(doc []byte, group, version string) (out []byte, ok bool, err error) {
	var obj map[string]any
	if err := yaml.Unmarshal(doc, &obj); err != nil || obj["kind"] != "CustomResourceDefinition" {
		return nil, false, err
	}
	spec, _ := obj["spec"].(map[string]any)
	if spec == nil || spec["group"] != group {
		return nil, false, nil
	}
	versions, _ := spec["versions"].([]any)
	found := false
	for _, v := range versions {
		entry, _ := v.(map[string]any)
		if entry == nil {
			return nil, false, errors.New("spec.versions holds a non-object")
		}
		entry["storage"] = entry["name"] == version
		found = found || entry["name"] == version && entry["served"] == true
	}
	if !found {
		return nil, false, nil // this kind has no such version: keep its storage version
	}
	out, err = yaml.Marshal(obj)
	return out, err == nil, err
}
