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

// Package clusterctl tests the release artifacts the way users consume them: the
// real clusterctl (built from source) generates every flavor from a local
// repository made of out/, and a real kube-apiserver with the Cluster API,
// cert-manager and provider CRDs and the provider's webhooks accepts the result.
package clusterctl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/test/envtest"
)

// providerVersion is the version the local repository serves; it matches the
// release series in metadata.yaml.
const providerVersion = "v0.2.0"

// localRepository lays out out/ as a clusterctl provider repository and writes a
// clusterctl config that points at it; it returns the config's path.
func localRepository(dir string) (string, error) {
	versionDir := filepath.Join(dir, "repository", "infrastructure-kubernetes", providerVersion)
	if err := os.MkdirAll(versionDir, 0o755); err != nil {
		return "", err
	}
	artifacts, err := filepath.Glob(filepath.Join(envtest.RepositoryRoot(), "out", "*.yaml"))
	if err != nil || len(artifacts) == 0 {
		return "", fmt.Errorf("no release artifacts in out/: run 'make release-manifests' (make test does): %v", err)
	}
	for _, artifact := range artifacts {
		data, err := os.ReadFile(artifact)
		if err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(versionDir, filepath.Base(artifact)), data, 0o644); err != nil {
			return "", err
		}
	}
	config := fmt.Sprintf(`providers:
- name: kubernetes
  type: InfrastructureProvider
  url: file://%s/infrastructure-components.yaml
CLUSTERCTL_DISABLE_VERSIONCHECK: "true"
`, versionDir)
	path := filepath.Join(dir, "clusterctl.yaml")
	return path, os.WriteFile(path, []byte(config), 0o644)
}

// clusterctl runs the clusterctl binary named by $CLUSTERCTL with a HOME of its own.
func clusterctl(home string, env []string, args ...string) ([]byte, error) {
	binary := os.Getenv("CLUSTERCTL")
	if binary == "" {
		return nil, errors.New("CLUSTERCTL is not set: run the tests with 'make test', which builds clusterctl and sets it")
	}
	cmd := exec.Command(binary, args...)
	cmd.Env = append([]string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}, env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("clusterctl %s: %w: %s", strings.Join(args, " "), err, stderr.String())
	}
	return out, nil
}

// serverSideApply applies every object with the given field owner; dryRun asks
// the API server to validate (schemas, CEL, webhooks) without storing.
func serverSideApply(ctx context.Context, c client.Client, objects []*unstructured.Unstructured, dryRun bool) error {
	var errs []error
	for _, obj := range objects {
		opts := []client.PatchOption{client.FieldOwner("gitops"), client.ForceOwnership}
		if dryRun {
			opts = append(opts, client.DryRunAll)
		}
		applied := obj.DeepCopy()
		if err := c.Patch(ctx, applied, client.Apply, opts...); err != nil { //nolint:staticcheck // unstructured apply
			errs = append(errs, fmt.Errorf("%s %s: %w", obj.GetKind(), obj.GetName(), err))
		}
	}
	return errors.Join(errs...)
}

// variableDefault matches clusterctl's ${VAR:=default} (and ${VAR}) forms.
var variableDefault = regexp.MustCompile(`\$\{\s*([A-Za-z0-9_]+)\s*(?::?[=-]([^}]*))?\}`)

// substituteDefaults does what clusterctl does when no variable is set: it uses
// each default, and fails on variables without one (an empty default counts as
// none: clusterctl asks for such variables too).
func substituteDefaults(data []byte) ([]byte, error) {
	var missing []string
	out := variableDefault.ReplaceAllFunc(data, func(match []byte) []byte {
		groups := variableDefault.FindSubmatch(match)
		if len(groups[2]) == 0 {
			missing = append(missing, string(groups[1]))
		}
		return groups[2]
	})
	if len(missing) > 0 {
		return nil, fmt.Errorf("variables without defaults: %v", missing)
	}
	return out, nil
}
