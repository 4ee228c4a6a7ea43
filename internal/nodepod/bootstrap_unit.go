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

package nodepod

import "strings"

const (
	// BootstrapMountPath is where the bootstrap Secret is mounted in the node.
	BootstrapMountPath = "/etc/capk/bootstrap"

	// BootstrapScriptKey is the key of the bootstrap Secret that holds the script.
	BootstrapScriptKey = "bootstrap.sh"

	// BootstrapFailedExitCode is the node container's exit code when the bootstrap
	// failed; with restartPolicy Never the Pod then turns Failed.
	BootstrapFailedExitCode = 42

	// SentinelPath is the file the bootstrap data writes once it succeeded (the
	// Cluster API bootstrap contract).
	SentinelPath = "/run/cluster-api/bootstrap-success.complete"

	// BootstrapFailedMessage is the console line (so the Pod log line) that
	// marks a failed bootstrap.
	BootstrapFailedMessage = "capk-bootstrap: failed"
)

const (
	bootstrapUnitName = "capk-bootstrap.service"
	systemdUnitDir    = "/etc/systemd/system"
	wantsDir          = "multi-user.target.wants"
	entrypointPath    = "/usr/local/bin/entrypoint"
	initPath          = "/sbin/init"

	// failureHook runs after the unit stops; "$$" is systemd's escape for "$",
	// and exit 42 is BootstrapFailedExitCode (a test keeps them equal).
	failureHook = `if [ "$$SERVICE_RESULT" != success ]; then echo "` + BootstrapFailedMessage +
		`"; systemctl --no-block exit 42; fi`

	// bootstrapUnit runs the bootstrap once. kind-import-images.service loads
	// preloaded images on some node images; ordering after a missing unit is a
	// no-op. ExecStartPost fails a script that exited 0 without the sentinel.
	bootstrapUnit = `[Unit]
Description=Cluster API bootstrap (runs once)
Wants=containerd.service
After=containerd.service kind-import-images.service
ConditionPathExists=!` + SentinelPath + `

[Service]
Type=oneshot
RemainAfterExit=yes
TimeoutStartSec=infinity
ExecStart=/bin/bash ` + BootstrapMountPath + "/" + BootstrapScriptKey + `
ExecStartPost=/usr/bin/test -f ` + SentinelPath + `
ExecStopPost=/bin/bash -c '` + failureHook + `'
StandardOutput=journal+console
StandardError=journal+console

[Install]
WantedBy=multi-user.target
`

	// unitHeredocDelimiter must never occur as a line of bootstrapUnit.
	unitHeredocDelimiter = "CAPK_BOOTSTRAP_UNIT"
)

// nodeCommand is the node container's command: it installs the bootstrap unit
// and then starts the image's own entrypoint with systemd.
func nodeCommand() []string {
	return []string{"/bin/bash", "-c", wrapperScript("")}
}

// wrapperScript renders the node container's wrapper with every path it writes
// or executes below root, which only tests set. It is idempotent and holds no
// secrets: the bootstrap script itself comes from the mounted Secret.
func wrapperScript(root string) string {
	unitDir := shellQuote(root + systemdUnitDir)
	return strings.Join([]string{
		"set -o errexit -o nounset -o pipefail",
		"unit_dir=" + unitDir,
		`mkdir -p "${unit_dir}/` + wantsDir + `"`,
		`cat > "${unit_dir}/` + bootstrapUnitName + `" <<'` + unitHeredocDelimiter + `'`,
		bootstrapUnit + unitHeredocDelimiter,
		// A relative link resolves both in the node and below a test root.
		`ln -sfn "../` + bootstrapUnitName + `" "${unit_dir}/` + wantsDir + "/" + bootstrapUnitName + `"`,
		"exec " + shellQuote(root+entrypointPath) + " " + initPath,
	}, "\n") + "\n"
}

// shellQuote quotes s as one single-quoted bash word.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
