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
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

const components = `apiVersion: v1
kind: Namespace
metadata:
  name: ${NAMESPACE:=capk-system}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: kubernetesclusters.infrastructure.cluster.x-k8s.io
spec:
  group: infrastructure.cluster.x-k8s.io
  versions:
  - name: v1alpha1
    served: true
    storage: false
  - name: v1beta1
    served: true
    storage: true
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: others.example.com
spec:
  group: example.com
  versions:
  - name: v1alpha1
    served: true
    storage: false
  - name: v1beta1
    served: true
    storage: true
`

func TestRewriteSwitchesOnlyTheGroupsCRDs(t *testing.T) {
	out, err := rewrite([]byte(components), "infrastructure.cluster.x-k8s.io", "v1alpha1")
	if err != nil {
		t.Fatal(err)
	}
	docs := separator.Split(string(out), -1)
	if len(docs) != 3 {
		t.Fatalf("%d documents, want 3:\n%s", len(docs), out)
	}
	original := separator.Split(components, -1)
	for _, i := range []int{0, 2} {
		if docs[i] != original[i] {
			t.Errorf("document %d changed:\n%s\nwant:\n%s", i+1, docs[i], original[i])
		}
	}
	var crd struct {
		Spec struct {
			Versions []struct {
				Name    string
				Storage bool
			}
		}
	}
	if err := yaml.Unmarshal([]byte(docs[1]), &crd); err != nil {
		t.Fatal(err)
	}
	storage := map[string]bool{}
	for _, v := range crd.Spec.Versions {
		storage[v.Name] = v.Storage
	}
	if !storage["v1alpha1"] || storage["v1beta1"] || len(storage) != 2 {
		t.Errorf("storage flags %v, want v1alpha1 alone", storage)
	}
}

func TestRewriteFailsWithoutTheVersion(t *testing.T) {
	_, err := rewrite([]byte(components), "infrastructure.cluster.x-k8s.io", "v1alpha2")
	if err == nil || !strings.Contains(err.Error(), "serves v1alpha2") {
		t.Fatalf("error %v, want one naming the missing version", err)
	}
}
