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

// hostingLink is `ip -json -4 address show` of a node Pod whose address is
// 10.252.0.1 on the hosting node's /24.
const hostingLink = `[{"ifname":"lo","addr_info":[{"local":"127.0.0.1","prefixlen":8}]},
 {"ifname":"eth0","addr_info":[{"local":"10.252.0.1","prefixlen":24}]}]`

// recorder answers the listing commands with what it holds (routes, the
// node's addresses, links, neighbours and forwarding entries) and fails the
// iptables check, as on a fresh node; it records every other command.
type recorder struct {
	routes, addresses, links, neighbours, fdb string
	commands                                  []string
	stdin                                     string
}

func (r *recorder) run(stdin []byte, name string, args ...string) ([]byte, error) {
	cmd := name + " " + strings.Join(args, " ")
	if stdin != nil {
		r.stdin = string(stdin)
	}
	for prefix, out := range map[string]string{
		"ip -json route show":         r.routes,
		"ip -json -4 address show":    r.addresses,
		"ip -json -details link show": r.links,
		"ip -json neighbour show":     r.neighbours,
		"bridge -json fdb show":       r.fdb,
	} {
		if strings.HasPrefix(cmd, prefix) {
			return []byte(out), nil
		}
	}
	r.commands = append(r.commands, cmd)
	if strings.Contains(cmd, " -C POSTROUTING") {
		return nil, errors.New("no such rule")
	}
	return nil, nil
}

func (r *recorder) expectCommands(t *testing.T, want ...string) {
	t.Helper()
	if !slices.Equal(r.commands, want) {
		t.Errorf("commands:\n%s\nwant:\n%s", strings.Join(r.commands, "\n"), strings.Join(want, "\n"))
	}
}

// masquerade is what every sync of node cp (10.244.0.0/24) ends with.
var masquerade = []string{
	"iptables-restore --noflush",
	"iptables -t nat -C POSTROUTING -s 10.244.0.0/24 -m comment --comment podnet -j PODNET-MASQ",
	"iptables -t nat -A POSTROUTING -s 10.244.0.0/24 -m comment --comment podnet -j PODNET-MASQ",
}

func TestSyncConfiguresOwnCIDRRoutesAndNAT(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "net.d", "10-podnet.conflist")
	r := &recorder{addresses: hostingLink,
		routes: `[{"dst":"10.244.9.0/24","gateway":"10.252.0.9"},{"dst":"10.244.2.0/24","gateway":"10.252.0.2"}]`}
	a := &agent{nodeName: "cp", masquerade: true, cniConf: conf, encap: encapAuto, run: r.run}
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
			MTU  int
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
	if parsed.Plugins[0].Type != "ptp" || parsed.Plugins[0].IPAM.Ranges[0][0]["subnet"] != "10.244.0.0/24" ||
		parsed.Plugins[0].MTU != vxlanMTU {
		t.Errorf("CNI config = %s", content)
	}
	// both peers are on the link: host-gw routes, no VXLAN device
	r.expectCommands(t, append([]string{
		"ip route del 10.244.9.0/24 proto 201", // a node that left
		"ip route replace 10.244.2.0/24 via 10.252.0.2 proto 201",
		"ip route replace 10.244.3.0/24 via 10.252.0.3 proto 201",
	}, masquerade...)...)
	for _, rule := range []string{"-d 10.244.0.0/24 -j RETURN", "-d 10.244.3.0/24 -j RETURN", "-A PODNET-MASQ -j MASQUERADE"} {
		if !strings.Contains(r.stdin, rule) {
			t.Errorf("NAT rules lack %q:\n%s", rule, r.stdin)
		}
	}
}

func TestSyncWaitsForOwnCIDR(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "10-podnet.conflist")
	r := &recorder{}
	a := &agent{nodeName: "w1", masquerade: true, cniConf: conf, encap: encapAuto, run: r.run}
	if err := a.sync([]*corev1.Node{node("cp", "10.252.0.1", "10.244.0.0/24"), node("w1", "10.252.0.2")}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(conf); !os.IsNotExist(err) || len(r.commands) != 0 {
		t.Errorf("without its own CIDR the node got a config (%v) or commands %v", err, r.commands)
	}
}

func TestSyncTunnelsPeersOffTheLink(t *testing.T) {
	r := &recorder{addresses: hostingLink,
		// a host-gw route of a peer that moved off the link, and a tunnelled one of a peer that left
		routes:     `[{"dst":"10.244.3.0/24","gateway":"10.252.1.3","dev":"eth0"},{"dst":"10.244.9.0/24","gateway":"10.244.9.0","dev":"podnet.1"}]`,
		neighbours: `[{"dst":"10.244.9.0","lladdr":"0e:70:0a:fc:01:09"},{"dst":"10.244.3.0","lladdr":"0e:70:0a:fc:01:03"}]`,
		fdb:        `[{"mac":"0E:70:0A:FC:01:09","dst":"10.252.1.9"},{"mac":"0e:70:0a:fc:01:03","dst":"10.252.1.3"},{"mac":"00:00:00:00:00:00"}]`,
	}
	a := &agent{nodeName: "cp", masquerade: true, cniConf: filepath.Join(t.TempDir(), "podnet.conflist"), encap: encapAuto, run: r.run}
	err := a.sync([]*corev1.Node{
		node("cp", "10.252.0.1", "10.244.0.0/24"),
		node("w1", "10.252.0.2", "10.244.2.0/24"), // same hosting node
		node("w2", "10.252.1.3", "10.244.3.0/24"), // another hosting node
	})
	if err != nil {
		t.Fatal(err)
	}
	r.expectCommands(t, append([]string{
		"ip link add podnet.1 address 0e:70:0a:fc:00:01 mtu 1450 type vxlan id 1 dstport 4789 local 10.252.0.1 nolearning",
		"ip link set podnet.1 up",
		"ip address replace 10.244.0.0/32 dev podnet.1",
		"ip neighbour replace 10.244.3.0 lladdr 0e:70:0a:fc:01:03 dev podnet.1 nud permanent",
		"bridge fdb replace 0e:70:0a:fc:01:03 dev podnet.1 dst 10.252.1.3 self permanent",
		"ip neighbour del 10.244.9.0 dev podnet.1",
		"bridge fdb del 0E:70:0A:FC:01:09 dev podnet.1 dst 10.252.1.9 self",
		"ip route del 10.244.3.0/24 proto 201",
		"ip route del 10.244.9.0/24 proto 201",
		"ip route replace 10.244.2.0/24 via 10.252.0.2 proto 201",
		"ip route replace 10.244.3.0/24 via 10.244.3.0 dev podnet.1 onlink proto 201",
	}, masquerade...)...)
}

func TestSyncEncapModesSkipTheLinkCheck(t *testing.T) {
	nodes := []*corev1.Node{node("cp", "10.252.0.1", "10.244.0.0/24"), node("w1", "10.252.0.2", "10.244.2.0/24")}
	for mode, want := range map[string][]string{
		encapNever: {"ip route replace 10.244.2.0/24 via 10.252.0.2 proto 201"},
		encapAlways: {
			"ip link add podnet.1 address 0e:70:0a:fc:00:01 mtu 1450 type vxlan id 1 dstport 4789 local 10.252.0.1 nolearning",
			"ip link set podnet.1 up",
			"ip address replace 10.244.0.0/32 dev podnet.1",
			"ip neighbour replace 10.244.2.0 lladdr 0e:70:0a:fc:00:02 dev podnet.1 nud permanent",
			"bridge fdb replace 0e:70:0a:fc:00:02 dev podnet.1 dst 10.252.0.2 self permanent",
			"ip route replace 10.244.2.0/24 via 10.244.2.0 dev podnet.1 onlink proto 201",
		},
	} {
		t.Run(mode, func(t *testing.T) {
			r := &recorder{} // no addresses: a link check would fail
			a := &agent{nodeName: "cp", masquerade: true, cniConf: filepath.Join(t.TempDir(), "c"), encap: mode, run: r.run}
			if err := a.sync(nodes); err != nil {
				t.Fatal(err)
			}
			r.expectCommands(t, append(want, masquerade...)...)
		})
	}
}

func TestSyncMakesTheDeviceAgainForANewAddress(t *testing.T) {
	r := &recorder{links: `[{"ifname":"eth0"},{"ifname":"podnet.1","linkinfo":{"info_data":{"local":"10.252.0.7"}}}]`}
	a := &agent{nodeName: "cp", masquerade: true, cniConf: filepath.Join(t.TempDir(), "c"), encap: encapAlways, run: r.run}
	if err := a.ensureVXLAN("10.252.0.1"); err != nil {
		t.Fatal(err)
	}
	r.expectCommands(t, "ip link del podnet.1",
		"ip link add podnet.1 address 0e:70:0a:fc:00:01 mtu 1450 type vxlan id 1 dstport 4789 local 10.252.0.1 nolearning",
		"ip link set podnet.1 up")

	r = &recorder{links: `[{"ifname":"podnet.1","linkinfo":{"info_data":{"local":"10.252.0.1"}}}]`}
	a.run = r.run
	if err := a.ensureVXLAN("10.252.0.1"); err != nil {
		t.Fatal(err)
	}
	r.expectCommands(t) // the device is right: nothing to do
}

func TestSyncFailsWhenNoInterfaceHoldsTheNodesAddress(t *testing.T) {
	r := &recorder{addresses: `[{"ifname":"eth0","addr_info":[{"local":"10.252.0.5","prefixlen":24}]}]`}
	a := &agent{nodeName: "cp", masquerade: true, cniConf: filepath.Join(t.TempDir(), "c"), encap: encapAuto, run: r.run}
	err := a.sync([]*corev1.Node{node("cp", "10.252.0.1", "10.244.0.0/24"), node("w1", "10.252.0.2", "10.244.2.0/24")})
	if err == nil || !strings.Contains(err.Error(), "no interface holds this node's address 10.252.0.1") {
		t.Errorf("err = %v", err)
	}
}

func TestOnLinkIsFalseForAHostRoute(t *testing.T) {
	r := &recorder{addresses: `[{"ifname":"eth0","addr_info":[{"local":"10.252.0.1","prefixlen":32}]}]`}
	a := &agent{encap: encapAuto, run: r.run}
	onLink, err := a.onLink("10.252.0.1")
	if err != nil {
		t.Fatal(err)
	}
	if onLink("10.252.0.2") {
		t.Error("a /32 address has no on-link peers")
	}
}

func TestVTEPAddressAndMAC(t *testing.T) {
	if got, err := vtepAddress("10.244.3.0/24"); err != nil || got != "10.244.3.0" {
		t.Errorf("vtepAddress = %q, %v", got, err)
	}
	if _, err := vtepAddress("fd00::/64"); err == nil {
		t.Error("an IPv6 CIDR was taken")
	}
	if got, err := vtepMAC("10.252.1.3"); err != nil || got != "0e:70:0a:fc:01:03" {
		t.Errorf("vtepMAC = %q, %v", got, err)
	}
	if _, err := vtepMAC("not-an-ip"); err == nil {
		t.Error("a bad address was taken")
	}
}

// TestSyncRoutesOnly is podnet on a hosting node of the tests' hosting
// cluster: no CNI file and no NAT, only the peers' routes.
func TestSyncRoutesOnly(t *testing.T) {
	r := &recorder{addresses: hostingLink}
	a := &agent{nodeName: "cp", encap: encapNever, run: r.run}
	err := a.sync([]*corev1.Node{node("cp", "10.252.0.1", "10.244.0.0/24"), node("w1", "10.252.0.2", "10.244.2.0/24")})
	if err != nil {
		t.Fatal(err)
	}
	r.expectCommands(t, "ip route replace 10.244.2.0/24 via 10.252.0.2 proto 201")
	if r.stdin != "" {
		t.Errorf("rules were written: %s", r.stdin)
	}
}
