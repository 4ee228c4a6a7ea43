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
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	. "github.com/onsi/gomega"
)

// These tests render small cloud-configs and run the scripts with bash in a
// temporary root (see run_helpers_test.go). Commands refer to $ROOT, which
// the script's child shells expand to that root.

func lines(s string) []string {
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

func TestRenderedScriptWritesEveryEncodingExactly(t *testing.T) {
	const text = "-----BEGIN FAKE KEY-----\nZmFrZSBrZXkgZm9yIHRlc3Rz\n-----END FAKE KEY-----\n"
	b64 := base64.StdEncoding.EncodeToString([]byte(text))
	gzb64 := gzipBase64(t, text)
	binary := make([]byte, 256)
	for i := range binary {
		binary[i] = byte(i)
	}
	tests := []struct {
		name  string
		entry string
		want  string
	}{
		{name: "plain literal block", entry: "content: |\n    " + strings.ReplaceAll(strings.TrimSuffix(text, "\n"), "\n", "\n    ") + "\n", want: text},
		{name: "plain without final newline", entry: "content: 'no newline'\n", want: "no newline"},
		{name: "plain empty content", entry: "content: ''\n", want: ""},
		{name: "plain absent content", entry: "owner: root:root\n", want: ""},
		{name: "plain shell syntax stays literal", entry: "content: |\n    $(touch $ROOT/pwned) `touch $ROOT/pwned` ${HOME} \\\n    'quoted' \"double\" \\n\n", want: "$(touch $ROOT/pwned) `touch $ROOT/pwned` ${HOME} \\\n'quoted' \"double\" \\n\n"},
		{name: "plain with the heredoc delimiter as a line", entry: "content: |\n    before\n    CAPK_BOOTSTRAP_EOF\n    after\n", want: "before\nCAPK_BOOTSTRAP_EOF\nafter\n"},
		{name: "plain with a NUL byte", entry: "content: \"a\\0b\\n\"\n", want: "a\x00b\n"},
		{name: "text/plain", entry: "encoding: text/plain\ncontent: hi\n", want: "hi"},
		{name: "b64", entry: "encoding: b64\ncontent: " + b64 + "\n", want: text},
		{name: "base64 literal block", entry: "encoding: base64\ncontent: |\n    " + b64 + "\n", want: text},
		{name: "base64 of binary data", entry: "encoding: base64\ncontent: " + base64.StdEncoding.EncodeToString(binary) + "\n", want: string(binary)},
		{name: "gz+b64", entry: "encoding: gz+b64\ncontent: " + gzb64 + "\n", want: text},
		{name: "gzip+base64", entry: "encoding: \"gzip+base64\"\ncontent: |\n    " + gzb64 + "\n", want: text},
		{name: "gz+base64", entry: "encoding: gz+base64\ncontent: " + gzb64 + "\n", want: text},
		{name: "gzip+b64", entry: "encoding: gzip+b64\ncontent: " + gzb64 + "\n", want: text},
		{name: "gzip+base64 of empty content", entry: "encoding: gzip+base64\ncontent: " + gzipBase64(t, "") + "\n", want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			entry := "  " + strings.ReplaceAll(strings.TrimSuffix(tt.entry, "\n"), "\n", "\n  ")
			run := renderAndRun(t, "#cloud-config\nwrite_files:\n- path: /etc/capk/file\n"+entry+"\n")
			g.Expect(run.exitCode).To(Equal(0), run.output)
			g.Expect(run.read("/etc/capk/file")).To(Equal(tt.want))
			g.Expect(run.read("pwned")).To(Equal("<missing>"))
			g.Expect(fileMode(t, run.root, "/etc/capk")).To(Equal(os.FileMode(0o755)))
		})
	}
}

func TestRenderedScriptAppliesPermissions(t *testing.T) {
	tests := []struct {
		name        string
		permissions string
		want        os.FileMode
	}{
		{name: "default", permissions: "", want: 0o644},
		{name: "quoted with leading zero", permissions: "permissions: '0640'", want: 0o640},
		{name: "quoted without leading zero", permissions: "permissions: '600'", want: 0o600},
		{name: "0o prefix", permissions: "permissions: '0o755'", want: 0o755},
		{name: "unquoted YAML 1.1 octal", permissions: "permissions: 0640", want: 0o640},
		{name: "read only", permissions: "permissions: '0400'", want: 0o400},
		{name: "setuid", permissions: "permissions: '4755'", want: 0o4755},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			run := renderAndRun(t, "#cloud-config\nwrite_files:\n- path: /etc/capk/file\n  content: x\n  "+tt.permissions+"\n")
			g.Expect(run.exitCode).To(Equal(0), run.output)
			g.Expect(fileMode(t, run.root, "/etc/capk/file")).To(Equal(tt.want))
		})
	}
}

func TestRenderedScriptAppliesOwners(t *testing.T) {
	tests := []struct {
		name  string
		owner string
		want  string
	}{
		{name: "default", owner: "", want: "root:root"},
		{name: "root", owner: "owner: root:root", want: "root:root"},
		{name: "named user and group", owner: "owner: nobody:nogroup", want: "nobody:nogroup"},
		{name: "numeric ids", owner: "owner: '1000:1000'", want: "1000:1000"},
		{name: "user only", owner: "owner: kube", want: "kube"},
		{name: "surrounding spaces", owner: "owner: ' etcd:etcd '", want: "etcd:etcd"},
		{name: "leading dash is not an option", owner: "owner: '-R'", want: "-R"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			run := renderAndRun(t, "#cloud-config\nwrite_files:\n- path: /etc/capk/file\n  content: x\n  "+tt.owner+"\n")
			g.Expect(run.exitCode).To(Equal(0), run.output)
			g.Expect(run.read("chown.log")).To(Equal("-- " + tt.want + " " + filepath.Join(run.root, "/etc/capk/file") + "\n"))
		})
	}
}

// TestRenderedScriptChownsBeforeChmodAsRoot uses the real chown, which
// clears setuid bits, so it needs root.
func TestRenderedScriptChownsBeforeChmodAsRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to chown to another user")
	}
	g := NewWithT(t)
	script, root := renderForTest(t, "#cloud-config\nwrite_files:\n- path: /usr/local/bin/tool\n  owner: '1234:5678'\n  permissions: '4755'\n  content: x\n", Node{})
	run := runScript(t, root, script.Content, useRealChown)
	g.Expect(run.exitCode).To(Equal(0), run.output)
	info, err := os.Stat(filepath.Join(root, "/usr/local/bin/tool"))
	g.Expect(err).NotTo(HaveOccurred())
	stat := info.Sys().(*syscall.Stat_t)
	g.Expect([]uint32{stat.Uid, stat.Gid}).To(Equal([]uint32{1234, 5678}))
	g.Expect(fileMode(t, root, "/usr/local/bin/tool")).To(Equal(os.FileMode(0o4755)))
}

func TestRenderedScriptAppendsToFiles(t *testing.T) {
	tests := []struct {
		name string
		data string
		want string
		mode os.FileMode
	}{
		{
			name: "to a file written earlier in write_files",
			data: "write_files:\n- path: /etc/capk/file\n  content: \"one\\n\"\n- path: /etc/capk/file\n  append: true\n  permissions: '0600'\n  content: \"two\\n\"\n",
			want: "one\ntwo\n", mode: 0o600,
		},
		{
			name: "to a file created by bootcmd",
			data: "bootcmd:\n- mkdir -p $ROOT/etc/capk && echo boot > $ROOT/etc/capk/file\nwrite_files:\n- path: /etc/capk/file\n  append: true\n  encoding: base64\n  content: " + base64.StdEncoding.EncodeToString([]byte("appended\n")) + "\n",
			want: "boot\nappended\n", mode: 0o644,
		},
		{
			name: "to a missing file",
			data: "write_files:\n- path: /etc/capk/file\n  append: true\n  content: new\n",
			want: "new", mode: 0o644,
		},
		{
			name: "not at all: an existing file is replaced",
			data: "bootcmd:\n- mkdir -p $ROOT/etc/capk && echo old > $ROOT/etc/capk/file\nwrite_files:\n- path: /etc/capk/file\n  append: false\n  content: new\n",
			want: "new", mode: 0o644,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			run := renderAndRun(t, "#cloud-config\n"+tt.data)
			g.Expect(run.exitCode).To(Equal(0), run.output)
			g.Expect(run.read("/etc/capk/file")).To(Equal(tt.want))
			g.Expect(fileMode(t, run.root, "/etc/capk/file")).To(Equal(tt.mode))
		})
	}
}

// The keys are deliberately out of order in the document: cloud-init's module
// order, not the document's, decides what runs first.
func TestRenderedScriptRunsBootcmdThenWriteFilesThenRuncmd(t *testing.T) {
	g := NewWithT(t)
	const record = `if [ -e $ROOT/etc/capk/file ]; then echo "%s saw file" >> $ROOT/order; else echo "%s saw none" >> $ROOT/order; fi`
	run := renderAndRun(t, "#cloud-config\n"+
		"runcmd:\n- '"+strings.ReplaceAll(record, "%s", "runcmd 1")+"'\n- echo runcmd 2 >> $ROOT/order\n"+
		"write_files:\n- path: /etc/capk/deferred\n  defer: true\n  content: d\n- path: /etc/capk/file\n  content: f\n"+
		"bootcmd:\n- '"+strings.ReplaceAll(record, "%s", "bootcmd 1")+"'\n- [sh, -c, 'echo bootcmd 2 >> $ROOT/order']\n")
	g.Expect(run.exitCode).To(Equal(0), run.output)
	g.Expect(lines(run.read("order"))).To(Equal([]string{"bootcmd 1 saw none", "bootcmd 2", "runcmd 1 saw file", "runcmd 2"}))
	g.Expect(lines(run.output)).To(Equal([]string{
		"bootstrap: running bootcmd 1/2",
		"bootstrap: running bootcmd 2/2",
		"bootstrap: writing /etc/capk/file",
		"bootstrap: writing /etc/capk/deferred",
		"bootstrap: running runcmd 1/2",
		"bootstrap: running runcmd 2/2",
		"bootstrap: finished",
	}))
}

func TestRenderedScriptRunsStringCommandsWithTheShell(t *testing.T) {
	g := NewWithT(t)
	run := renderAndRun(t, `#cloud-config
runcmd:
- echo one | tr a-z A-Z >> $ROOT/out
- X=two && echo "$X" >> $ROOT/out
- exit 0
- |
  echo three >> $ROOT/out
  echo four >> $ROOT/out
- "echo 'five' \"six\" >> $ROOT/out"
`)
	g.Expect(run.exitCode).To(Equal(0), run.output)
	// "exit 0" ends only its own shell, not the script.
	g.Expect(lines(run.read("out"))).To(Equal([]string{"ONE", "two", "three", "four", "five six"}))
}

func TestRenderedScriptPassesListCommandWordsVerbatim(t *testing.T) {
	g := NewWithT(t)
	run := renderAndRun(t, `#cloud-config
runcmd:
- [argv, "it's", "$HOME", "a  b", ";", "*", "$(touch $ROOT/pwned)", "", 42, "--flag=x y", "back\\slash"]
- [argv, "second"]
`)
	g.Expect(run.exitCode).To(Equal(0), run.output)
	g.Expect(lines(run.read("argv.log"))).To(Equal([]string{
		"[it's]", "[$HOME]", "[a  b]", "[;]", "[*]", "[$(touch $ROOT/pwned)]", "[]", "[42]", "[--flag=x y]", `[back\slash]`,
		"[second]",
	}))
	g.Expect(run.read("pwned")).To(Equal("<missing>"))
}

// failureCases each fail at one step; later steps must not run.
var failureCases = []struct {
	name      string
	data      string
	exitCode  int
	failedAt  string
	wantOrder []string
	wantFile  bool
}{
	{
		name:      "failing runcmd string",
		data:      "runcmd:\n- echo 1 >> $ROOT/order\n- exit 3\n- echo 3 >> $ROOT/order\n",
		exitCode:  3,
		failedAt:  "running runcmd 2/3",
		wantOrder: []string{"1"},
		wantFile:  true,
	},
	{
		name:      "failing left side of && as in CABPK's kubeadm command",
		data:      "runcmd:\n- false && echo success > $ROOT/sentinel\n- echo after >> $ROOT/order\n",
		exitCode:  1,
		failedAt:  "running runcmd 1/2",
		wantOrder: nil,
		wantFile:  true,
	},
	{
		name:      "failing runcmd list",
		data:      "runcmd:\n- [sh, -c, 'exit 4']\n- echo after >> $ROOT/order\n",
		exitCode:  4,
		failedAt:  "running runcmd 1/2",
		wantOrder: nil,
		wantFile:  true,
	},
	{
		name:      "missing program",
		data:      "runcmd:\n- [no-such-program-capk]\n- echo after >> $ROOT/order\n",
		exitCode:  127,
		failedAt:  "running runcmd 1/2",
		wantOrder: nil,
		wantFile:  true,
	},
	{
		name:      "failing bootcmd skips write_files and runcmd",
		data:      "bootcmd:\n- echo boot >> $ROOT/order\n- exit 5\nruncmd:\n- echo run >> $ROOT/order\n",
		exitCode:  5,
		failedAt:  "running bootcmd 2/2",
		wantOrder: []string{"boot"},
		wantFile:  false,
	},
	{
		name:      "file that cannot be written skips later files and runcmd",
		data:      "bootcmd:\n- mkdir -p $ROOT/etc && touch $ROOT/etc/blocker\nwrite_files:\n- path: /etc/blocker/file\n  content: x\n- path: /etc/capk/file\n  content: x\nruncmd:\n- echo run >> $ROOT/order\n",
		exitCode:  1,
		failedAt:  "writing /etc/blocker/file",
		wantOrder: nil,
		wantFile:  false,
	},
}

func TestRenderedScriptStopsAtTheFirstFailure(t *testing.T) {
	for _, tt := range failureCases {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			data := "#cloud-config\n" + tt.data
			if !strings.Contains(tt.data, "write_files") {
				data += "write_files:\n- path: /etc/capk/file\n  content: x\n"
			}
			run := renderAndRun(t, data)
			g.Expect(run.exitCode).To(Equal(tt.exitCode), run.output)
			g.Expect(run.output).To(HaveSuffix("bootstrap: failed while %s (exit code %d)\n", tt.failedAt, tt.exitCode))
			g.Expect(run.output).NotTo(ContainSubstring("bootstrap: finished"))
			if tt.wantOrder == nil {
				g.Expect(run.read("order")).To(Equal("<missing>"))
			} else {
				g.Expect(lines(run.read("order"))).To(Equal(tt.wantOrder))
			}
			g.Expect(run.read("sentinel")).To(Equal("<missing>"))
			g.Expect(run.read("/etc/capk/file") != "<missing>").To(Equal(tt.wantFile))
		})
	}
}

// TestRenderedScriptNeverPrintsFileContents writes secrets in every encoding
// and then fails, so that the error path is checked too.
func TestRenderedScriptNeverPrintsFileContents(t *testing.T) {
	const key = "-----BEGIN RSA PRIVATE KEY-----\nTUlJRXBBSUJBQUtDQVFFQXRlc3Rvbmx5ZmFrZWtleQ==\n-----END RSA PRIVATE KEY-----\n"
	const token = "abcdef.0123456789abcdef"
	for _, fail := range []bool{false, true} {
		t.Run(map[bool]string{false: "succeeding", true: "failing"}[fail], func(t *testing.T) {
			g := NewWithT(t)
			data := "#cloud-config\nwrite_files:\n" +
				"- path: /etc/kubernetes/pki/plain.key\n  permissions: '0600'\n  content: |\n    " + strings.ReplaceAll(strings.TrimSpace(key), "\n", "\n    ") + "\n" +
				"- path: /etc/kubernetes/pki/b64.key\n  encoding: base64\n  content: " + base64.StdEncoding.EncodeToString([]byte(key)) + "\n" +
				"- path: /etc/kubernetes/pki/gz.key\n  encoding: gzip+base64\n  content: " + gzipBase64(t, key) + "\n" +
				"- path: /run/kubeadm/join.yaml\n  content: 'token: " + token + "'\n" +
				"runcmd:\n- test -s $ROOT/etc/kubernetes/pki/gz.key\n"
			if fail {
				data += "- exit 9\n"
			}
			run := renderAndRun(t, data)
			g.Expect(run.exitCode != 0).To(Equal(fail), run.output)
			g.Expect(run.read("/etc/kubernetes/pki/gz.key")).To(Equal(key))
			for _, secret := range []string{"PRIVATE KEY", "TUlJRXBBSUJBQUtDQVFFQXRlc3Rvbmx5ZmFrZWtleQ", token} {
				g.Expect(run.output).NotTo(ContainSubstring(secret))
			}
		})
	}
}

// cloud-init would render jinja from instance data, which a node Pod does not
// have; the expression is written as is rather than guessed.
func TestRenderedScriptPassesJinjaExpressionsThroughLiterally(t *testing.T) {
	g := NewWithT(t)
	run := renderAndRun(t, "## template: jinja\n#cloud-config\nwrite_files:\n- path: /run/kubeadm/kubeadm-join-config.yaml\n  content: |\n    name: '{{ ds.meta_data.local_hostname }}'\n")
	g.Expect(run.exitCode).To(Equal(0), run.output)
	g.Expect(run.read("/run/kubeadm/kubeadm-join-config.yaml")).To(Equal("name: '{{ ds.meta_data.local_hostname }}'\n"))
}

func TestRenderedScriptForANodeSetsTheProviderIDFirstAndItsHostname(t *testing.T) {
	g := NewWithT(t)
	node := Node{Hostname: "node-a", ProviderID: "kubernetes://hosting/node-a"}
	script, root := renderForTest(t, "#cloud-config\nbootcmd: ['true']\nwrite_files:\n- path: /run/kubeadm/kubeadm-join-config.yaml\n  content: |\n    name: '{{ ds.meta_data.local_hostname }}'\n", node)
	run := runScript(t, root, script.Content)
	g.Expect(run.exitCode).To(Equal(0), run.output)
	g.Expect(run.read(kubeletDefaultsPath)).To(Equal("KUBELET_EXTRA_ARGS=\"--provider-id=kubernetes://hosting/node-a\"\n"))
	g.Expect(run.read("/run/kubeadm/kubeadm-join-config.yaml")).To(Equal("name: 'node-a'\n"))
	g.Expect(strings.Index(run.output, "bootstrap: setting the kubelet providerID")).To(BeNumerically("<", strings.Index(run.output, "bootstrap: running bootcmd")),
		"the kubelet's providerID is set before anything of the bootstrap data runs")
	g.Expect(strings.Count(string(script.Content), "#!/bin/bash")).To(Equal(1), "one script, one interpreter line")
}

// kind's image sets KUBELET_EXTRA_ARGS in a file without a trailing newline:
// the provider ID joins what the image sets rather than replacing it.
func TestRenderedScriptAddsTheProviderIDToTheImagesKubeletArgs(t *testing.T) {
	const id = "kubernetes://hosting/node-a"
	tests := []struct {
		name, before, want string
	}{
		{name: "kind's file", before: "KUBELET_EXTRA_ARGS=--runtime-cgroups=/system.slice/containerd.service",
			want: `KUBELET_EXTRA_ARGS="--runtime-cgroups=/system.slice/containerd.service --provider-id=` + id + "\"\n"},
		{name: "other lines and quoted values are kept, a provider ID set before is replaced",
			before: "# set by the image\nKUBELET_EXTRA_ARGS=\"--v=2 --provider-id=kubernetes://old/x --max-pods=20\"\nOTHER='a b'\n",
			want:   "# set by the image\nOTHER='a b'\nKUBELET_EXTRA_ARGS=\"--v=2 --max-pods=20 --provider-id=" + id + "\"\n"},
		{name: "single quotes", before: "KUBELET_EXTRA_ARGS='--v=4'\n", want: `KUBELET_EXTRA_ARGS="--v=4 --provider-id=` + id + "\"\n"},
		{name: "an empty file", before: "", want: `KUBELET_EXTRA_ARGS="--provider-id=` + id + "\"\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			script, root := renderForTest(t, "#cloud-config\nbootcmd: ['true']\n", Node{Hostname: "node-a", ProviderID: id})
			defaults := filepath.Join(root, kubeletDefaultsPath)
			g.Expect(os.MkdirAll(filepath.Dir(defaults), 0o755)).To(Succeed())
			g.Expect(os.WriteFile(defaults, []byte(tt.before), 0o644)).To(Succeed())

			run := runScript(t, root, script.Content)
			g.Expect(run.exitCode).To(Equal(0), run.output)
			g.Expect(run.read(kubeletDefaultsPath)).To(Equal(tt.want))
			g.Expect(fileMode(t, root, kubeletDefaultsPath)).To(Equal(os.FileMode(0o644)), "the file keeps its mode")
		})
	}
}
