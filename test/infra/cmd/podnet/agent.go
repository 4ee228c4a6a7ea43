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
	"maps"
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
	// cniConf is the CNI configuration file to write; none when empty (the
	// hosting nodes keep their own and use podnet for routes only).
	cniConf string
	// masquerade makes pod traffic that leaves the pod CIDRs the node's.
	masquerade bool
	// encap says which peers are reached through the VXLAN device: those
	// not on this node's link ("auto"), all ("always") or none ("never").
	encap string
	// run executes a command with stdin and returns its stdout.
	run func(stdin []byte, name string, args ...string) ([]byte, error)
}

// route is how a peer's CIDR is reached: directly through its node's
// address, or through the VXLAN device to its VTEP address.
type route struct {
	gateway string
	dev     string // set only for the VXLAN device
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
	var own, all []string
	var ownIP string
	peers := map[string]string{} // CIDR -> the peer node's address
	for _, n := range nodes {
		all = append(all, n.Spec.PodCIDRs...)
		if n.Name == a.nodeName {
			own, ownIP = n.Spec.PodCIDRs, internalIP(n)
			continue
		}
		if ip := internalIP(n); ip != "" {
			for _, cidr := range n.Spec.PodCIDRs {
				peers[cidr] = ip
			}
		}
	}
	if len(own) == 0 || ownIP == "" {
		return nil // the controller-manager has not given this node a CIDR (or an address) yet
	}
	slices.Sort(all)
	if a.cniConf != "" {
		if err := writeIfChanged(a.cniConf, cniConfig(own)); err != nil {
			return err
		}
	}
	routes, tunnelled, err := a.plan(ownIP, peers)
	if err != nil {
		return err
	}
	if len(tunnelled) > 0 {
		if err := a.syncTunnel(own[0], ownIP, tunnelled); err != nil {
			return err
		}
	}
	if err := a.syncRoutes(routes); err != nil {
		return err
	}
	if !a.masquerade {
		return nil
	}
	return a.syncMasquerade(own, all)
}

// plan decides each peer CIDR's route, and which peers (CIDR -> address) are
// reached through the VXLAN device.
func (a *agent) plan(ownIP string, peers map[string]string) (map[string]route, map[string]string, error) {
	onLink, err := a.onLink(ownIP)
	if err != nil {
		return nil, nil, err
	}
	routes := map[string]route{}
	tunnelled := map[string]string{}
	for cidr, ip := range peers {
		if onLink(ip) {
			routes[cidr] = route{gateway: ip}
			continue
		}
		vtep, err := vtepAddress(cidr)
		if err != nil {
			return nil, nil, err
		}
		routes[cidr] = route{gateway: vtep, dev: vxlanDevice}
		tunnelled[cidr] = ip
	}
	return routes, tunnelled, nil
}

// cniConfig gives each pod a point-to-point link to the node (ptp) with an
// address of the node's own CIDRs, as kind's kindnet does: only the plugins
// kind's node image builds (ptp, host-local, portmap), and a pod that reaches
// itself through a Service is routed back without a bridge's hairpin mode.
// podnet routes the other nodes' CIDRs. The MTU leaves room for VXLAN.
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
				"type": "ptp", "ipMasq": false, "mtu": vxlanMTU,
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

// syncRoutes makes the podnet routes equal to want.
func (a *agent) syncRoutes(want map[string]route) error {
	out, err := a.run(nil, "ip", "-json", "route", "show", "proto", routeProto)
	if err != nil {
		return err
	}
	var have []struct {
		Dst     string `json:"dst"`
		Gateway string `json:"gateway"`
		Dev     string `json:"dev"`
	}
	if err := unmarshalList(out, &have, "routes"); err != nil {
		return err
	}
	for _, r := range have {
		w, ok := want[r.Dst]
		if !ok || w.gateway != r.Gateway || (w.dev != "" && w.dev != r.Dev) {
			if _, err := a.run(nil, "ip", "route", "del", r.Dst, "proto", routeProto); err != nil {
				return err
			}
		}
	}
	for _, cidr := range slices.Sorted(maps.Keys(want)) {
		args := []string{"route", "replace", cidr, "via", want[cidr].gateway}
		if dev := want[cidr].dev; dev != "" {
			args = append(args, "dev", dev, "onlink")
		}
		if _, err := a.run(nil, "ip", append(args, "proto", routeProto)...); err != nil {
			return err
		}
	}
	return nil
}

// unmarshalList reads the JSON list a command printed; nothing is an empty list.
func unmarshalList(out []byte, into any, what string) error {
	if len(bytes.TrimSpace(out)) == 0 {
		return nil
	}
	if err := json.Unmarshal(out, into); err != nil {
		return fmt.Errorf("reading %s: %w", what, err)
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
