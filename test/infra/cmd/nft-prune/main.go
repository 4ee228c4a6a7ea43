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

// Command nft-prune lists the iptables-nft tables of the machine (-list) and
// deletes those that were not in such a list and are now empty (-keep FILE).
//
// Why: with Debian's default iptables-nft backend, the first iptables call of
// the kubelet or kube-proxy creates the nf_tables tables "ip filter", "ip nat",
// ... Removing the KUBE-* chains leaves them behind, empty; `iptables` has no
// command to delete a table and the nft CLI is not installed, so this does it
// through netlink. A table is only deleted when it has nothing but base
// chains without rules and no sets, so nobody else's rules are ever touched.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/google/nftables"
)

// iptablesTables are the names iptables-nft gives its tables; others are not ours.
var iptablesTables = map[string]bool{"filter": true, "nat": true, "mangle": true, "raw": true, "security": true}

var families = map[nftables.TableFamily]string{nftables.TableFamilyIPv4: "ip", nftables.TableFamilyIPv6: "ip6"}

func main() {
	list := flag.Bool("list", false, "print the iptables tables that exist, one \"family name\" a line")
	keep := flag.String("keep", "", "file written by -list earlier: delete empty tables not named in it")
	flag.Parse()
	var err error
	switch {
	case *list:
		err = printTables()
	case *keep != "":
		err = prune(*keep)
	default:
		fmt.Fprintln(os.Stderr, "nft-prune: give -list or -keep FILE")
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "nft-prune:", err)
		os.Exit(1)
	}
}

// openTables connects to nftables and lists the tables iptables-nft creates.
func openTables() (*nftables.Conn, []*nftables.Table, error) {
	c, err := nftables.New()
	if err != nil {
		return nil, nil, err
	}
	all, err := c.ListTables()
	if err != nil {
		return nil, nil, err
	}
	var out []*nftables.Table
	for _, t := range all {
		if _, ok := families[t.Family]; ok && iptablesTables[t.Name] {
			out = append(out, t)
		}
	}
	return c, out, nil
}

func key(t *nftables.Table) string { return families[t.Family] + " " + t.Name }

func printTables() error {
	_, ts, err := openTables()
	if err != nil {
		return err
	}
	for _, t := range ts {
		fmt.Println(key(t))
	}
	return nil
}

func prune(keepFile string) error {
	keep, err := readKeep(keepFile)
	if err != nil {
		return err
	}
	c, ts, err := openTables()
	if err != nil {
		return err
	}
	for _, t := range ts {
		if keep[key(t)] {
			continue
		}
		empty, err := isEmpty(c, t)
		if err != nil {
			return err
		}
		if !empty {
			fmt.Fprintf(os.Stderr, "nft-prune: keeping %s: it still has rules\n", key(t))
			continue
		}
		c.DelTable(t)
		fmt.Printf("deleted table %s\n", key(t))
	}
	return c.Flush()
}

func readKeep(path string) (map[string]bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }() // read only
	keep := map[string]bool{}
	s := bufio.NewScanner(f)
	for s.Scan() {
		if line := strings.TrimSpace(s.Text()); line != "" {
			keep[line] = true
		}
	}
	return keep, s.Err()
}

// isEmpty: only base chains (the ones iptables-nft creates with the table),
// none with a rule, and no sets.
func isEmpty(c *nftables.Conn, t *nftables.Table) (bool, error) {
	chains, err := c.ListChainsOfTableFamily(t.Family)
	if err != nil {
		return false, err
	}
	for _, ch := range chains {
		if ch.Table.Name != t.Name {
			continue
		}
		if ch.Hooknum == nil {
			return false, nil
		}
		rules, err := c.GetRules(t, ch)
		if err != nil {
			return false, err
		}
		if len(rules) > 0 {
			return false, nil
		}
	}
	sets, err := c.GetSets(t)
	if err != nil {
		return false, err
	}
	return len(sets) == 0, nil
}
