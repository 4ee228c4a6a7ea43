#!/usr/bin/env bash
# Builds the disk of the cgroup v2 hosting node (issue 19, MULTI-NODE.md
# section 4): a Debian trixie system with its own kernel and systemd, booted
# by qemu with the unified cgroup hierarchy only, as users' hosting nodes run.
# This machine's kernel has only cgroup v1 controllers and its /dev/kvm boots
# no stock kernel, so the node is a VM under qemu's software CPU (TCG).
#
# Cached in ${CAPK_CACHE:-~/.cache/capk}/vm-trixie-<key>/, the key being the
# hash of this script and the package list: vmlinuz, initrd.img and disk.img
# (ext4 made from the tree with mkfs.ext4 -d, no loop mount). A warm call
# only prints the folder.
#
# usage: test/infra/hosting/vm/build.sh     prints the folder
#
# Environment:
#   CAPK_CACHE          cache root [~/.cache/capk]
#   CAPK_DEBIAN_MIRROR  Debian mirror for debootstrap [http://deb.debian.org/debian]
#   CAPK_VM_DISK_SIZE   size of disk.img [8G]
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${CAPK_CACHE:-$HOME/.cache/capk}
mirror=${CAPK_DEBIAN_MIRROR:-http://deb.debian.org/debian}
suite=trixie

# The node's own system: a kernel that boots under qemu (virtio disk and
# network are in Debian's initramfs), systemd with udev, and what a hosting
# node's kubelet, containerd and kube-proxy call.
packages=(
  linux-image-amd64 initramfs-tools systemd-sysv udev kmod dbus
  iproute2 iptables nftables conntrack ethtool socat ebtables
  mount util-linux e2fsprogs ca-certificates libseccomp2 procps
)

log() { printf '[%s] vm: %s\n' "$(date +%T)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

ensure_tools() {
  local missing=() tool
  for tool in debootstrap:debootstrap mkfs.ext4:e2fsprogs qemu-system-x86_64:qemu-system-x86; do
    command -v "${tool%%:*}" >/dev/null || missing+=("${tool#*:}")
  done
  [ -e /usr/share/debootstrap/scripts/$suite ] || [[ " ${missing[*]} " == *" debootstrap "* ]] || missing+=(debootstrap)
  [ ${#missing[@]} -eq 0 ] && return
  log "installing ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null ||
    { apt-get update >/dev/null &&
      DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null; }
  [ -e /usr/share/debootstrap/scripts/$suite ] || die "this debootstrap does not know $suite"
}

# configure makes the tree a bootable node: no password prompts, the serial
# console, the root file system, cgroup v2's controllers for the kubelet, the
# boot report (report.sh) that smoke.sh reads from the console, and the join:
# node.sh hands the node its programs, images and identity on a second disk
# (label capk-node, mounted at /var/lib/capk) whose start.sh a unit runs.
configure() {
  local r=$1
  echo "capk-vm" >"$r/etc/hostname"
  printf '/dev/vda / ext4 defaults 0 1\n' >"$r/etc/fstab"
  # udev names the disk by its label late under the software CPU: once more
  # than 20 s after the unit began waiting (2026-12-07), so it waits 5 minutes.
  printf 'LABEL=capk-node /var/lib/capk ext4 defaults,nofail,x-systemd.device-timeout=5min 0 2\n' >>"$r/etc/fstab"
  mkdir -p "$r/var/lib/capk"
  cat >"$r/etc/systemd/system/capk-node.service" <<'EOF'
[Unit]
Description=Join the hosting cluster with the programs of the node disk
ConditionPathExists=/var/lib/capk/start.sh
RequiresMountsFor=/var/lib/capk
[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/var/lib/capk/start.sh
StandardOutput=journal+console
StandardError=journal+console
[Install]
WantedBy=multi-user.target
EOF
  : >"$r/etc/machine-id"
  # Nothing of the node leaves the machine: no resolver, no default route.
  : >"$r/etc/resolv.conf"
  install -m 0755 "$here/report.sh" "$r/usr/local/bin/capk-vm-report"
  cat >"$r/etc/systemd/system/capk-vm-report.service" <<'EOF'
[Unit]
Description=Report the node's cgroup hierarchy and boot time on the console
After=multi-user.target
[Service]
Type=oneshot
ExecStart=/usr/local/bin/capk-vm-report
StandardOutput=journal+console
[Install]
WantedBy=multi-user.target
EOF
  systemctl --root="$r" enable capk-vm-report.service capk-node.service serial-getty@ttyS0.service >/dev/null 2>&1
  # A root login on the console, for a person debugging the node (no network).
  chroot "$r" passwd -d root >/dev/null
}

# kernel_files copies the newest kernel and initrd of the tree next to the disk.
kernel_files() {
  local r=$1 out=$2 vmlinuz initrd
  vmlinuz=$(find "$r/boot" -name 'vmlinuz-*' | sort -V | tail -1)
  initrd=$(find "$r/boot" -name 'initrd.img-*' | sort -V | tail -1)
  [ -n "$vmlinuz" ] && [ -n "$initrd" ] || die "no kernel or initrd in $r/boot"
  cp "$vmlinuz" "$out/vmlinuz"
  cp "$initrd" "$out/initrd.img"
}

main() {
  local key out tree
  key=$({ echo "$suite ${packages[*]}"; cat "${BASH_SOURCE[0]}" "$here/report.sh"; } | sha256sum | cut -c1-12)
  out=$cache/vm-$suite-$key
  if [ -f "$out/disk.img" ]; then
    echo "$out"
    return
  fi
  ensure_tools
  rm -rf "$out" "$out.partial"
  mkdir -p "$out.partial"
  tree=$out.partial/rootfs
  log "debootstrap $suite with a kernel into $tree (a few minutes)"
  debootstrap --variant=minbase --include="$(IFS=,; echo "${packages[*]}")" "$suite" "$tree" "$mirror" \
    >"$out.partial/debootstrap.log" 2>&1 || die "debootstrap failed, see $out.partial/debootstrap.log"
  configure "$tree"
  kernel_files "$tree" "$out.partial"
  chroot "$tree" apt-get clean -y
  rm -rf "$tree"/var/lib/apt/lists/* "$tree"/usr/share/doc/* "$tree"/usr/share/man/*
  log "disk.img (${CAPK_VM_DISK_SIZE:-8G}, sparse) from the tree"
  mkfs.ext4 -q -F -L capk-vm -d "$tree" "$out.partial/disk.img" "${CAPK_VM_DISK_SIZE:-8G}"
  rm -rf "$tree"
  mv "$out.partial" "$out"
  echo "$out"
}

main "$@"
