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
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

// Stub commands put first on PATH. They append to logs under $ROOT instead of
// touching the host, and never print to stdout so that the script's own
// output can be checked for leaked content.
var stubs = map[string]string{
	// chown is stubbed so tests do not need root and can check the owner
	// argument; TestRenderedScriptChownsBeforeChmodAsRoot uses the real one.
	"chown": `printf '%s\n' "$*" >> "$ROOT/chown.log"`,
	// kubeadm fails unless its --config file was written, proving that
	// write_files ran before runcmd. KUBEADM_EXIT makes it fail on purpose.
	"kubeadm": `printf 'kubeadm %s\n' "$*" >> "$ROOT/calls.log"
for arg in "$@"; do
	case "$arg" in */kubeadm*.yaml) test -s "$arg" || exit 97 ;; esac
done
exit "${KUBEADM_EXIT:-0}"`,
	"sysctl":      `printf 'sysctl %s\n' "$*" >> "$ROOT/calls.log"`,
	"hostnamectl": `printf 'hostnamectl %s\n' "$*" >> "$ROOT/calls.log"`,
	// argv records each argument on its own line, bracketed, so tests can
	// check that list commands reach the program word for word.
	"argv": `printf '[%s]\n' "$@" >> "$ROOT/argv.log"`,
}

// scriptRun is the outcome of running a rendered script.
type scriptRun struct {
	root     string
	output   string
	exitCode int
}

// read returns a file under the run's root, or "<missing>".
func (r scriptRun) read(p string) string {
	data, err := os.ReadFile(filepath.Join(r.root, p))
	if err != nil {
		return "<missing>"
	}
	return string(data)
}

// renderForTest renders data for node with write_files paths under a new
// temporary root.
func renderForTest(t *testing.T, data string, node Node) (*Script, string) {
	t.Helper()
	root := t.TempDir()
	script, err := render([]byte(data), "", node, options{root: root})
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	return script, root
}

// renderAndRun renders a cloud-config under a temporary root and runs it.
func renderAndRun(t *testing.T, data string, env ...string) scriptRun {
	t.Helper()
	script, root := renderForTest(t, data, Node{})
	return runScript(t, root, script.Content, env...)
}

// runScript runs script with bash, with the stubs first on PATH, ROOT set to
// root, and real chown used only when useRealChown is passed in env.
func runScript(t *testing.T, root string, script []byte, env ...string) scriptRun {
	t.Helper()
	g := NewWithT(t)
	bin := t.TempDir()
	for name, body := range stubs {
		if name == "chown" && hasEnv(env, useRealChown) {
			continue
		}
		g.Expect(os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755)).To(Succeed())
	}
	scriptPath := filepath.Join(t.TempDir(), "bootstrap.sh")
	g.Expect(os.WriteFile(scriptPath, script, 0o700)).To(Succeed())

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// A fixed umask makes the modes of created directories predictable.
	cmd := exec.CommandContext(ctx, "bash", "-c", `umask 022 && exec bash "$0"`, scriptPath)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "ROOT="+root, "LC_ALL=C")
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	run := scriptRun{root: root, output: string(out)}
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		run.exitCode = exitErr.ExitCode()
	} else {
		g.Expect(err).NotTo(HaveOccurred(), "running bash: %s", out)
	}
	return run
}

const useRealChown = "BOOTSTRAP_TEST_REAL_CHOWN=1"

func hasEnv(env []string, want string) bool {
	for _, e := range env {
		if e == want {
			return true
		}
	}
	return false
}

// hostPathInCommand matches an absolute host path in a command line, as in
// "> /run/cluster-api/..." or "mkdir -p /var/lib/capk".
var hostPathInCommand = regexp.MustCompile(`(^|[\s>'"=])/(run|var|etc|tmp|opt|root|home|usr/local)/`)

// rootCommandPaths rewrites absolute paths in the script's bootcmd and runcmd
// lines to go under $ROOT, which the child shell expands. write_files paths
// are already rooted by render. Tests run as root in CI containers, so a path
// left pointing at the host would really be written: the rewritten script is
// checked so that no command line still names one.
func rootCommandPaths(t *testing.T, script []byte) []byte {
	t.Helper()
	lines := strings.Split(string(script), "\n")
	for i, line := range lines {
		if !strings.HasPrefix(line, "/bin/sh -c ") {
			continue
		}
		lines[i] = "/bin/sh -c " + hostPathInCommand.ReplaceAllString(strings.TrimPrefix(line, "/bin/sh -c "), "${1}$$ROOT/${2}/")
		NewWithT(t).Expect(hostPathInCommand.MatchString(strings.TrimPrefix(lines[i], "/bin/sh -c "))).
			To(BeFalse(), "command line still names a host path: %s", lines[i])
	}
	return []byte(strings.Join(lines, "\n"))
}

// fileMode returns the permission and setuid/setgid/sticky bits of a file
// under root, in the same form as chmod's octal argument.
func fileMode(t *testing.T, root, p string) os.FileMode {
	t.Helper()
	info, err := os.Stat(filepath.Join(root, p))
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	mode := info.Mode().Perm()
	if info.Mode()&os.ModeSetuid != 0 {
		mode |= 0o4000
	}
	if info.Mode()&os.ModeSetgid != 0 {
		mode |= 0o2000
	}
	if info.Mode()&os.ModeSticky != 0 {
		mode |= 0o1000
	}
	return mode
}
