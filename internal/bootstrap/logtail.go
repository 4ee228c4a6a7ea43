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
	"regexp"
	"strings"
)

var (
	// ansiEscape matches the terminal codes systemd writes to a tty console:
	// colours and cursor moves.
	ansiEscape = regexp.MustCompile(`\x1b(\[[0-9;?]*[A-Za-z]|[@-Z\\-_])`)
	// progressLine matches systemd's spinner while a job waits ("[ ***  ] Job
	// ... running (13s / no limit)"), which says nothing about a failure.
	progressLine = regexp.MustCompile(`^\[[ *]+\] (Job|A start job|A stop job) `)
	// secretFlag matches the values of kubeadm flags that carry credentials, as
	// they appear in the join command kubeadm init prints.
	secretFlag = regexp.MustCompile(`(--(?:token|certificate-key|discovery-token-ca-cert-hash)[ =])\S+`)
)

// FailureLog is what a condition or an event may show of a node's console log:
// its last n lines up to the bootstrap's failure line when there is one (what
// follows is systemd shutting the node down), without terminal codes, progress
// spinners or the credentials kubeadm prints.
func FailureLog(log string, n int) string {
	return redactSecrets(excerpt(log, n))
}

// excerpt is the last n lines of log up to its last FailedMessage line, without
// terminal codes and progress spinners.
func excerpt(log string, n int) string {
	log = ansiEscape.ReplaceAllString(strings.ReplaceAll(log, "\r", ""), "")
	var lines []string
	for _, line := range strings.Split(strings.Trim(log, "\n"), "\n") {
		if !progressLine.MatchString(line) {
			lines = append(lines, line)
		}
	}
	end := len(lines)
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.Contains(lines[i], FailedMessage) {
			end = i + 1
			break
		}
	}
	return strings.Join(lines[max(0, end-n):end], "\n")
}

// redactSecrets hides the credentials a node's log may hold.
func redactSecrets(log string) string {
	return secretFlag.ReplaceAllString(log, "${1}<redacted>")
}
