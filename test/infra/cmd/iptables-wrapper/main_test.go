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

package main

import (
	"strings"
	"testing"
)

func TestTarget(t *testing.T) {
	for name, want := range map[string]string{
		"iptables":          "/usr/sbin/iptables-legacy",
		"iptables-save":     "/usr/sbin/iptables-legacy-save",
		"iptables-restore":  "/usr/sbin/iptables-legacy-restore",
		"ip6tables":         "/usr/sbin/ip6tables-legacy",
		"ip6tables-save":    "/usr/sbin/ip6tables-legacy-save",
		"ip6tables-restore": "/usr/sbin/ip6tables-legacy-restore",
	} {
		got, err := target(name, "legacy")
		if err != nil || got != want {
			t.Errorf("target(%q, legacy) = %q, %v; want %q", name, got, err, want)
		}
	}
	if got, _ := target("ip6tables-save", "nft"); got != "/usr/sbin/ip6tables-nft-save" {
		t.Errorf("target(ip6tables-save, nft) = %q", got)
	}
	for _, name := range []string{"iptables-wrapper", "iptables-apply", "ebtables", "iptables-legacy"} {
		if got, err := target(name, "nft"); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("target(%q) = %q, %v; want an error naming it", name, got, err)
		}
	}
}

// dumps are iptables-save outputs: the kubelet's hint chain, and rules
// without it.
const (
	kubeletDump = "*mangle\n:PREROUTING ACCEPT [0:0]\n:KUBE-IPTABLES-HINT - [0:0]\nCOMMIT\n"
	canaryDump  = "*nat\n:KUBE-KUBELET-CANARY - [0:0]\nCOMMIT\n"
	twoRules    = "*filter\n:INPUT ACCEPT [0:0]\n-A INPUT -j ACCEPT\n-A INPUT -j DROP\nCOMMIT\n"
	oneRule     = "*filter\n:INPUT ACCEPT [0:0]\n-A INPUT -j ACCEPT\nCOMMIT\n"
	// a rule that only mentions the chain is no hint
	mentionsHint = "*filter\n-A INPUT -m comment --comment \":KUBE-IPTABLES-HINT \" -j ACCEPT\nCOMMIT\n"
)

func TestDetect(t *testing.T) {
	for _, tc := range []struct {
		name, legacy, nft, want string
	}{
		{"the kubelet's hint in legacy", kubeletDump, twoRules + twoRules, "legacy"},
		{"the kubelet's hint in nft", twoRules + twoRules, kubeletDump, "nft"},
		{"the kubelet's canary in legacy", canaryDump, "", "legacy"},
		{"more rules in legacy", twoRules, oneRule, "legacy"},
		{"more rules in nft", oneRule, twoRules, "nft"},
		{"a tie goes to nft", oneRule, oneRule, "nft"},
		{"nothing anywhere", "", "", "nft"},
		{"a comment is no hint", mentionsHint, twoRules, "nft"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var asked []string
			got := detect(func(mode string) string {
				asked = append(asked, mode)
				return map[string]string{"legacy": tc.legacy, "nft": tc.nft}[mode]
			})
			if got != tc.want {
				t.Errorf("detect = %s, want %s", got, tc.want)
			}
			if strings.Join(asked, ",") != "legacy,nft" {
				t.Errorf("asked for %v, want both backends", asked)
			}
		})
	}
}
