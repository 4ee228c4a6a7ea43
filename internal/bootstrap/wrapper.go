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
	"path"
	"strconv"
	"strings"
	"time"
)

// The node container's wrapper: it installs the bootstrap unit, makes the
// container look like the one kind's images are made for (`docker run
// --privileged --cgroupns=private`), and execs the image's own entrypoint with
// systemd. A privileged container of a Kubernetes Pod differs from that in
// ways the image cannot tell by itself:
//   - on a cgroup v2 host it has no cgroup namespace: kind's entrypoint then
//     sees the host's whole hierarchy as its own, and its kubelet would create
//     /kubelet at the host's root. The wrapper enters a cgroup namespace of its
//     own and mounts /sys/fs/cgroup again, so the container's cgroup is the root.
//   - on a cgroup v1 host, systemd in the node mounts the hierarchies the
//     runtime did not scope (hugetlb, net_cls...) at the host's root, where the
//     kubelet would find its /kubelet missing and place containers at host
//     level; a kubelet drop-in unmounts them before every kubelet start.
//   - a hosting node whose bounding set lacks CAP_SYS_RESOURCE refuses the
//     lower oom_score_adj that containerd gives containers unless told not to
//     (restrict_oom_score_adj, which kind's entrypoint sets only in user
//     namespaces).
//   - a Pod is stopped within its termination grace period, while systemd
//     waits 90 s for each unit by default; a control plane's kube-apiserver
//     takes about 40 s on SIGTERM, so the grace period ran out and the node
//     was killed mid-shutdown. systemd gets a short stop timeout instead, so
//     it kills what is slow and still halts by itself, unmounting as it goes.
const (
	entrypointPath       = "/usr/local/bin/entrypoint"
	initPath             = "/sbin/init"
	cgroupMount          = "/sys/fs/cgroup"
	containerdConfigPath = "/etc/containerd/config.toml"
	kubeletDropInDir     = systemdUnitDir + "/kubelet.service.d"
	cgroupV1DropIn       = "05-capk-cgroup-v1.conf"
	cgroupV1FixPath      = "/usr/local/sbin/capk-unmount-unscoped-cgroups"
	managerDropInPath    = "/etc/systemd/system.conf.d/capk-stop-timeout.conf"
	capSysResource       = 24

	// fileHeredocDelimiter must never occur as a line of the files below.
	fileHeredocDelimiter = "CAPK_NODE_FILE"
)

// cgroupV1Fix unmounts every cgroup v1 hierarchy whose root is the host's;
// cgroupRoot is the cgroup mount, which only tests change.
func cgroupV1Fix(cgroupRoot string) string {
	return `#!/bin/sh
# Installed by the Cluster API provider's node wrapper; runs before every
# kubelet start on cgroup v1 hosts. systemd mounts the hierarchies the container
# runtime did not scope at the host's root of that hierarchy; unmount them.
[ -f ` + shellQuote(cgroupRoot+"/cgroup.controllers") + ` ] && exit 0
findmnt -rn -t cgroup -o TARGET,FSROOT | while read -r target fsroot; do
  [ "$fsroot" = / ] || continue
  umount "$target" && echo "capk: unmounted the unscoped cgroup hierarchy $target"
done
exit 0
`
}

var cgroupV1DropInUnit = `[Service]
ExecStartPre=` + cgroupV1FixPath + `
`

// NodeCommand is the node container's command: it installs the bootstrap unit
// and then starts the image's own entrypoint with systemd.
func NodeCommand() []string {
	return []string{"/bin/bash", "-c", wrapperScript("")}
}

// wrapperScript renders the node container's wrapper with every path it reads,
// writes or executes below root, which only tests set. It is idempotent and
// holds no secrets: the bootstrap script itself comes from the mounted Secret.
func wrapperScript(root string) string {
	return strings.Join([]string{
		"set -o errexit -o nounset -o pipefail",
		"root=" + shellQuote(root),
		installUnit(),
		restrictOOMScoreAdj(),
		shortenStopTimeout(),
		prepareCgroups(),
		`exec "${root}` + entrypointPath + `" ` + initPath,
	}, "\n") + "\n"
}

// installUnit writes the bootstrap unit and enables it. A relative link
// resolves both in the node and below a test root.
func installUnit() string {
	return strings.Join([]string{
		`unit_dir="${root}` + systemdUnitDir + `"`,
		`mkdir -p "${unit_dir}/` + wantsDir + `"`,
		`cat > "${unit_dir}/` + unitName + `" <<'` + unitHeredocDelimiter + `'`,
		unit + unitHeredocDelimiter,
		`ln -sfn "../` + unitName + `" "${unit_dir}/` + wantsDir + "/" + unitName + `"`,
	}, "\n")
}

// StopTimeout is how long systemd in a node waits for a unit to stop (and, at
// the end of its shutdown, for the processes left) before it kills them: well
// inside the node Pod's termination grace period.
const StopTimeout = 5 * time.Second

var managerDropIn = "[Manager]\nDefaultTimeoutStopSec=" + strconv.Itoa(int(StopTimeout.Seconds())) + "s\n"

// shortenStopTimeout writes the systemd manager drop-in with StopTimeout.
func shortenStopTimeout() string {
	return strings.Join([]string{
		`mkdir -p "${root}` + path.Dir(managerDropInPath) + `"`,
		`cat > "${root}` + managerDropInPath + `" <<'` + fileHeredocDelimiter + `'`,
		managerDropIn + fileHeredocDelimiter,
	}, "\n")
}

// restrictOOMScoreAdj turns containerd's restrict_oom_score_adj on when the
// bounding set lacks CAP_SYS_RESOURCE (an unreadable set counts as full).
func restrictOOMScoreAdj() string {
	config := `"${root}` + containerdConfigPath + `"`
	return strings.Join([]string{
		`capbnd=$(sed -n 's/^CapBnd:[[:space:]]*//p' "${root}/proc/self/status" 2>/dev/null || true)`,
		`if [ -f ` + config + ` ] && (( (16#${capbnd:-ffffffffff} >> ` + strconv.Itoa(capSysResource) + ` & 1) == 0 )); then`,
		`  sed -i 's/restrict_oom_score_adj = false/restrict_oom_score_adj = true/' ` + config,
		`fi`,
	}, "\n")
}

// prepareCgroups gives a cgroup v2 node a cgroup namespace of its own, with
// /sys/fs/cgroup mounted again inside it, and execs the entrypoint there; on
// cgroup v1 it installs the kubelet drop-in that unmounts unscoped hierarchies.
func prepareCgroups() string {
	remount := `umount "$1" && mount -t cgroup2 cgroup2 "$1" || ` +
		`{ echo "capk: cannot mount $1 again in a cgroup namespace of its own" >&2; exit 1; }; shift; exec "$@"`
	return strings.Join([]string{
		`if [ -f "${root}` + cgroupMount + `/cgroup.controllers" ]; then`,
		`  if [ "$(cat "${root}/proc/self/cgroup")" != "0::/" ]; then`,
		`    exec unshare --cgroup -- /bin/sh -c ` + shellQuote(remount) + ` capk-cgroupns "${root}` + cgroupMount + `" "${root}` + entrypointPath + `" ` + initPath,
		`  fi`,
		`else`,
		`  mkdir -p "${root}` + kubeletDropInDir + `" "${root}` + path.Dir(cgroupV1FixPath) + `"`,
		`  cat > "${root}` + cgroupV1FixPath + `" <<'` + fileHeredocDelimiter + `'`,
		cgroupV1Fix(cgroupMount) + fileHeredocDelimiter,
		`  chmod 0755 "${root}` + cgroupV1FixPath + `"`,
		`  cat > "${root}` + kubeletDropInDir + "/" + cgroupV1DropIn + `" <<'` + fileHeredocDelimiter + `'`,
		cgroupV1DropInUnit + fileHeredocDelimiter,
		`fi`,
	}, "\n")
}
