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
	"errors"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
)

func gzipBytes(t *testing.T, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	_, err := w.Write([]byte(s))
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	NewWithT(t).Expect(w.Close()).To(Succeed())
	return b.Bytes()
}

func gzipBase64(t *testing.T, s string) string {
	return base64.StdEncoding.EncodeToString(gzipBytes(t, s))
}

func TestRenderRejectsFormatsOtherThanCloudConfig(t *testing.T) {
	for _, format := range []string{"ignition", "Cloud-Config", "text/x-shellscript", " cloud-config"} {
		t.Run(format, func(t *testing.T) {
			g := NewWithT(t)
			_, err := Render([]byte("#cloud-config\n"), format, Node{})
			g.Expect(err).To(MatchError(ErrUnsupportedFormat))
			g.Expect(err.Error()).To(ContainSubstring(`"` + format + `"`))
			g.Expect(err.Error()).To(ContainSubstring("only cloud-config is supported"))
		})
	}
}

func TestRenderAcceptsEmptyAndCloudConfigFormats(t *testing.T) {
	for _, format := range []string{"", "cloud-config"} {
		t.Run("format "+format, func(t *testing.T) {
			g := NewWithT(t)
			script, err := Render([]byte("#cloud-config\nruncmd: ['true']\n"), format, Node{})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(string(script.Content)).To(ContainSubstring("running runcmd 1/1"))
		})
	}
}

func TestRenderRejectsInvalidCloudConfig(t *testing.T) {
	tests := []struct {
		name    string
		data    string
		message string
	}{
		{name: "empty data", data: "", message: "bootstrap data is empty"},
		{name: "only whitespace", data: " \n\t\n", message: "bootstrap data is empty"},
		{name: "YAML without header", data: "runcmd: ['true']\n", message: `must start with a "#cloud-config" line`},
		{name: "shell script", data: "#!/bin/bash\necho hi\n", message: `must start with a "#cloud-config" line`},
		{name: "ignition JSON", data: `{"ignition":{"version":"3.4.0"}}`, message: `must start with a "#cloud-config" line`},
		{name: "cloud-config archive", data: "#cloud-config-archive\n- type: text/cloud-config\n", message: `must start with a "#cloud-config" line`},
		{name: "jinja header alone", data: "## template: jinja\n", message: `must start with a "#cloud-config" line`},
		{name: "malformed YAML", data: "#cloud-config\nruncmd: [\n", message: "parsing YAML"},
		{name: "top level list", data: "#cloud-config\n- runcmd\n", message: "parsing YAML"},
		{name: "runcmd is a mapping", data: "#cloud-config\nruncmd: {a: b}\n", message: "decoding runcmd: must be a list"},
		{name: "runcmd entry is a number", data: "#cloud-config\nruncmd: [42]\n", message: "decoding runcmd[0]: must be a string or a list of strings, got a number"},
		{name: "runcmd entry is a mapping", data: "#cloud-config\nruncmd:\n- {a: b}\n", message: "decoding runcmd[0]: must be a string or a list of strings, got a mapping"},
		{name: "runcmd entry is null", data: "#cloud-config\nruncmd:\n- 'true'\n-\n", message: "decoding runcmd[1]: must be a string or a list of strings, got null"},
		{name: "runcmd argv is empty", data: "#cloud-config\nruncmd:\n- []\n", message: "decoding runcmd[0]: command list is empty"},
		{name: "runcmd argv word is a list", data: "#cloud-config\nruncmd:\n- [echo, [a]]\n", message: "decoding runcmd[0]: word 1 must be a string, got a list"},
		{name: "runcmd has a NUL byte", data: "#cloud-config\nruncmd:\n- \"echo \\0\"\n", message: "decoding runcmd[0]: command contains a NUL byte"},
		{name: "bootcmd is a string", data: "#cloud-config\nbootcmd: echo hi\n", message: "decoding bootcmd: must be a list"},
		{name: "bootcmd argv word is a boolean", data: "#cloud-config\nbootcmd:\n- [echo, true]\n", message: "decoding bootcmd[0]: word 1 must be a string, got a boolean"},
		{name: "write_files is a mapping", data: "#cloud-config\nwrite_files: {path: /a}\n", message: "decoding write_files: must be a list"},
		{name: "write_files entry is a string", data: "#cloud-config\nwrite_files: [/etc/a]\n", message: "decoding write_files[0]: json: cannot unmarshal string"},
		{name: "file without path", data: "#cloud-config\nwrite_files:\n- content: hi\n", message: "decoding write_files[0]: path is required"},
		{name: "file path is the root", data: "#cloud-config\nwrite_files:\n- path: /\n", message: "decoding write_files[0] /: path must name a file"},
		{name: "file has an unknown field", data: "#cloud-config\nwrite_files:\n- path: /a\n  source: {uri: 'http://x'}\n", message: `decoding write_files[0] /a: json: unknown field "source"`},
		{name: "file content is a number", data: "#cloud-config\nwrite_files:\n- path: /a\n  content: 8080\n", message: "decoding write_files[0] /a"},
		{name: "file append is a string", data: "#cloud-config\nwrite_files:\n- path: /a\n  append: 'sometimes'\n", message: "decoding write_files[0] /a"},
		{name: "unknown encoding", data: "#cloud-config\nwrite_files:\n- path: /a\n  encoding: rot13\n", message: `decoding write_files[0] /a: unsupported encoding "rot13"`},
		{name: "invalid base64", data: "#cloud-config\nwrite_files:\n- path: /a\n  encoding: b64\n  content: 'not base64!'\n", message: "decoding write_files[0] /a: decoding base64 content"},
		{name: "gzip+base64 of plain text", data: "#cloud-config\nwrite_files:\n- path: /a\n  encoding: gzip+base64\n  content: aGk=\n", message: "decoding write_files[0] /a: decompressing gzip content"},
		{name: "gzip of plain text", data: "#cloud-config\nwrite_files:\n- path: /a\n  encoding: gz\n  content: hi\n", message: "decoding write_files[0] /a: decompressing gzip content"},
		{name: "permissions not octal", data: "#cloud-config\nwrite_files:\n- path: /a\n  permissions: 'rw-r--r--'\n", message: `decoding write_files[0] /a: invalid permissions "rw-r--r--"`},
		{name: "permissions with digit 8", data: "#cloud-config\nwrite_files:\n- path: /a\n  permissions: '0680'\n", message: "invalid permissions"},
		{name: "permissions too large", data: "#cloud-config\nwrite_files:\n- path: /a\n  permissions: '17777'\n", message: "must be an octal mode up to 07777"},
		{name: "permissions negative", data: "#cloud-config\nwrite_files:\n- path: /a\n  permissions: -1\n", message: "invalid permissions -1"},
		{name: "permissions boolean", data: "#cloud-config\nwrite_files:\n- path: /a\n  permissions: true\n", message: "permissions must be an octal string, got a boolean"},
		{name: "second file is invalid", data: "#cloud-config\nwrite_files:\n- path: /a\n- path: /etc/b\n  encoding: base64\n  content: '@@'\n", message: "decoding write_files[1] /etc/b: decoding base64 content"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			script, err := Render([]byte(tt.data), "", Node{})
			g.Expect(script).To(BeNil())
			g.Expect(err).To(MatchError(ErrInvalidCloudConfig))
			g.Expect(errors.Is(err, ErrUnsupportedFormat)).To(BeFalse())
			g.Expect(err.Error()).To(ContainSubstring(tt.message))
		})
	}
}

// Errors end up in conditions and events, which are not secret.
func TestRenderErrorsDoNotQuoteBootstrapData(t *testing.T) {
	const secret = "c2VjcmV0LXRva2VuLWRvLW5vdC1sZWFr" // base64 of a fake token
	for _, data := range []string{
		secret + "\n#cloud-config\n",
		"#cloud-config\nwrite_files:\n- path: /a\n  encoding: gzip+base64\n  content: " + secret + "\n",
		"#cloud-config\nwrite_files:\n- path: /a\n  encoding: base64\n  content: '" + secret + "!'\n",
		"#cloud-config\nruncmd:\n- [" + secret + ", {a: b}]\n",
	} {
		_, err := Render([]byte(data), "", Node{})
		NewWithT(t).Expect(err).To(HaveOccurred())
		NewWithT(t).Expect(err.Error()).NotTo(ContainSubstring(secret))
	}
}

func TestRenderAcceptsCloudConfigHeaders(t *testing.T) {
	tests := []struct {
		name string
		data string
	}{
		{name: "bare header", data: "#cloud-config\nruncmd: ['true']\n"},
		{name: "leading whitespace", data: "\n\n  \t#cloud-config\nruncmd: ['true']\n"},
		{name: "CABPK jinja header", data: "## template: jinja\n#cloud-config\n\nruncmd: ['true']\n"},
		{name: "jinja header in other case and spacing", data: "##Template:  JINJA \n\n#cloud-config\nruncmd: ['true']\n"},
		{name: "CRLF line endings", data: "## template: jinja\r\n#cloud-config\r\nruncmd: ['true']\r\n"},
		{name: "header with trailing spaces", data: "#cloud-config  \nruncmd: ['true']\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			script, err := Render([]byte(tt.data), "", Node{})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(string(script.Content)).To(ContainSubstring("\n/bin/sh -c 'true'\n"))
		})
	}
}

func TestRenderAcceptsAnEmptyCloudConfig(t *testing.T) {
	for _, data := range []string{"#cloud-config\n", "#cloud-config", "#cloud-config\n{}\n", "#cloud-config\nruncmd:\nwrite_files:\n"} {
		g := NewWithT(t)
		script, err := Render([]byte(data), "", Node{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(script.IgnoredKeys).To(BeEmpty())
		g.Expect(string(script.Content)).To(Equal(scriptPreamble + "\nbootstrap_begin 'finished'\n"))
	}
}

func TestRenderListsIgnoredKeysSorted(t *testing.T) {
	tests := []struct {
		name string
		data string
		want []string
	}{
		{name: "only supported keys", data: "#cloud-config\nbootcmd: []\nwrite_files: []\nruncmd: []\n", want: nil},
		{
			name: "CABPK keys the node does not need",
			data: "#cloud-config\nusers: []\nntp: {enabled: true}\ndisk_setup: {}\nfs_setup: []\nmounts: []\nruncmd: []\n",
			want: []string{"disk_setup", "fs_setup", "mounts", "ntp", "users"},
		},
		{
			name: "unknown keys",
			data: "#cloud-config\nzz_custom: 1\npackages: [vim]\nfinal_message: done\n",
			want: []string{"final_message", "packages", "zz_custom"},
		},
		{name: "null value", data: "#cloud-config\nmounts:\n", want: []string{"mounts"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			script, err := Render([]byte(tt.data), "", Node{})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(script.IgnoredKeys).To(Equal(tt.want))
		})
	}
}

func TestRenderIsDeterministic(t *testing.T) {
	inputs := map[string][]byte{
		"many ignored keys": []byte("#cloud-config\nk: 1\nj: 1\ni: 1\nh: 1\ng: 1\nf: 1\ne: 1\nd: 1\nc: 1\nb: 1\na: 1\nruncmd: ['true']\n"),
	}
	for _, fx := range fixtures {
		inputs[fx.file] = readFixture(t, fx.file)
	}
	for name, data := range inputs {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			first, err := Render(data, "", Node{})
			g.Expect(err).NotTo(HaveOccurred())
			for range 20 {
				again, err := Render(data, "", Node{})
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(again.Content).To(Equal(first.Content))
				g.Expect(again.IgnoredKeys).To(Equal(first.IgnoredKeys))
			}
		})
	}
}

func TestRenderedScriptIsStrictBashWithoutTracing(t *testing.T) {
	for _, fx := range fixtures {
		t.Run(fx.name, func(t *testing.T) {
			g := NewWithT(t)
			script, err := Render(readFixture(t, fx.file), "", Node{})
			g.Expect(err).NotTo(HaveOccurred())
			content := string(script.Content)
			g.Expect(content).To(HavePrefix("#!/bin/bash\n"))
			g.Expect(content).To(ContainSubstring("\nset -euo pipefail\n"))
			g.Expect(content).NotTo(MatchRegexp(`(?m)^\s*set\s+(-[a-z]*x|-o\s+xtrace)|BASH_XTRACEFD`))
		})
	}
}

// CABPK's runcmd writes the sentinel only after kubeadm succeeded; a second
// write by the script would claim success even when kubeadm was skipped.
func TestRenderDoesNotAddItsOwnSentinel(t *testing.T) {
	g := NewWithT(t)
	for _, fx := range fixtures {
		script, err := Render(readFixture(t, fx.file), "", Node{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(strings.Count(string(script.Content), SentinelPath)).To(Equal(1), fx.name)
	}
	script, err := Render([]byte("#cloud-config\nruncmd: ['true']\n"), "", Node{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(script.Content)).NotTo(ContainSubstring(SentinelPath))
}

func TestRenderWritesFilesAtTheirPathsInProduction(t *testing.T) {
	g := NewWithT(t)
	script, err := Render([]byte("#cloud-config\nwrite_files:\n- path: etc/relative/../x.conf\n  content: x\n"), "", Node{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(script.Content)).To(ContainSubstring("mkdir -p -- '/etc'\n"))
	g.Expect(string(script.Content)).To(ContainSubstring("> '/etc/x.conf') <<'"))
	g.Expect(string(script.Content)).To(ContainSubstring("chmod -- 0644 '/etc/x.conf'\n"))
}

func TestDecodeContentHandlesEveryEncoding(t *testing.T) {
	const text = "line one\nline two\n"
	b64 := base64.StdEncoding.EncodeToString([]byte(text))
	gz := gzipBytes(t, text)
	tests := []struct {
		encoding    string
		content     string
		wantData    []byte
		wantGzipped bool
	}{
		{encoding: "", content: text, wantData: []byte(text)},
		{encoding: "text/plain", content: text, wantData: []byte(text)},
		{encoding: "b64", content: b64, wantData: []byte(text)},
		{encoding: "base64", content: b64 + "\n", wantData: []byte(text)},
		{encoding: " BASE64 ", content: b64[:8] + "\n  " + b64[8:], wantData: []byte(text)},
		{encoding: "gz", content: string(gz), wantData: gz, wantGzipped: true},
		{encoding: "gzip", content: string(gz), wantData: gz, wantGzipped: true},
		{encoding: "gz+b64", content: gzipBase64(t, text), wantData: gz, wantGzipped: true},
		{encoding: "gzip+base64", content: gzipBase64(t, text), wantData: gz, wantGzipped: true},
		{encoding: "gz+base64", content: gzipBase64(t, text), wantData: gz, wantGzipped: true},
		{encoding: "gzip+b64", content: gzipBase64(t, text), wantData: gz, wantGzipped: true},
	}
	for _, tt := range tests {
		t.Run("encoding "+tt.encoding, func(t *testing.T) {
			g := NewWithT(t)
			data, gzipped, err := decodeContent(tt.content, tt.encoding)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(data).To(Equal(tt.wantData))
			g.Expect(gzipped).To(Equal(tt.wantGzipped))
		})
	}
}

func TestParsePermissionsFollowsCloudInit(t *testing.T) {
	tests := []struct {
		raw  string
		want uint32
	}{
		{raw: ``, want: 0o644},
		{raw: `null`, want: 0o644},
		{raw: `""`, want: 0o644},
		{raw: `"0640"`, want: 0o640},
		{raw: `"640"`, want: 0o640},
		{raw: `"0o600"`, want: 0o600},
		{raw: `" 0755 "`, want: 0o755},
		{raw: `"4755"`, want: 0o4755},
		{raw: `"0"`, want: 0},
		{raw: `416`, want: 0o640}, // what YAML 1.1 makes of an unquoted 0640
		{raw: `4095`, want: 0o7777},
	}
	for _, tt := range tests {
		t.Run("permissions "+tt.raw, func(t *testing.T) {
			g := NewWithT(t)
			mode, err := parsePermissions([]byte(tt.raw))
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(mode).To(Equal(tt.want))
		})
	}
}

func TestHeredocDelimiterAvoidsLinesOfTheContent(t *testing.T) {
	tests := []struct {
		body string
		want string
	}{
		{body: "plain\n", want: "CAPK_BOOTSTRAP_EOF"},
		{body: "a\nCAPK_BOOTSTRAP_EOF\n", want: "CAPK_BOOTSTRAP_EOF_1"},
		{body: "CAPK_BOOTSTRAP_EOF\nCAPK_BOOTSTRAP_EOF_1\n", want: "CAPK_BOOTSTRAP_EOF_2"},
		{body: " CAPK_BOOTSTRAP_EOF\nCAPK_BOOTSTRAP_EOF \n", want: "CAPK_BOOTSTRAP_EOF"},
	}
	for _, tt := range tests {
		NewWithT(t).Expect(heredocDelimiter([]byte(tt.body))).To(Equal(tt.want), tt.body)
	}
}

func TestShellQuoteKeepsEveryCharacterLiteral(t *testing.T) {
	tests := map[string]string{
		"":               "''",
		"plain":          "'plain'",
		"it's":           `'it'\''s'`,
		`$(rm -rf /) $X`: `'$(rm -rf /) $X'`,
	}
	for in, want := range tests {
		NewWithT(t).Expect(shellQuote(in)).To(Equal(want))
	}
}
