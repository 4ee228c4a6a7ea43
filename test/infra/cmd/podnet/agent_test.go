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
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func node(name, ip string, cidrs ...string) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       corev1.NodeSpec{PodCIDRs: cidrs},
		Status:     corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}}},
	}
}

// recorder answers `ip -json route show` with existing routes and fails the
// iptables check, as on a fresh node; it records every command.
type recorder struct {
	routes   string
	commands []string
	stdin    string
}

func (r *recorder) run(stdin []byte, name string, args ...string) ([]byte, error) {
	cmd := name + " " + strings.Join(args, " ")
	r.commands = append(r.commands, cmd)
	if stdin != nil {
		r.stdin = string(stdin)
	}
	switch {
	case strings.HasPrefix(cmd, "ip -json route show"):
		return []byte(r.routes), nil
	case strings.Contains(cmd, " -C POSTROUTING"):
		return nil, errors.New("no such rule")
	}
	return nil, nil
}

func TestSyncConfiguresOwnCIDRRoutesAndNAT(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "net.d", "10-podnet.conflist")
	r := &recorder{routes: `[{"dst":"10.244.9.0/24","gateway":"10.252.0.9"},{"dst":"10.244.2.0/24","gateway":"10.252.0.2"}]`}
	a := &agent{nodeName: "cp", cniConf: conf, run: r.run}
	err := a.sync([]*corev1.Node{
		node("cp", "10.252.0.1", "10.244.0.0/24"),
		node("w1", "10.252.0.2", "10.244.2.0/24"),
		node("w2", "10.252.0.3", "10.244.3.0/24"),
		node("new", "10.252.0.4"), // no CIDR yet
	})
	if err != nil {
		t.Fatal(err)
	}

	var parsed struct {
		Plugins []struct {
			Type string
			IPAM struct{ Ranges [][]map[string]string }
		}
	}
	content, err := os.ReadFile(conf)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(content, &parsed); err != nil {
		t.Fatal(err)
	}
	if parsed.Plugins[0].Type != "ptp" || parsed.Plugins[0].IPAM.Ranges[0][0]["subnet"] != "10.244.0.0/24" {
		t.Errorf("CNI config = %s", content)
	}
	want := []string{
		"ip -json route show proto 201",
		"ip route del 10.244.9.0/24 proto 201", // a node that left
		"ip route replace 10.244.2.0/24 via 10.252.0.2 proto 201",
		"ip route replace 10.244.3.0/24 via 10.252.0.3 proto 201",
		"iptables-restore --noflush",
		"iptables -t nat -C POSTROUTING -s 10.244.0.0/24 -m comment --comment podnet -j PODNET-MASQ",
		"iptables -t nat -A POSTROUTING -s 10.244.0.0/24 -m comment --comment podnet -j PODNET-MASQ",
	}
	if !slices.Equal(r.commands, want) {
		t.Errorf("commands:\n%s\nwant:\n%s", strings.Join(r.commands, "\n"), strings.Join(want, "\n"))
	}
	for _, rule := range []string{"-d 10.244.0.0/24 -j RETURN", "-d 10.244.3.0/24 -j RETURN", "-A PODNET-MASQ -j MASQUERADE"} {
		if !strings.Contains(r.stdin, rule) {
			t.Errorf("NAT rules lack %q:\n%s", rule, r.stdin)
		}
	}
}

func TestSyncWaitsForOwnCIDR(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "10-podnet.conflist")
	r := &recorder{}
	a := &agent{nodeName: "w1", cniConf: conf, run: r.run}
	if err := a.sync([]*corev1.Node{node("cp", "10.252.0.1", "10.244.0.0/24"), node("w1", "10.252.0.2")}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(conf); !os.IsNotExist(err) || len(r.commands) != 0 {
		t.Errorf("without its own CIDR the node got a config (%v) or commands %v", err, r.commands)
	}
}
