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

package bootstrap

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

const (
	keyBootCmd    = "bootcmd"
	keyWriteFiles = "write_files"
	keyRunCmd     = "runcmd"

	cloudConfigHeader = "#cloud-config"
)

// jinjaHeader matches the first line CABPK puts before "#cloud-config".
// cloud-init matches it case-insensitively with optional spaces.
var jinjaHeader = regexp.MustCompile(`(?i)^##\s*template:\s*jinja\s*$`)

// cloudConfig is the part of a cloud-config document the script acts on.
type cloudConfig struct {
	bootCmds    []command
	files       []file
	runCmds     []command
	ignoredKeys []string
}

// command is one bootcmd or runcmd entry: either a shell string or an argv
// list, never both.
type command struct {
	shell string
	argv  []string
}

// parseCloudConfig validates the header and decodes the supported modules.
func parseCloudConfig(data []byte) (*cloudConfig, error) {
	body, err := stripHeader(data)
	if err != nil {
		return nil, err
	}
	var top map[string]json.RawMessage
	if err := yaml.Unmarshal(body, &top); err != nil {
		return nil, fmt.Errorf("parsing YAML: %w", err)
	}
	cfg := &cloudConfig{ignoredKeys: ignoredKeys(top)}
	if cfg.bootCmds, err = decodeCommands(keyBootCmd, top[keyBootCmd]); err != nil {
		return nil, err
	}
	if cfg.files, err = decodeWriteFiles(top[keyWriteFiles]); err != nil {
		return nil, err
	}
	if cfg.runCmds, err = decodeCommands(keyRunCmd, top[keyRunCmd]); err != nil {
		return nil, err
	}
	return cfg, nil
}

// stripHeader checks that data is a cloud-config document. CABPK always emits
// "## template: jinja" before "#cloud-config", so that line is accepted and
// skipped. Jinja expressions are not rendered: there is no cloud-init instance
// data on a node Pod, so they are passed through literally.
func stripHeader(data []byte) ([]byte, error) {
	rest := bytes.TrimLeft(data, " \t\r\n")
	if len(rest) == 0 {
		return nil, errors.New("bootstrap data is empty")
	}
	if line, after, _ := bytes.Cut(rest, []byte("\n")); jinjaHeader.Match(bytes.TrimSpace(line)) {
		rest = bytes.TrimLeft(after, " \t\r\n")
	}
	// The offending line is not quoted in the error: bootstrap data is secret.
	header, _, _ := bytes.Cut(rest, []byte("\n"))
	if string(bytes.TrimRight(header, " \t\r")) != cloudConfigHeader {
		return nil, fmt.Errorf("bootstrap data must start with a %q line", cloudConfigHeader)
	}
	return rest, nil
}

// ignoredKeys lists the top-level keys the script does not act on.
func ignoredKeys(top map[string]json.RawMessage) []string {
	var keys []string
	for key := range top {
		switch key {
		case keyBootCmd, keyWriteFiles, keyRunCmd:
		default:
			keys = append(keys, key)
		}
	}
	sort.Strings(keys)
	return keys
}

// decodeCommands decodes a bootcmd or runcmd list. Each entry is either a
// string for the shell or a list of argv words, as in cloud-init.
func decodeCommands(key string, raw json.RawMessage) ([]command, error) {
	var entries []any
	if err := decodeJSON(raw, &entries); err != nil {
		return nil, fmt.Errorf("decoding %s: must be a list: %w", key, err)
	}
	commands := make([]command, 0, len(entries))
	for i, entry := range entries {
		cmd, err := decodeCommand(entry)
		if err != nil {
			return nil, fmt.Errorf("decoding %s[%d]: %w", key, i, err)
		}
		commands = append(commands, cmd)
	}
	return commands, nil
}

func decodeCommand(entry any) (command, error) {
	switch v := entry.(type) {
	case string:
		if strings.ContainsRune(v, 0) {
			return command{}, errors.New("command contains a NUL byte")
		}
		return command{shell: v}, nil
	case []any:
		argv, err := decodeArgv(v)
		return command{argv: argv}, err
	default:
		return command{}, fmt.Errorf("must be a string or a list of strings, got %s", jsonType(entry))
	}
}

// decodeArgv accepts strings and numbers as words, because cloud-init turns
// every list item into a string before quoting it.
func decodeArgv(words []any) ([]string, error) {
	if len(words) == 0 {
		return nil, errors.New("command list is empty")
	}
	argv := make([]string, 0, len(words))
	for i, word := range words {
		var s string
		switch w := word.(type) {
		case string:
			s = w
		case json.Number:
			s = w.String()
		default:
			return nil, fmt.Errorf("word %d must be a string, got %s", i, jsonType(word))
		}
		if strings.ContainsRune(s, 0) {
			return nil, fmt.Errorf("word %d contains a NUL byte", i)
		}
		argv = append(argv, s)
	}
	return argv, nil
}

// decodeJSON decodes one value converted from YAML. Missing and null values
// leave v untouched; numbers stay json.Number so that they keep their text.
func decodeJSON(raw json.RawMessage, v any) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	return dec.Decode(v)
}

// jsonType names the YAML type of a decoded value for error messages.
func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "a list"
	case map[string]any:
		return "a mapping"
	default:
		return fmt.Sprintf("%T", v)
	}
}
