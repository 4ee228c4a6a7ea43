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

// Command iptables-wrapper stands in for iptables, ip6tables and their -save
// and -restore programs in the kube-proxy and podnet images the node image
// preloads, and runs the backend (legacy or nft) the node itself uses.
//
// Why: a container image carries both backends and picks one when it is
// built, but the rules that matter are the node's (the kubelet's, kube-proxy's
// and the CNI's must all be in one backend). Upstream's kube-proxy image does
// this with the iptables-wrappers project; that module is not served here, so
// this is the same rule written again: the backend holding the kubelet's
// KUBE-IPTABLES-HINT or KUBE-KUBELET-CANARY chain wins; with neither, the one
// with more rules; a tie goes to nft, as upstream's. The choice is kept in a
// file so that only the first call looks.
//
// Install it under the names it replaces, ahead of /usr/sbin on the PATH.
package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

// sbin holds the real programs, iptables-legacy-save and so on.
const sbin = "/usr/sbin"

// modeFile keeps the chosen backend for the later calls of this container.
const modeFile = "/run/iptables-wrapper.mode"

// hintChains are created by the kubelet in the backend it uses.
var hintChains = []string{":KUBE-IPTABLES-HINT ", ":KUBE-KUBELET-CANARY "}

func main() {
	name := filepath.Base(os.Args[0])
	real, err := target(name, mode())
	if err == nil {
		err = syscall.Exec(real, append([]string{real}, os.Args[1:]...), os.Environ()) //nolint:gosec // the program it stands in for
	}
	fmt.Fprintln(os.Stderr, "iptables-wrapper:", err)
	os.Exit(1)
}

// target is the real program for name in the given backend:
// ip6tables-save and nft give /usr/sbin/ip6tables-nft-save.
func target(name, mode string) (string, error) {
	for _, family := range []string{"iptables", "ip6tables"} {
		rest, ok := strings.CutPrefix(name, family)
		if ok && (rest == "" || rest == "-save" || rest == "-restore") {
			return filepath.Join(sbin, family+"-"+mode+rest), nil
		}
	}
	return "", fmt.Errorf("called as %q: only iptables, ip6tables and their -save and -restore are wrapped", name)
}

// mode is the kept backend, or the one detect picks (then kept).
func mode() string {
	if b, err := os.ReadFile(modeFile); err == nil {
		if m := strings.TrimSpace(string(b)); m == "legacy" || m == "nft" {
			return m
		}
	}
	m := detect(save)
	if err := os.WriteFile(modeFile, []byte(m+"\n"), 0o644); err != nil { //nolint:gosec // not secret
		fmt.Fprintln(os.Stderr, "iptables-wrapper: keeping the choice:", err)
	}
	return m
}

// save runs iptables-<mode>-save and ip6tables-<mode>-save and returns their
// output; a backend this kernel lacks gives what it could.
func save(mode string) string {
	var out strings.Builder
	for _, family := range []string{"iptables", "ip6tables"} {
		b, err := exec.Command(filepath.Join(sbin, family+"-"+mode+"-save")).Output() //nolint:gosec // fixed programs
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			continue
		}
		out.Write(b)
	}
	return out.String()
}

// detect picks the backend from the rules each one holds.
func detect(save func(mode string) string) string {
	legacy, nft := save("legacy"), save("nft")
	switch {
	case hasHint(legacy):
		return "legacy"
	case hasHint(nft):
		return "nft"
	case rules(legacy) > rules(nft):
		return "legacy"
	default:
		return "nft"
	}
}

func hasHint(dump string) bool {
	for line := range strings.Lines(dump) {
		for _, chain := range hintChains {
			if strings.HasPrefix(line, chain) {
				return true
			}
		}
	}
	return false
}

// rules counts the rule lines ("-A ...") of an iptables-save dump.
func rules(dump string) int {
	n := 0
	for line := range strings.Lines(dump) {
		if strings.HasPrefix(line, "-") {
			n++
		}
	}
	return n
}
