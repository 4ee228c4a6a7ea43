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
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

const (
	// routeProto marks the routes podnet owns, so that it removes only those.
	routeProto = "201"
	masqChain  = "PODNET-MASQ"
)

// agent turns the Node list into this node's CNI config, routes and NAT.
type agent struct {
	nodeName string
	cniConf  string
	// run executes a command with stdin and returns its stdout.
	run func(stdin []byte, name string, args ...string) ([]byte, error)
}

func runCommand(stdin []byte, name string, args ...string) ([]byte, error) {
	cmd := exec.Command(name, args...)
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

func (a *agent) sync(nodes []*corev1.Node) error {
	var own []string
	var all []string
	routes := map[string]string{} // CIDR -> gateway
	for _, n := range nodes {
		all = append(all, n.Spec.PodCIDRs...)
		if n.Name == a.nodeName {
			own = n.Spec.PodCIDRs
			continue
		}
		if ip := internalIP(n); ip != "" {
			for _, cidr := range n.Spec.PodCIDRs {
				routes[cidr] = ip
			}
		}
	}
	if len(own) == 0 {
		return nil // the controller-manager has not given this node a CIDR yet
	}
	slices.Sort(all)
	if err := writeIfChanged(a.cniConf, cniConfig(own)); err != nil {
		return err
	}
	if err := a.syncRoutes(routes); err != nil {
		return err
	}
	return a.syncMasquerade(own, all)
}

// cniConfig gives each pod a point-to-point link to the node (ptp) with an
// address of the node's own CIDRs, as kind's kindnet does: only the plugins
// kind's node image builds (ptp, host-local, portmap), and a pod that reaches
// itself through a Service is routed back without a bridge's hairpin mode.
// podnet routes the other nodes' CIDRs.
func cniConfig(cidrs []string) []byte {
	ranges := make([][]map[string]string, 0, len(cidrs))
	for _, c := range cidrs {
		ranges = append(ranges, []map[string]string{{"subnet": c}})
	}
	conf := map[string]any{
		"cniVersion": "1.0.0",
		"name":       "podnet",
		"plugins": []any{
			map[string]any{
				"type": "ptp", "ipMasq": false,
				"ipam": map[string]any{"type": "host-local", "ranges": ranges,
					"routes": []map[string]string{{"dst": "0.0.0.0/0"}}},
			},
			map[string]any{"type": "portmap", "capabilities": map[string]bool{"portMappings": true}},
		},
	}
	out, _ := json.MarshalIndent(conf, "", "  ")
	return append(out, '\n')
}

func writeIfChanged(path string, content []byte) error {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, content) {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, content, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// syncRoutes makes the podnet routes equal to want (CIDR -> gateway).
func (a *agent) syncRoutes(want map[string]string) error {
	out, err := a.run(nil, "ip", "-json", "route", "show", "proto", routeProto)
	if err != nil {
		return err
	}
	var have []struct {
		Dst     string `json:"dst"`
		Gateway string `json:"gateway"`
	}
	if len(bytes.TrimSpace(out)) > 0 {
		if err := json.Unmarshal(out, &have); err != nil {
			return fmt.Errorf("reading routes: %w", err)
		}
	}
	for _, r := range have {
		if want[r.Dst] != r.Gateway {
			if _, err := a.run(nil, "ip", "route", "del", r.Dst, "proto", routeProto); err != nil {
				return err
			}
		}
	}
	for _, cidr := range sortedKeys(want) {
		if _, err := a.run(nil, "ip", "route", "replace", cidr, "via", want[cidr], "proto", routeProto); err != nil {
			return err
		}
	}
	return nil
}

// syncMasquerade SNATs traffic from this node's pods to anything outside the
// cluster's pod CIDRs (the hosting network does not know them).
func (a *agent) syncMasquerade(own, all []string) error {
	var rules strings.Builder
	rules.WriteString("*nat\n:" + masqChain + " - [0:0]\n")
	for _, cidr := range slices.Compact(all) {
		rules.WriteString("-A " + masqChain + " -d " + cidr + " -j RETURN\n")
	}
	rules.WriteString("-A " + masqChain + " -j MASQUERADE\nCOMMIT\n")
	if _, err := a.run([]byte(rules.String()), "iptables-restore", "--noflush"); err != nil {
		return err
	}
	for _, cidr := range own {
		jump := []string{"POSTROUTING", "-s", cidr, "-m", "comment", "--comment", "podnet", "-j", masqChain}
		if _, err := a.run(nil, "iptables", append([]string{"-t", "nat", "-C"}, jump...)...); err == nil {
			continue
		}
		if _, err := a.run(nil, "iptables", append([]string{"-t", "nat", "-A"}, jump...)...); err != nil {
			return err
		}
	}
	return nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
