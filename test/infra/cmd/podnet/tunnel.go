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
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"
)

// Peers whose node address is not on this node's link (node Pods on two
// hosting nodes, whose Pod network routes each node's own subnet) are reached
// through a VXLAN device, as flannel's vxlan backend does: every node's VTEP
// is the first address of its pod CIDR, with a MAC address made from its
// node address, so nothing needs to be published on the Node objects.
const (
	vxlanDevice = "podnet.1"
	vxlanID     = "1"
	vxlanPort   = "4789"
	// vxlanMTU leaves room for the VXLAN header (50 bytes) on a 1500-byte link;
	// pods get it whatever the mode, so a pod made before a tunnelled peer
	// joined needs no change.
	vxlanMTU = 1450
)

// Encapsulation modes (-encap).
const (
	encapAuto   = "auto"
	encapAlways = "always"
	encapNever  = "never"
)

var encapModes = []string{encapAuto, encapAlways, encapNever}

// vtepAddress is the VTEP address of the node that owns cidr: its first address.
func vtepAddress(cidr string) (string, error) {
	prefix, err := netip.ParsePrefix(cidr)
	if err != nil || !prefix.Addr().Is4() {
		return "", fmt.Errorf("pod CIDR %q is not an IPv4 CIDR", cidr)
	}
	return prefix.Masked().Addr().String(), nil
}

// vtepMAC is the VXLAN device's MAC address of the node with this address: a
// locally administered unicast address that ends with the IPv4 address.
func vtepMAC(nodeIP string) (string, error) {
	ip, err := netip.ParseAddr(nodeIP)
	if err != nil || !ip.Is4() {
		return "", fmt.Errorf("node address %q is not an IPv4 address", nodeIP)
	}
	b := ip.As4()
	return fmt.Sprintf("0e:70:%02x:%02x:%02x:%02x", b[0], b[1], b[2], b[3]), nil
}

// onLink tells, for a peer's node address, whether this node reaches it
// directly: in "auto" mode, when it lies in the subnet of the interface that
// holds this node's address (a /32 has no on-link peers).
func (a *agent) onLink(ownIP string) (func(string) bool, error) {
	switch a.encap {
	case encapNever:
		return func(string) bool { return true }, nil
	case encapAlways:
		return func(string) bool { return false }, nil
	}
	out, err := a.run(nil, "ip", "-json", "-4", "address", "show")
	if err != nil {
		return nil, err
	}
	var links []struct {
		AddrInfo []struct {
			Local     string `json:"local"`
			PrefixLen int    `json:"prefixlen"`
		} `json:"addr_info"`
	}
	if err := unmarshalList(out, &links, "addresses"); err != nil {
		return nil, err
	}
	for _, l := range links {
		for _, addr := range l.AddrInfo {
			if addr.Local != ownIP {
				continue
			}
			subnet, err := netip.ParsePrefix(fmt.Sprintf("%s/%d", addr.Local, addr.PrefixLen))
			if err != nil {
				return nil, fmt.Errorf("reading this node's address: %w", err)
			}
			return func(ip string) bool {
				peer, err := netip.ParseAddr(ip)
				return err == nil && subnet.Bits() < 32 && subnet.Masked().Contains(peer)
			}, nil
		}
	}
	return nil, fmt.Errorf("no interface holds this node's address %s", ownIP)
}

// syncTunnel makes the VXLAN device, its address, and one neighbour and one
// forwarding entry per tunnelled peer (CIDR -> node address), and removes
// the entries of peers that left.
func (a *agent) syncTunnel(ownCIDR, ownIP string, peers map[string]string) error {
	if err := a.ensureVXLAN(ownIP); err != nil {
		return err
	}
	vtep, err := vtepAddress(ownCIDR)
	if err != nil {
		return err
	}
	if _, err := a.run(nil, "ip", "address", "replace", vtep+"/32", "dev", vxlanDevice); err != nil {
		return err
	}
	wantNeigh, wantFDB := map[string]bool{}, map[string]bool{}
	for _, cidr := range slices.Sorted(maps.Keys(peers)) {
		peerVTEP, err := vtepAddress(cidr)
		if err != nil {
			return err
		}
		mac, err := vtepMAC(peers[cidr])
		if err != nil {
			return err
		}
		if _, err := a.run(nil, "ip", "neighbour", "replace", peerVTEP, "lladdr", mac, "dev", vxlanDevice,
			"nud", "permanent"); err != nil {
			return err
		}
		if _, err := a.run(nil, "bridge", "fdb", "replace", mac, "dev", vxlanDevice, "dst", peers[cidr],
			"self", "permanent"); err != nil {
			return err
		}
		wantNeigh[peerVTEP], wantFDB[mac+" "+peers[cidr]] = true, true
	}
	return a.pruneTunnel(wantNeigh, wantFDB)
}

// ensureVXLAN creates the device, or creates it again when it exists with
// another local address (the node Pod got a new one).
func (a *agent) ensureVXLAN(ownIP string) error {
	mac, err := vtepMAC(ownIP)
	if err != nil {
		return err
	}
	out, err := a.run(nil, "ip", "-json", "-details", "link", "show")
	if err != nil {
		return err
	}
	var links []struct {
		Name     string `json:"ifname"`
		LinkInfo struct {
			Data struct {
				Local string `json:"local"`
			} `json:"info_data"`
		} `json:"linkinfo"`
	}
	if err := unmarshalList(out, &links, "links"); err != nil {
		return err
	}
	for _, l := range links {
		if l.Name != vxlanDevice {
			continue
		}
		if l.LinkInfo.Data.Local == ownIP {
			return nil
		}
		if _, err := a.run(nil, "ip", "link", "del", vxlanDevice); err != nil {
			return err
		}
	}
	if _, err := a.run(nil, "ip", "link", "add", vxlanDevice, "address", mac, "mtu", fmt.Sprint(vxlanMTU),
		"type", "vxlan", "id", vxlanID, "dstport", vxlanPort, "local", ownIP, "nolearning"); err != nil {
		return err
	}
	_, err = a.run(nil, "ip", "link", "set", vxlanDevice, "up")
	return err
}

// pruneTunnel removes the neighbour and forwarding entries of peers that left.
func (a *agent) pruneTunnel(wantNeigh, wantFDB map[string]bool) error {
	out, err := a.run(nil, "ip", "-json", "neighbour", "show", "dev", vxlanDevice)
	if err != nil {
		return err
	}
	var neighbours []struct {
		Dst string `json:"dst"`
	}
	if err := unmarshalList(out, &neighbours, "neighbours"); err != nil {
		return err
	}
	for _, n := range neighbours {
		if !wantNeigh[n.Dst] {
			if _, err := a.run(nil, "ip", "neighbour", "del", n.Dst, "dev", vxlanDevice); err != nil {
				return err
			}
		}
	}
	out, err = a.run(nil, "bridge", "-json", "fdb", "show", "dev", vxlanDevice)
	if err != nil {
		return err
	}
	var entries []struct {
		MAC string `json:"mac"`
		Dst string `json:"dst"`
	}
	if err := unmarshalList(out, &entries, "forwarding entries"); err != nil {
		return err
	}
	for _, e := range entries {
		if e.Dst != "" && !wantFDB[strings.ToLower(e.MAC)+" "+e.Dst] {
			if _, err := a.run(nil, "bridge", "fdb", "del", e.MAC, "dev", vxlanDevice, "dst", e.Dst, "self"); err != nil {
				return err
			}
		}
	}
	return nil
}
