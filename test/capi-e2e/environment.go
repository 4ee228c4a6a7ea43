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

package capie2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

// readEnvironment reads the KEY=value lines test/infra/env.sh up wrote, and
// adds what the e2e config needs from the environment's clusterctl
// configuration (MANAGEMENT_REPOSITORY, its local repository, CAPK_IMAGE,
// CERT_MANAGER_URL and CERT_MANAGER_VERSION) and NODE_IMAGE_REPOSITORY, the
// node image without its tag.
func readEnvironment(path string) (map[string]string, error) {
	data, err := os.ReadFile(path) //nolint:gosec // a path the user gave
	if err != nil {
		return nil, fmt.Errorf("reading the environment's settings: %w", err)
	}
	settings := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		if key, value, ok := strings.Cut(line, "="); ok {
			settings[key] = value
		}
	}
	config := settings["CLUSTERCTL_CONFIG"]
	if config == "" {
		return nil, fmt.Errorf("%s has no CLUSTERCTL_CONFIG", path)
	}
	clusterctl, err := readClusterctlConfig(config)
	if err != nil {
		return nil, err
	}
	settings["MANAGEMENT_REPOSITORY"] = filepath.Dir(config)
	settings["CAPK_IMAGE"] = clusterctl.CAPKImage
	settings["CERT_MANAGER_URL"] = clusterctl.CertManager.URL
	settings["CERT_MANAGER_VERSION"] = clusterctl.CertManager.Version
	repository, ok := imageRepository(settings["KUBERNETES_NODE_IMAGE"])
	if !ok {
		return nil, fmt.Errorf("%s: KUBERNETES_NODE_IMAGE %q has no repository:tag form", path, settings["KUBERNETES_NODE_IMAGE"])
	}
	settings["NODE_IMAGE_REPOSITORY"] = repository
	return settings, nil
}

// imageRepository is an image reference without its tag: the part before the
// last colon that follows the last slash (a registry's port is no tag).
func imageRepository(image string) (string, bool) {
	colon := strings.LastIndex(image, ":")
	if colon <= 0 || colon < strings.LastIndex(image, "/") {
		return "", false
	}
	return image[:colon], true
}

// clusterctlConfig is the part of the environment's clusterctl.yaml that the
// suite's own repository takes over.
type clusterctlConfig struct {
	CAPKImage   string `json:"CAPK_IMAGE"`
	CertManager struct {
		URL     string `json:"url"`
		Version string `json:"version"`
	} `json:"cert-manager"`
}

func readClusterctlConfig(path string) (*clusterctlConfig, error) {
	data, err := os.ReadFile(path) //nolint:gosec // the environment's own file
	if err != nil {
		return nil, fmt.Errorf("reading the environment's clusterctl configuration: %w", err)
	}
	config := &clusterctlConfig{}
	if err := yaml.Unmarshal(data, config); err != nil {
		return nil, fmt.Errorf("parsing %s: %w", path, err)
	}
	if config.CAPKImage == "" || config.CertManager.URL == "" || config.CertManager.Version == "" {
		return nil, fmt.Errorf("%s: CAPK_IMAGE, cert-manager.url and cert-manager.version must all be set", path)
	}
	return config, nil
}

// resolveConfig writes the e2e config template with every ${NAME} replaced by
// its setting; a name without a setting, or with an empty one, is an error, so
// that no path or version of the config silently points nowhere.
func resolveConfig(template, out string, settings map[string]string) error {
	data, err := os.ReadFile(template) //nolint:gosec // a path the user gave
	if err != nil {
		return fmt.Errorf("reading the e2e config template: %w", err)
	}
	var missing []string
	resolved := os.Expand(string(data), func(name string) string {
		value := settings[name]
		if value == "" {
			missing = append(missing, name)
		}
		return value
	})
	if len(missing) > 0 {
		slices.Sort(missing)
		return fmt.Errorf("%s: no setting for %s", template, strings.Join(slices.Compact(missing), ", "))
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return fmt.Errorf("writing the e2e config: %w", err)
	}
	if err := os.WriteFile(out, []byte(resolved), 0o600); err != nil {
		return fmt.Errorf("writing the e2e config: %w", err)
	}
	return nil
}

// addCertManager adds the environment's cert-manager release to a clusterctl
// configuration written by the framework, which writes none: without it,
// `clusterctl init` on a new management cluster (the self-hosted spec) would
// fetch cert-manager from GitHub.
func addCertManager(path, url, version string) error {
	data, err := os.ReadFile(path) //nolint:gosec // the framework's file
	if err != nil {
		return fmt.Errorf("reading the suite's clusterctl configuration: %w", err)
	}
	config := map[string]any{}
	if err := yaml.Unmarshal(data, &config); err != nil {
		return fmt.Errorf("parsing %s: %w", path, err)
	}
	config["cert-manager"] = map[string]string{"url": url, "version": version}
	if data, err = yaml.Marshal(config); err != nil {
		return fmt.Errorf("adding cert-manager to %s: %w", path, err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return fmt.Errorf("adding cert-manager to %s: %w", path, err)
	}
	return nil
}
