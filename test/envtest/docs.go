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

package envtest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// DocumentedHostingRBAC decodes the first YAML block after the heading
// "Permissions the kubeconfig needs" of docs/hosting-clusters.md, for a
// ServiceAccount in hostingNamespace and with cluster-scoped names of its own:
// the end-to-end tests use exactly what the documentation tells users.
func DocumentedHostingRBAC(hostingNamespace string) ([]*unstructured.Unstructured, error) {
	doc, err := os.ReadFile(filepath.Join(RepositoryRoot(), "docs", "hosting-clusters.md"))
	if err != nil {
		return nil, fmt.Errorf("reading the documented hosting RBAC: %w", err)
	}
	_, section, found := strings.Cut(string(doc), "### Permissions the kubeconfig needs")
	if !found {
		return nil, errors.New("docs/hosting-clusters.md lost its permissions section")
	}
	_, block, found := strings.Cut(section, "```yaml\n")
	if found {
		block, _, found = strings.Cut(block, "```")
	}
	if !found {
		return nil, errors.New("no YAML block in the permissions section of docs/hosting-clusters.md")
	}
	block = strings.ReplaceAll(block, "workload-nodes", hostingNamespace)
	block = strings.ReplaceAll(block, "name: capk-hosting-read", "name: capk-hosting-read-"+hostingNamespace)
	return DecodeObjects([]byte(block))
}
