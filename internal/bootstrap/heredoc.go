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
	"encoding/base64"
	"strconv"
	"unicode/utf8"
)

const (
	heredocBaseDelimiter = "CAPK_BOOTSTRAP_EOF"
	base64LineLength     = 76
)

// heredocSafe reports whether a quoted heredoc reproduces data byte for byte:
// a heredoc always ends in a newline and bash drops NUL bytes. Invalid UTF-8
// would survive, but goes as base64 to keep the script readable text.
func heredocSafe(data []byte) bool {
	if len(data) == 0 {
		return true
	}
	return data[len(data)-1] == '\n' && bytes.IndexByte(data, 0) < 0 && utf8.Valid(data)
}

// heredocDelimiter picks a delimiter that is not a line of body, so content
// cannot end the heredoc early. The choice depends only on body, which keeps
// the output deterministic.
func heredocDelimiter(body []byte) string {
	lines := map[string]bool{}
	for _, line := range bytes.Split(body, []byte("\n")) {
		lines[string(line)] = true
	}
	delimiter := heredocBaseDelimiter
	for n := 1; lines[delimiter]; n++ {
		delimiter = heredocBaseDelimiter + "_" + strconv.Itoa(n)
	}
	return delimiter
}

// wrapBase64 encodes data as base64 in lines of 76 characters, each ending in
// a newline, which base64 -d accepts.
func wrapBase64(data []byte) []byte {
	encoded := base64.StdEncoding.EncodeToString(data)
	var b bytes.Buffer
	for len(encoded) > base64LineLength {
		b.WriteString(encoded[:base64LineLength] + "\n")
		encoded = encoded[base64LineLength:]
	}
	if encoded != "" {
		b.WriteString(encoded + "\n")
	}
	return b.Bytes()
}
