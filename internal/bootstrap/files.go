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
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"
)

const (
	defaultOwner = "root:root"
	defaultMode  = 0o644
	maxMode      = 0o7777
)

// file is one write_files entry, decoded and validated.
type file struct {
	// path is absolute and clean.
	path string
	// data is what the script writes: the file content, or for gzip
	// encodings the still-compressed bytes that the node gunzips.
	data    []byte
	gzipped bool
	owner   string
	mode    uint32
	append  bool
}

// writeFileEntry mirrors the cloud-init write_files schema. Unknown fields
// (for example source) are rejected rather than ignored, because skipping
// them would silently leave a file missing or wrong on the node.
type writeFileEntry struct {
	Path        string          `json:"path"`
	Content     string          `json:"content"`
	Encoding    string          `json:"encoding"`
	Owner       string          `json:"owner"`
	Permissions json.RawMessage `json:"permissions"`
	Append      bool            `json:"append"`
	Defer       bool            `json:"defer"`
}

// decodeWriteFiles decodes write_files. Entries marked defer: true come last
// because cloud-init writes them in a later stage, still before runcmd runs.
func decodeWriteFiles(raw json.RawMessage) ([]file, error) {
	var entries []json.RawMessage
	if err := decodeJSON(raw, &entries); err != nil {
		return nil, fmt.Errorf("decoding %s: must be a list: %w", keyWriteFiles, err)
	}
	var now, deferred []file
	for i, rawEntry := range entries {
		var entry writeFileEntry
		err := decodeStrict(rawEntry, &entry)
		var f file
		if err == nil {
			f, err = decodeFile(entry)
		}
		if err != nil && entry.Path == "" {
			return nil, fmt.Errorf("decoding %s[%d]: %w", keyWriteFiles, i, err)
		}
		if err != nil {
			return nil, fmt.Errorf("decoding %s[%d] %s: %w", keyWriteFiles, i, entry.Path, err)
		}
		if entry.Defer {
			deferred = append(deferred, f)
		} else {
			now = append(now, f)
		}
	}
	return append(now, deferred...), nil
}

// decodeFile validates one entry and applies cloud-init's defaults.
func decodeFile(entry writeFileEntry) (file, error) {
	p, err := cleanFilePath(entry.Path)
	if err != nil {
		return file{}, err
	}
	data, gzipped, err := decodeContent(entry.Content, entry.Encoding)
	if err != nil {
		return file{}, err
	}
	mode, err := parsePermissions(entry.Permissions)
	if err != nil {
		return file{}, err
	}
	owner := strings.TrimSpace(entry.Owner)
	if owner == "" {
		owner = defaultOwner
	}
	if strings.ContainsRune(owner, 0) {
		return file{}, errors.New("owner contains a NUL byte")
	}
	return file{path: p, data: data, gzipped: gzipped, owner: owner, mode: mode, append: entry.Append}, nil
}

// cleanFilePath makes the path absolute the way cloud-init does (relative to
// "/", its working directory) and rejects paths that cannot name a file.
func cleanFilePath(p string) (string, error) {
	if p == "" {
		return "", errors.New("path is required")
	}
	if strings.ContainsRune(p, 0) {
		return "", errors.New("path contains a NUL byte")
	}
	cleaned := path.Join("/", p)
	if cleaned == "/" {
		return "", errors.New("path must name a file")
	}
	return cleaned, nil
}

// decodeContent undoes the encoding. For gzip encodings the compressed bytes
// are kept (the node gunzips them) but are decompressed here once so that
// corrupt data fails at render time, not halfway through bootstrap.
func decodeContent(content, encoding string) ([]byte, bool, error) {
	switch strings.ToLower(strings.TrimSpace(encoding)) {
	case "", "text/plain":
		return []byte(content), false, nil
	case "b64", "base64":
		data, err := decodeBase64(content)
		return data, false, err
	case "gz", "gzip":
		data := []byte(content)
		return data, true, checkGzip(data)
	case "gz+b64", "gzip+base64", "gz+base64", "gzip+b64":
		data, err := decodeBase64(content)
		if err != nil {
			return nil, false, err
		}
		return data, true, checkGzip(data)
	default:
		return nil, false, fmt.Errorf("unsupported encoding %q", encoding)
	}
}

// decodeBase64 ignores whitespace, because YAML block scalars add a trailing
// newline and long values are often wrapped.
func decodeBase64(content string) ([]byte, error) {
	data, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(content), ""))
	if err != nil {
		return nil, fmt.Errorf("decoding base64 content: %w", err)
	}
	return data, nil
}

func checkGzip(data []byte) error {
	r, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("decompressing gzip content: %w", err)
	}
	if _, err := io.Copy(io.Discard, r); err != nil {
		return fmt.Errorf("decompressing gzip content: %w", err)
	}
	return nil
}

// parsePermissions follows cloud-init: a string is octal ("0640", "640" or
// "0o640"), while a YAML number is already the mode, which is what an
// unquoted 0640 becomes under YAML 1.1.
func parsePermissions(raw json.RawMessage) (uint32, error) {
	var v any
	if err := decodeJSON(raw, &v); err != nil {
		return 0, fmt.Errorf("decoding permissions: %w", err)
	}
	var mode uint64
	var err error
	switch p := v.(type) {
	case nil:
		return defaultMode, nil
	case string:
		s := strings.TrimPrefix(strings.TrimSpace(p), "0o")
		if s == "" {
			return defaultMode, nil
		}
		mode, err = strconv.ParseUint(s, 8, 32)
	case json.Number:
		mode, err = strconv.ParseUint(p.String(), 10, 32)
	default:
		return 0, fmt.Errorf("permissions must be an octal string, got %s", jsonType(v))
	}
	if err != nil || mode > maxMode {
		return 0, fmt.Errorf("invalid permissions %s: must be an octal mode up to 07777", raw)
	}
	return uint32(mode), nil
}

// decodeStrict decodes a mapping, rejecting unknown fields.
func decodeStrict(raw json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}
