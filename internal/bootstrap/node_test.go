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
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
)

func TestBootstrapUnitRunsOnceAndEndsTheContainerOnFailure(t *testing.T) {
	lines := strings.Split(unit, "\n")
	tests := []struct {
		name, wantLine string
	}{
		{name: "oneshot", wantLine: "Type=oneshot"},
		{name: "stays active", wantLine: "RemainAfterExit=yes"},
		{name: "no systemd timeout: the controller enforces bootstrapTimeout", wantLine: "TimeoutStartSec=infinity"},
		{name: "after containerd", wantLine: "After=containerd.service kind-import-images.service"},
		{name: "skipped once the sentinel exists", wantLine: "ConditionPathExists=!" + SentinelPath},
		{name: "runs the mounted script", wantLine: "ExecStart=/bin/bash /etc/capk/bootstrap/bootstrap.sh"},
		{name: "fails when the script did not write the sentinel", wantLine: "ExecStartPost=/usr/bin/test -f " + SentinelPath},
		{name: "output to the Pod log", wantLine: "StandardOutput=journal+console"},
		{name: "errors to the Pod log", wantLine: "StandardError=journal+console"},
		{name: "enabled in multi-user.target", wantLine: "WantedBy=multi-user.target"},
		{name: "failure exit code", wantLine: `ExecStopPost=/bin/bash -c 'if [ "$$SERVICE_RESULT" != success ]; then echo "capk-bootstrap: failed"; systemctl --no-block exit ` +
			strconv.Itoa(FailedExitCode) + `; fi'`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(lines).To(ContainElement(tt.wantLine))
		})
	}
	t.Run("heredoc delimiter never occurs in the unit", func(t *testing.T) {
		g := NewWithT(t)
		g.Expect(lines).NotTo(ContainElement(unitHeredocDelimiter))
	})
	t.Run("systemd-analyze verify", func(t *testing.T) {
		verifyWithSystemdAnalyze(NewWithT(t), t)
	})
}

// verifyWithSystemdAnalyze checks the unit with systemd's own parser when the
// machine has it; only this check is skipped otherwise.
func verifyWithSystemdAnalyze(g Gomega, t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Log("systemd-analyze not found: the unit was not checked with systemd-analyze verify")
		return
	}
	path := filepath.Join(t.TempDir(), unitName)
	g.Expect(os.WriteFile(path, []byte(unit), 0o600)).To(Succeed())
	out, err := exec.Command(analyze, "verify", "--man=no", path).CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred(), string(out))
	g.Expect(string(out)).NotTo(ContainSubstring(unitName), "no warnings about the unit")
}

func TestFailureHookEndsTheContainerWithTheFailedExitCodeOnlyOnFailure(t *testing.T) {
	tests := []struct {
		serviceResult string
		wantOutput    string
		wantSystemctl string
	}{
		{serviceResult: "success", wantOutput: "", wantSystemctl: ""},
		{serviceResult: "exit-code", wantOutput: "capk-bootstrap: failed\n", wantSystemctl: "--no-block exit 42\n"},
		{serviceResult: "signal", wantOutput: "capk-bootstrap: failed\n", wantSystemctl: "--no-block exit 42\n"},
		{serviceResult: "timeout", wantOutput: "capk-bootstrap: failed\n", wantSystemctl: "--no-block exit 42\n"},
	}
	for _, tt := range tests {
		t.Run(tt.serviceResult, func(t *testing.T) {
			g := NewWithT(t)
			bin := t.TempDir()
			calls := filepath.Join(bin, "calls")
			fakeSystemctl := "#!/bin/sh\necho \"$*\" >> " + shellQuote(calls) + "\n"
			g.Expect(os.WriteFile(filepath.Join(bin, "systemctl"), []byte(fakeSystemctl), 0o755)).To(Succeed())

			// systemd turns "$$" into "$" before running the command.
			hook := exec.Command("/bin/bash", "-c", strings.ReplaceAll(failureHook, "$$", "$"))
			hook.Env = []string{"PATH=" + bin + ":/usr/bin:/bin", "SERVICE_RESULT=" + tt.serviceResult}
			out, err := hook.CombinedOutput()
			g.Expect(err).NotTo(HaveOccurred(), string(out))
			g.Expect(string(out)).To(Equal(tt.wantOutput))
			recorded, _ := os.ReadFile(calls)
			g.Expect(string(recorded)).To(Equal(tt.wantSystemctl))
		})
	}
}
