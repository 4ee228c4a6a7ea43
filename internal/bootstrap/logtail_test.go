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
	"testing"

	. "github.com/onsi/gomega"
)

func TestRedactSecretsHidesKubeadmCredentials(t *testing.T) {
	g := NewWithT(t)
	log := "kubeadm join 10.0.0.1:6443 --token abcdef.0123456789abcdef \\\n" +
		"\t--discovery-token-ca-cert-hash sha256:1234 --control-plane --certificate-key=deadbeef\nerror: boom"
	got := redactSecrets(log)
	g.Expect(got).NotTo(ContainSubstring("abcdef.0123456789abcdef"))
	g.Expect(got).NotTo(ContainSubstring("sha256:1234"))
	g.Expect(got).NotTo(ContainSubstring("deadbeef"))
	g.Expect(got).To(ContainSubstring("--token <redacted>"))
	g.Expect(got).To(ContainSubstring("error: boom"))
}

// TestLogExcerptEndsAtTheBootstrapFailure uses the shape of a real failed node's
// console: the script's output, the failure line, then systemd's shutdown.
func TestLogExcerptEndsAtTheBootstrapFailure(t *testing.T) {
	g := NewWithT(t)
	log := "\x1b[0;32m  OK  \x1b[0m] Started containerd\n" +
		"\x1bM[ ***  ] Job kind-import-images.service/start running (13s / no limit)\r\n" +
		"[13550.09] bash[275]: kubeadm join: connection refused\n" +
		"[13550.11] bash[276]: " + FailedMessage + "\n" +
		"[\x1b[0;32m  OK  \x1b[0m] Stopped target swap.target\n" +
		"Exiting container.\n"
	g.Expect(excerpt(log, 2)).To(Equal("[13550.09] bash[275]: kubeadm join: connection refused\n" +
		"[13550.11] bash[276]: " + FailedMessage))
	g.Expect(excerpt(log, 10)).To(Equal("  OK  ] Started containerd\n"+
		"[13550.09] bash[275]: kubeadm join: connection refused\n"+
		"[13550.11] bash[276]: "+FailedMessage), "terminal codes and spinners are removed")
	g.Expect(excerpt("a\nb\nc\n", 2)).To(Equal("b\nc"), "without a failure line, the tail")
}

func TestFailureLogIsTheRedactedExcerpt(t *testing.T) {
	g := NewWithT(t)
	log := "[1.0] kubeadm join 10.0.0.1:6443 --token abcdef.0123456789abcdef\n" +
		"[1.1] " + FailedMessage + "\n" +
		"[1.2] Stopped target swap.target\n"
	g.Expect(FailureLog(log, 5)).To(Equal("[1.0] kubeadm join 10.0.0.1:6443 --token <redacted>\n[1.1] " + FailedMessage))
}

// The three ways the node's programs report an exhausted inotify limit, as seen
// on hosting nodes with Linux's default of 128 instances, are recognised; a log
// that merely mentions either word is not.
func TestHostingNodeLimitRecognisesInotifyExhaustion(t *testing.T) {
	g := NewWithT(t)
	for _, line := range []string{
		"[    0.912] systemd[1]: Failed to create control group inotify object: Too many open files",
		"kubelet[301]: E1203 06:01:02.123 run.go:72] \"command failed\" err=\"inotify_init: too many open files\"",
		"containerd[90]: level=fatal msg=\"failed to create fsnotify watcher: too many open files\"",
	} {
		lack := HostingNodeLimit("[  OK  ] Reached target sysinit.target\n" + line + "\nExiting container.\n")
		g.Expect(lack).To(ContainSubstring("fs.inotify.max_user_instances"), line)
	}
	g.Expect(HostingNodeLimit(`error execution phase preflight: rpc error: code = Unimplemented desc = unknown service runtime.v1.RuntimeService`)).
		To(ContainSubstring("without its CRI service"), "kubeadm's view of a containerd that could not start its CRI plugin")
	g.Expect(HostingNodeLimit("kubeadm join: connection refused\nopen /etc/x: too many open files\n")).To(BeEmpty(),
		"too many open files without inotify is another limit")
	g.Expect(HostingNodeLimit("Started inotify watches\nerror: boom\n")).To(BeEmpty())
}
