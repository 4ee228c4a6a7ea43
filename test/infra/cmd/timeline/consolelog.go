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
	"bufio"
	"io"
	"regexp"
	"strings"
	"time"
)

// ansiEscape matches the terminal codes systemd writes to its console.
var ansiEscape = regexp.MustCompile(`\x1b(\[[0-9;?]*[A-Za-z]|[@-Z\\-_])`)

// consoleMilestones reads a node Pod's console log as the API server serves
// it with timestamps ("<RFC 3339 time> <line>") and returns when systemd
// reached its basic target and when the bootstrap script began and
// finished (its progress lines, internal/bootstrap: "bootstrap: <step>").
// The first occurrence of each counts: a restarted container's later boot
// is not the one the machine waited for.
func consoleMilestones(log io.Reader) (Milestones, error) {
	found := Milestones{}
	scanner := bufio.NewScanner(log)
	scanner.Buffer(make([]byte, 64*1024), 1024*1024)
	for scanner.Scan() {
		stamp, line, ok := strings.Cut(scanner.Text(), " ")
		if !ok {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, stamp)
		if err != nil {
			continue
		}
		if milestone := consoleMilestone(strings.TrimRight(ansiEscape.ReplaceAllString(line, ""), "\r")); milestone != "" {
			if _, seen := found[milestone]; !seen {
				found[milestone] = at
			}
		}
	}
	return found, scanner.Err()
}

// consoleMilestone names the milestone a console line marks, if any. The
// script's lines may reach the console with a prefix (the unit's name), so
// "bootstrap: " is looked for anywhere in the line.
func consoleMilestone(line string) string {
	// basic.target, not multi-user.target: the bootstrap unit is part of
	// multi-user.target, which is reached only once the bootstrap ended.
	if strings.Contains(line, "Reached target") &&
		(strings.Contains(line, "basic.target") || strings.Contains(line, "Basic System")) {
		return SystemdBooted
	}
	_, step, ok := strings.Cut(line, "bootstrap: ")
	switch {
	case !ok || strings.HasPrefix(step, "failed"):
		return ""
	case step == "finished":
		return BootstrapEnded
	default:
		return BootstrapBegan
	}
}
