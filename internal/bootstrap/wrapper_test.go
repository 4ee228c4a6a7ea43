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

// nodeRoot is a node's file system below a test root, with programs on PATH
// that record their calls instead of touching the machine.
type nodeRoot struct {
	t    *testing.T
	root string
	bin  string
}

// newNodeRoot makes a root with an entrypoint that prints its arguments, and
// fakes for the given commands; a fake exits with its entry in failing.
func newNodeRoot(t *testing.T, fakes []string, failing map[string]int) nodeRoot {
	t.Helper()
	n := nodeRoot{t: t, root: t.TempDir(), bin: t.TempDir()}
	n.write(entrypointPath, "#!/bin/sh\nprintf 'entrypoint got:%s\\n' \"$@\"\n", 0o755)
	g := NewWithT(t)
	for _, name := range fakes {
		script := "#!/bin/sh\necho \"" + name + " $*\" >> " + shellQuote(n.callsPath()) + "\n"
		if name == "unshare" { // runs what follows "--", as unshare does
			script += "while [ \"$1\" != -- ]; do shift; done; shift; exec \"$@\"\n"
		}
		if code, ok := failing[name]; ok {
			script += "exit " + strconv.Itoa(code) + "\n"
		}
		g.Expect(os.WriteFile(filepath.Join(n.bin, name), []byte(script), 0o755)).To(Succeed())
	}
	return n
}

func (n nodeRoot) callsPath() string { return filepath.Join(n.bin, "calls") }

func (n nodeRoot) write(p, content string, mode os.FileMode) {
	n.t.Helper()
	g := NewWithT(n.t)
	g.Expect(os.MkdirAll(filepath.Dir(filepath.Join(n.root, p)), 0o755)).To(Succeed())
	g.Expect(os.WriteFile(filepath.Join(n.root, p), []byte(content), mode)).To(Succeed())
}

func (n nodeRoot) read(p string) string {
	content, err := os.ReadFile(filepath.Join(n.root, p))
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(content)
}

// calls lists the fakes' calls, with the root shown as $ROOT.
func (n nodeRoot) calls() []string {
	recorded, _ := os.ReadFile(n.callsPath())
	text := strings.ReplaceAll(strings.TrimSpace(string(recorded)), n.root, "$ROOT")
	if text == "" {
		return nil
	}
	return strings.Split(text, "\n")
}

// runWrapper runs the wrapper below the root and returns its output.
func (n nodeRoot) runWrapper() (string, error) {
	cmd := exec.Command("/bin/bash", "-c", wrapperScript(n.root))
	cmd.Env = []string{"PATH=" + n.bin + ":/usr/sbin:/usr/bin:/sbin:/bin"}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestWrapperScriptIsValidBash(t *testing.T) {
	for name, script := range map[string]string{"production": wrapperScript(""), "below a test root": wrapperScript(t.TempDir())} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			path := filepath.Join(t.TempDir(), "wrapper.sh")
			g.Expect(os.WriteFile(path, []byte(script), 0o600)).To(Succeed())
			out, err := exec.Command("bash", "-n", path).CombinedOutput()
			g.Expect(err).NotTo(HaveOccurred(), string(out))
		})
	}
}

func TestWrapperScriptInstallsTheUnitAndExecsTheEntrypointWithInit(t *testing.T) {
	g := NewWithT(t)
	n := newNodeRoot(t, nil, nil)
	unitDir := filepath.Join(n.root, systemdUnitDir)

	for run := 1; run <= 2; run++ { // the second run proves the wrapper is idempotent
		out, err := n.runWrapper()
		g.Expect(err).NotTo(HaveOccurred(), "run %d: %s", run, out)
		g.Expect(out).To(Equal("entrypoint got:/sbin/init\n"), "run %d", run)

		g.Expect(n.read(systemdUnitDir + "/" + unitName)).To(Equal(unit))
		wantsLink := filepath.Join(unitDir, wantsDir, unitName)
		target, err := os.Readlink(wantsLink)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(target).To(Equal("../" + unitName))
		linked, err := os.ReadFile(wantsLink)
		g.Expect(err).NotTo(HaveOccurred(), "the wants link resolves")
		g.Expect(string(linked)).To(Equal(unit))
		g.Expect(n.read(managerDropInPath)).To(Equal("[Manager]\nDefaultTimeoutStopSec=5s\n"))
	}
}

func TestWrapperScriptHoldsNoBootstrapData(t *testing.T) {
	g := NewWithT(t)
	script := wrapperScript("")
	g.Expect(script).To(ContainSubstring(MountPath + "/" + ScriptKey))
	g.Expect(script).NotTo(ContainSubstring("kubeadm"))
	g.Expect(script).NotTo(ContainSubstring("token"))
}

func TestWrapperScriptOnCgroupV1InstallsTheKubeletDropInAndStaysInItsNamespace(t *testing.T) {
	g := NewWithT(t)
	n := newNodeRoot(t, []string{"unshare", "umount", "mount"}, nil)
	n.write("/proc/self/cgroup", "4:cpu,cpuacct:/kubepods/burstable/pod1/abc\n0::/\n", 0o644)

	out, err := n.runWrapper()
	g.Expect(err).NotTo(HaveOccurred(), out)
	g.Expect(out).To(Equal("entrypoint got:/sbin/init\n"))
	g.Expect(n.calls()).To(BeEmpty(), "no cgroup namespace and no mounts on cgroup v1")
	g.Expect(n.read(kubeletDropInDir + "/" + cgroupV1DropIn)).To(Equal("[Service]\nExecStartPre=" + cgroupV1FixPath + "\n"))
	g.Expect(n.read(cgroupV1FixPath)).To(Equal(cgroupV1Fix(cgroupMount)))
	info, err := os.Stat(filepath.Join(n.root, cgroupV1FixPath))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(info.Mode().Perm()).To(Equal(os.FileMode(0o755)))
}

func TestWrapperScriptOnCgroupV2(t *testing.T) {
	enters := HaveExactElements(
		And(HavePrefix("unshare --cgroup -- /bin/sh -c "),
			HaveSuffix(" capk-cgroupns $ROOT/sys/fs/cgroup $ROOT/usr/local/bin/entrypoint /sbin/init")),
		Equal("umount $ROOT/sys/fs/cgroup"),
		Equal("mount -t cgroup2 cgroup2 $ROOT/sys/fs/cgroup"),
	)
	tests := []struct {
		name       string
		ownCgroup  string
		failing    map[string]int
		wantErr    bool
		wantOutput string
		wantCalls  OmegaMatcher
	}{{
		name:       "without a cgroup namespace it enters one and mounts the hierarchy again",
		ownCgroup:  "0::/kubepods.slice/kubepods-burstable.slice/cri-containerd-abc.scope\n",
		wantOutput: "entrypoint got:/sbin/init\n",
		wantCalls:  enters,
	}, {
		name:       "in a cgroup namespace of its own already it changes nothing",
		ownCgroup:  "0::/\n",
		wantOutput: "entrypoint got:/sbin/init\n",
		wantCalls:  BeEmpty(),
	}, {
		name:       "a mount that fails ends the container with the reason, before the entrypoint",
		ownCgroup:  "0::/kubepods/pod1/abc\n",
		failing:    map[string]int{"mount": 1},
		wantErr:    true,
		wantOutput: "capk: cannot mount $ROOT/sys/fs/cgroup again in a cgroup namespace of its own\n",
		wantCalls:  enters,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			n := newNodeRoot(t, []string{"unshare", "umount", "mount"}, tt.failing)
			n.write(cgroupMount+"/cgroup.controllers", "cpu memory pids\n", 0o644)
			n.write("/proc/self/cgroup", tt.ownCgroup, 0o644)

			out, err := n.runWrapper()
			g.Expect(err != nil).To(Equal(tt.wantErr), out)
			g.Expect(strings.ReplaceAll(out, n.root, "$ROOT")).To(Equal(tt.wantOutput))
			g.Expect(n.calls()).To(tt.wantCalls)
			g.Expect(n.read(kubeletDropInDir+"/"+cgroupV1DropIn)).To(HavePrefix("<"), "no cgroup v1 drop-in on cgroup v2")
		})
	}
}

func TestWrapperScriptRestrictsOOMScoreAdjOnlyWithoutCapSysResource(t *testing.T) {
	const kindConfig = "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\"]\n  restrict_oom_score_adj = false\n"
	restricted := strings.Replace(kindConfig, "= false", "= true", 1)
	tests := []struct {
		name, status, config, want string
	}{
		{name: "bounding set without CAP_SYS_RESOURCE", status: "Name:\tbash\nCapBnd:\t000001fffeffffff\n", config: kindConfig, want: restricted},
		{name: "full bounding set", status: "CapBnd:\t000001ffffffffff\n", config: kindConfig, want: kindConfig},
		{name: "unreadable bounding set counts as full", config: kindConfig, want: kindConfig},
		{name: "already restricted", status: "CapBnd:\t0000000000000000\n", config: restricted, want: restricted},
		{name: "an image without containerd's config", status: "CapBnd:\t0000000000000000\n", want: "<"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			n := newNodeRoot(t, nil, nil)
			if tt.status != "" {
				n.write("/proc/self/status", tt.status, 0o644)
			}
			if tt.config != "" {
				n.write(containerdConfigPath, tt.config, 0o644)
			}
			out, err := n.runWrapper()
			g.Expect(err).NotTo(HaveOccurred(), out)
			g.Expect(n.read(containerdConfigPath)).To(HavePrefix(tt.want))
		})
	}
}

// The cgroup v1 files go through quoted heredocs, as the unit does: the
// delimiter must not be a line of either.
func TestWrittenFilesNeverContainTheHeredocDelimiter(t *testing.T) {
	g := NewWithT(t)
	for _, content := range []string{cgroupV1Fix(cgroupMount), cgroupV1DropInUnit, managerDropIn} {
		g.Expect(strings.Split(content, "\n")).NotTo(ContainElement(fileHeredocDelimiter))
	}
}

func TestCgroupV1FixUnmountsOnlyUnscopedHierarchies(t *testing.T) {
	g := NewWithT(t)
	bin := t.TempDir()
	calls := filepath.Join(bin, "calls")
	mounts := "/sys/fs/cgroup/cpu,cpuacct /kubepods/burstable/pod1/abc\n/sys/fs/cgroup/hugetlb /\n/sys/fs/cgroup/memory /kubepods/burstable/pod1/abc\n/sys/fs/cgroup/net_cls /\n"
	g.Expect(os.WriteFile(filepath.Join(bin, "findmnt"), []byte("#!/bin/sh\nprintf '"+mounts+"'\n"), 0o755)).To(Succeed())
	g.Expect(os.WriteFile(filepath.Join(bin, "umount"), []byte("#!/bin/sh\necho \"umount $*\" >> "+shellQuote(calls)+"\n"), 0o755)).To(Succeed())

	for name, cgroupRoot := range map[string]string{"cgroup v1": t.TempDir(), "cgroup v2": t.TempDir()} {
		if name == "cgroup v2" {
			g.Expect(os.WriteFile(filepath.Join(cgroupRoot, "cgroup.controllers"), []byte("cpu\n"), 0o644)).To(Succeed())
		}
		g.Expect(os.RemoveAll(calls)).To(Succeed())
		cmd := exec.Command("/bin/sh", "-c", cgroupV1Fix(cgroupRoot))
		cmd.Env = []string{"PATH=" + bin + ":/usr/bin:/bin"}
		out, err := cmd.CombinedOutput()
		g.Expect(err).NotTo(HaveOccurred(), string(out))
		recorded, _ := os.ReadFile(calls)
		if name == "cgroup v2" {
			g.Expect(string(recorded)).To(BeEmpty(), name)
			continue
		}
		g.Expect(string(recorded)).To(Equal("umount /sys/fs/cgroup/hugetlb\numount /sys/fs/cgroup/net_cls\n"), name)
		g.Expect(string(out)).To(ContainSubstring("capk: unmounted the unscoped cgroup hierarchy /sys/fs/cgroup/hugetlb"))
	}
}
