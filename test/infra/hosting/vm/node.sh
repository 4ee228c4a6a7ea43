#!/usr/bin/env bash
# Joins the cgroup v2 hosting node (issue 19, MULTI-NODE.md section 4) to the
# running hosting cluster: the VM of build.sh, booted under qemu's software
# CPU with a tap on the hosting bridge, runs kind's containerd 2.3 (systemd
# cgroup driver), the kubelet (cgroupDriver: systemd), kube-proxy and podnet
# as systemd units, and registers as Node <first node>-v2, labelled
# capk.test/cgroup=v2 and tainted capk.test/cgroup=v2:NoSchedule (no zone:
# it adds no failure domain, and only Pods that ask for it land there).
#
# Everything the node needs is on a second disk made here (label capk-node,
# the VM's /var/lib/capk): the programs, its identity (the hosting cluster's
# `up` issued it: CAPK_HOSTING_VM_NODE=1), the configuration, start.sh, and a
# containerd root with the images already unpacked, by a containerd on this
# host (unpacking a node image under the software CPU takes minutes).
#
# The hosting cluster's `down` stops the VM (its command line names the state
# folder) and its tap goes with it; the disks live in the state folder.
#
# usage: test/infra/hosting/vm/node.sh up [image.tar ...]   the images to preload
#                                                           (the pause image always)
#        test/infra/hosting/vm/node.sh down                 stop the VM, remove its
#                                                           Node and disks
#
# Environment:
#   CAPK_HOSTING_STATE    the hosting cluster's state folder [/var/lib/capk-hosting]
#   CAPK_VM_MEMORY        the VM's memory [4G]
#   CAPK_VM_JOIN_TIMEOUT  seconds to wait for the Node to be Ready [900]
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../../../.." && pwd)
S=${CAPK_HOSTING_STATE:-/var/lib/capk-hosting}
D=$S/vm
tree=$D/node # the node disk's files; the VM mounts them at $root
root=/var/lib/capk

log() { printf '[%s] vm node: %s\n' "$(date +%T)" "$*" >&2; }
die() { log "error: $*"; exit 1; }
kubectl_() { "$BIN/kubectl" --kubeconfig "$S/kubeconfig" "$@"; }

# shellcheck source=../nodes.sh
source "$here/../nodes.sh"
# shellcheck source=../processes.sh
source "$here/../processes.sh"

load() {
  [ -f "$S/env" ] || die "no hosting cluster at $S: run hosting-cluster.sh up (or env.sh up) first"
  # shellcheck disable=SC1091
  source "$S/env"
  [ "${VM_NODE:-0}" = 1 ] || die "the hosting cluster was started without CAPK_HOSTING_VM_NODE=1: the VM has no identity"
  use_vm_node
}

# stage_programs copies the node's programs: the hosting cluster's kubelet and
# kube-proxy, podnet, and kind's containerd, runc, crictl and CNI plugins.
stage_programs() {
  local programs=$1
  mkdir -p "$tree/bin" "$tree/cni/bin"
  cp "$BIN/kubelet" "$BIN/kube-proxy" "$TOOLS/podnet" "$tree/bin/"
  cp "$programs"/usr/local/bin/{containerd,containerd-shim-runc-v2,ctr,crictl} "$programs/usr/local/sbin/runc" "$tree/bin/"
  cp "$programs"/opt/cni/bin/* "$tree/cni/bin/"
}

# stage_identity copies what `up` issued for the node (pki -nodes) and the
# credentials kube-proxy and podnet share on every node.
stage_identity() {
  local p=$S/pki
  mkdir -p "$tree/pki"
  cp "$p/ca.crt" "$p/kubelet-server-$VM_NAME.crt" "$p/kubelet-server-$VM_NAME.key" \
    "$p/kubelet-$VM_NAME.kubeconfig" "$p/kube-proxy.kubeconfig" "$tree/pki/"
  chmod 0600 "$tree"/pki/*.key "$tree"/pki/*.kubeconfig
}

# containerd_config: kind's choices for a cgroup v2 node (SystemdCgroup), the
# hosting cluster's sandbox image, and the node disk's folders.
containerd_config() {
  cat <<EOF
version = 3
root = "$root/containerd"
state = "/run/containerd"
[grpc]
  address = "/run/containerd/containerd.sock"
[plugins.'io.containerd.cri.v1.images'.pinned_images]
  sandbox = "$PAUSE_IMAGE"
[plugins.'io.containerd.cri.v1.runtime'.cni]
  bin_dirs = ["$root/cni/bin"]
  conf_dir = "/etc/cni/net.d"
  # containerd renders this once the kubelet passes the Node's podCIDR.
  conf_template = "$root/etc/cni-template.conflist"
[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
  SystemdCgroup = true
  BinaryName = "$root/bin/runc"
EOF
}

# cni_template: kind's ptp links (the VM has no Pod bridge, so no hairpin
# to get right: a Pod reaching itself through a Service is routed).
cni_template() {
  cat <<EOF
{
  "cniVersion": "1.0.0",
  "name": "capk-hosting",
  "plugins": [
    {
      "type": "ptp", "ipMasq": false,
      "ipam": {"type": "host-local", "ranges": [[{"subnet": "{{.PodCIDR}}"}]], "routes": [{"dst": "0.0.0.0/0"}]}
    },
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
EOF
}

kubelet_config() {
  cat <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cgroupDriver: systemd
failSwapOn: false
containerRuntimeEndpoint: unix:///run/containerd/containerd.sock
address: $VM_IP
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
tlsCertFile: $root/pki/kubelet-server-$VM_NAME.crt
tlsPrivateKeyFile: $root/pki/kubelet-server-$VM_NAME.key
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $root/pki/ca.crt}
authorization: {mode: Webhook}
clusterDomain: cluster.local
evictionHard: {memory.available: 100Mi, nodefs.available: 1%, imagefs.available: 1%, nodefs.inodesFree: 1%}
imageGCHighThresholdPercent: 100
registerWithTaints: [{key: capk.test/cgroup, value: v2, effect: NoSchedule}]
EOF
}

kube_proxy_config() {
  cat <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: $root/pki/kube-proxy.kubeconfig}
mode: iptables
clusterCIDR: $CLUSTER_CIDR
hostnameOverride: $VM_NAME
nodePortAddresses: ["$VM_IP/32"]
EOF
}

# unit prints a systemd service for a node program; its output goes to the
# node disk's logs folder (debugfs reads it from the host after a failure).
unit() { # unit <name> <after> <command...>
  local name=$1 after=$2
  shift 2
  cat <<EOF
[Unit]
Description=capk hosting node: $name
After=network.target $after
Wants=$after
[Service]
Environment=PATH=$root/bin:/usr/sbin:/usr/bin:/sbin:/bin
ExecStart=$*
Restart=always
RestartSec=2
StandardOutput=append:$root/logs/$name.log
StandardError=inherit
EOF
}

stage_config() {
  mkdir -p "$tree/etc" "$tree/units" "$tree/logs"
  containerd_config >"$tree/etc/containerd.toml"
  cni_template >"$tree/etc/cni-template.conflist"
  kubelet_config >"$tree/etc/kubelet.yaml"
  kube_proxy_config >"$tree/etc/kube-proxy.yaml"
  {
    unit containerd "" "$root/bin/containerd --config $root/etc/containerd.toml"
    # As containerd's own unit: the shims and containers outlive a restart.
    printf 'Delegate=yes\nKillMode=process\nLimitNOFILE=infinity\nTasksMax=infinity\nOOMScoreAdjust=-999\n'
  } >"$tree/units/capk-containerd.service"
  unit kubelet capk-containerd.service "$root/bin/kubelet --config $root/etc/kubelet.yaml" \
    "--kubeconfig $root/pki/kubelet-$VM_NAME.kubeconfig --root-dir $root/kubelet" \
    "--hostname-override $VM_NAME --node-ip $VM_IP --node-labels capk.test/cgroup=v2" \
    >"$tree/units/capk-kubelet.service"
  unit kube-proxy "" "$root/bin/kube-proxy --config $root/etc/kube-proxy.yaml" >"$tree/units/capk-kube-proxy.service"
  unit podnet "" "$root/bin/podnet -kubeconfig $root/pki/kube-proxy.kubeconfig -node-name $VM_NAME" \
    "-cni-conf '' -masquerade=false -encap never" >"$tree/units/capk-podnet.service"
  printf 'NODE=%q\nIP=%q\nSERVICE_CIDR=%q\n' "$VM_NAME" "$VM_IP" "$SERVICE_CIDR" >"$tree/node.env"
  install -m 0755 "$here/start.sh" "$tree/start.sh"
}

# preload unpacks the images into the node disk's containerd root with kind's
# containerd on this host, as the VM's containerd will find them: the same
# root path relative to the disk, the k8s.io namespace, overlayfs snapshots.
preload() { # preload <programs> <image.tar...>
  local programs=$1 tar pid sock=$D/preload/containerd.sock
  shift
  mkdir -p "$D/preload"
  cat >"$D/preload/config.toml" <<EOF
version = 3
root = "$tree/containerd"
state = "$D/preload/state"
[grpc]
  address = "$sock"
EOF
  "$programs/usr/local/bin/containerd" --config "$D/preload/config.toml" >"$S/logs/vm-preload.log" 2>&1 9<&- &
  pid=$!
  for _ in $(seq 100); do
    "$programs/usr/local/bin/ctr" --address "$sock" version >/dev/null 2>&1 && break
    sleep 0.2
  done
  for tar in "$S/pause.tar" "$@"; do
    log "unpacking $(basename "$tar") into the node disk"
    "$programs/usr/local/bin/ctr" --address "$sock" --namespace k8s.io images import "$tar" \
      >/dev/null 2>>"$S/logs/vm-preload.log" ||
      { kill "$pid"; die "importing $tar failed; see $S/logs/vm-preload.log"; }
  done
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  # The preload's own mounts (none stay after import) and state are not the VM's.
  rm -rf "$D/preload"
}

# make_disk writes the node disk from the tree with room for the node Pods'
# containers and emptyDirs (sparse: only what is written takes space).
make_disk() {
  local mib
  mib=$(($(du -sm "$tree" | cut -f1) + ${CAPK_VM_NODE_DISK_EXTRA_MIB:-8192}))
  mkfs.ext4 -q -F -L capk-node -d "$tree" "$D/node.img" "${mib}M"
  rm -rf "$tree"
}

# boot starts qemu as a daemon of the hosting cluster: its command line names
# the state folder, so `down` stops it. The tap is qemu's (not persistent), so
# it goes with qemu; ifup.sh puts it on the bridge with hairpin mode, as
# nodes.sh does for the extra nodes' veths.
boot() {
  local vm=$1
  printf '#!/bin/sh\nip link set "$1" master %s up && bridge link set dev "$1" hairpin on\n' "$BRIDGE" >"$D/ifup.sh"
  chmod 0755 "$D/ifup.sh"
  # One host thread for both virtual CPUs: see smoke.sh. The root disk is a
  # snapshot (writes go to a temporary file in $D), so every boot starts from the build.
  TMPDIR=$D setsid qemu-system-x86_64 -machine q35 -accel tcg,thread=single -cpu max -smp 2 \
    -m "${CAPK_VM_MEMORY:-4G}" -kernel "$vm/vmlinuz" -initrd "$vm/initrd.img" \
    -append "root=/dev/vda rw console=ttyS0 systemd.unified_cgroup_hierarchy=1 net.ifnames=0 quiet" \
    -drive "file=$vm/disk.img,if=virtio,format=raw,snapshot=on" \
    -drive "file=$D/node.img,if=virtio,format=raw" \
    -netdev "tap,id=n0,ifname=capk-v2,script=$D/ifup.sh,downscript=no" -device virtio-net-pci,netdev=n0 \
    -display none -monitor none -serial "file:$S/logs/vm-v2.console" \
    </dev/null >"$S/logs/qemu-v2.log" 2>&1 9<&- &
  echo $! >"$S/pids/qemu-v2.pid"
}

# wait_ready prints when the VM reached multi-user (its report on the
# console), when its Node registered and when it was Ready.
wait_ready() {
  local start=$1 timeout=${CAPK_VM_JOIN_TIMEOUT:-900} booted="" registered="" status pid report runtime
  # kill -0, not pid_of: until setsid has run qemu, the PID's command line is
  # this script's, not one naming the state folder.
  pid=$(cat "$S/pids/qemu-v2.pid")
  while [ $((SECONDS - start)) -lt "$timeout" ]; do
    kill -0 "$pid" 2>/dev/null || { tail -n 30 "$S/logs/qemu-v2.log" "$S/logs/vm-v2.console" >&2; die "qemu exited"; }
    report=$(grep -a -o -m1 'CAPK-VM-REPORT .*' "$S/logs/vm-v2.console" 2>/dev/null | tr -d '\r' || true)
    if [ -z "$booted" ] && [ -n "$report" ]; then
      booted=$((SECONDS - start))
      log "multi-user after ${booted}s: $report"
      [[ "$report" == *" cgroupfs=cgroup2fs "* ]] || die "the VM is not on the unified cgroup hierarchy: $report"
    fi
    if grep -a -q 'Dependency failed for .*capk-node' "$S/logs/vm-v2.console" 2>/dev/null; then
      tail -40 "$S/logs/vm-v2.console" >&2
      die "the VM did not mount the node disk (label capk-node), so it cannot join"
    fi
    status=$(kubectl_ get node "$VM_NAME" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null || true)
    if [ -z "$registered" ] && [ -n "$status" ]; then
      registered=$((SECONDS - start))
      log "Node $VM_NAME registered after ${registered}s"
    fi
    if [ "$status" = True ] && [ -n "$booted" ]; then
      runtime=$(kubectl_ get node "$VM_NAME" -o jsonpath='{.status.nodeInfo.containerRuntimeVersion}')
      [[ "$runtime" == containerd://2.* ]] || die "Node $VM_NAME runs $runtime, not kind's containerd 2.x"
      log "Node $VM_NAME Ready after $((SECONDS - start))s (cgroup v2, $runtime)"
      return 0
    fi
    sleep 2
  done
  tail -40 "$S/logs/vm-v2.console" >&2
  die "Node $VM_NAME not Ready within ${timeout}s; the node's logs: debugfs -R 'ls /logs' $D/node.img"
}

up() {
  local vm programs start=$SECONDS
  load
  if pid_of qemu-v2 >/dev/null; then
    log "already running"
    return 0
  fi
  vm=$("$here/build.sh")
  programs=$("$repo/test/infra/builds/kind-base.sh")
  rm -rf "$D"
  mkdir -p "$tree"
  stage_programs "$programs"
  stage_identity
  stage_config
  preload "$programs" "$@"
  make_disk
  log "node disk ready after $((SECONDS - start))s; booting the VM"
  boot "$vm"
  wait_ready "$SECONDS"
}

# down stops the VM and removes its Node and its disks: the hosting cluster is
# as it was before `up` (the Pods bound to the Node go with it, by the pod
# garbage collector), and `up` can join it again. Under the software CPU even
# an idle VM keeps most of a host core busy.
down() {
  load
  stop_components qemu-v2
  kubectl_ delete node "$VM_NAME" --ignore-not-found --wait=false >/dev/null
  rm -rf "$D"
  log "VM stopped, Node $VM_NAME and the disks removed"
}

case "${1:-}" in
up) shift; up "$@" ;;
down) down ;;
*) die "usage: $0 up [image.tar ...] | down" ;;
esac
