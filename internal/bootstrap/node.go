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

import "strconv"

// The node side of the bootstrap contract: where the node Pod finds the
// script, how it runs it exactly once, and how it reports the outcome.
const (
	// MountPath is where the bootstrap Secret is mounted in the node.
	MountPath = "/etc/capk/bootstrap"

	// ScriptKey is the key of the bootstrap Secret that holds the script.
	ScriptKey = "bootstrap.sh"

	// SentinelPath is the file CABPK's runcmd writes once kubeadm init or join
	// has succeeded (Cluster API's bootstrap contract). The rendered script
	// does not write it itself: CABPK's own "kubeadm ... && echo success >
	// SentinelPath" command does, so it means "kubeadm succeeded" and not
	// merely "the script ended".
	SentinelPath = "/run/cluster-api/bootstrap-success.complete"

	// FailedExitCode is the node container's exit code when the bootstrap
	// failed; with restartPolicy Never the Pod then turns Failed.
	FailedExitCode = 42

	// FailedMessage is the console line (so the Pod log line) that marks a
	// failed bootstrap.
	FailedMessage = "capk-bootstrap: failed"
)

const (
	unitName       = "capk-bootstrap.service"
	systemdUnitDir = "/etc/systemd/system"
	wantsDir       = "multi-user.target.wants"

	// unitHeredocDelimiter must never occur as a line of unit.
	unitHeredocDelimiter = "CAPK_BOOTSTRAP_UNIT"
)

// failureHook runs after the unit stops; "$$" is systemd's escape for "$".
var failureHook = `if [ "$$SERVICE_RESULT" != success ]; then echo "` + FailedMessage +
	`"; systemctl --no-block exit ` + strconv.Itoa(FailedExitCode) + `; fi`

// unit runs the bootstrap once. kind-import-images.service loads preloaded
// images on some node images; ordering after a missing unit is a no-op.
// ExecStartPost fails a script that exited 0 without the sentinel.
var unit = `[Unit]
Description=Cluster API bootstrap (runs once)
Wants=containerd.service
After=containerd.service kind-import-images.service
ConditionPathExists=!` + SentinelPath + `

[Service]
Type=oneshot
RemainAfterExit=yes
TimeoutStartSec=infinity
ExecStart=/bin/bash ` + MountPath + "/" + ScriptKey + `
ExecStartPost=/usr/bin/test -f ` + SentinelPath + `
ExecStopPost=/bin/bash -c '` + failureHook + `'
StandardOutput=journal+console
StandardError=journal+console

[Install]
WantedBy=multi-user.target
`
