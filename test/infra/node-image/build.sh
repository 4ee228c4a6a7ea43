#!/usr/bin/env bash
# Builds the offline node image: Debian bookworm with systemd, containerd, runc,
# the CNI plugins, kubelet, kubeadm and kubectl, and the images kubeadm needs
# (control plane, etcd, kube-proxy, CoreDNS, pause) and the pod network podnet
# (test/infra/podnet) preloaded as tarballs under
# /kind/images, imported at boot. No container engine and no registry: the
# rootfs comes from debootstrap, every binary is built from the Go module proxy,
# and the images are assembled by test/infra/cmd/oci-image.
#
# usage: test/infra/node-image/build.sh        prints the OCI tarball's path
#
# Environment (defaults in brackets):
#   CAPK_CACHE          cache root for binaries, the rootfs and the image [~/.cache/capk]
#   CAPK_NODE_IMAGE     reference of the image [localhost/capk-node:<Kubernetes version>]
#   CAPK_DEBIAN_MIRROR  Debian mirror for debootstrap [http://deb.debian.org/debian]
#   CAPK_KUBE_WRAPPER   Kubernetes release, a wrapper module under hack/tools/ [kubernetes];
#                       kubernetes-previous is the minor before, for the upgrade test
#   CAPK_NODE_PAUSE_IMAGES  more references the pause image is preloaded as, besides
#                       kubeadm's [registry.k8s.io/pause:3.10.1: Cluster API v1.14's e2e
#                       framework runs its drain workloads with it; there is no registry]
#
# Everything is cached: the rootfs by a hash of its package list and of this
# script, the image by a hash of its inputs. A warm call only hashes.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../../.." && pwd)
cache=${CAPK_CACHE:-$HOME/.cache/capk}
mirror=${CAPK_DEBIAN_MIRROR:-http://deb.debian.org/debian}
suite=bookworm
# Packages of the node; the kube-proxy image reuses the same rootfs.
packages=(systemd systemd-sysv dbus iproute2 iptables nftables conntrack ethtool socat ebtables
  ca-certificates procps kmod util-linux mount bash libseccomp2 pigz
  containerd runc containernetworking-plugins)

log() { printf '[%s] node-image: %s\n' "$(date +%T)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

hash_of() { sha256sum | cut -c1-12; }

# ---------------------------------------------------------------- inputs

binaries() {
  BIN=$("$repo/hack/kube-binaries.sh" etcd kube-apiserver kube-controller-manager kube-scheduler kube-proxy \
    kubelet kubeadm kubectl)
  COREDNS_BIN=$("$repo/test/infra/builds/coredns.sh")
  TOOLS=$("$here/../tools.sh")
  KUBE_VERSION=$("$BIN/kubeadm" version -o short)
  IMAGE=${CAPK_NODE_IMAGE:-localhost/capk-node:$KUBE_VERSION}
  PODNET_IMAGE=$(sed -n 's/^ *image: *//p' "$here/../podnet/podnet.yaml")
  PAUSE_IMAGES=${CAPK_NODE_PAUSE_IMAGES-registry.k8s.io/pause:3.10.1}
}

# kubeadm_images sets IMAGES to what `kubeadm init` of this release pulls.
kubeadm_images() {
  mapfile -t IMAGES < <("$BIN/kubeadm" config images list --kubernetes-version "$KUBE_VERSION")
  [ ${#IMAGES[@]} -ge 6 ] || die "kubeadm listed ${#IMAGES[@]} images: ${IMAGES[*]}"
}

image_for() { # image_for <repository suffix>: the kubeadm image ending in it
  local i
  for i in "${IMAGES[@]}"; do
    [[ "${i%:*}" == */"$1" ]] && { echo "$i"; return; }
  done
  die "kubeadm lists no $1 image"
}

# ---------------------------------------------------------------- rootfs

ensure_debootstrap() {
  command -v debootstrap >/dev/null && return
  log "installing debootstrap"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends debootstrap >/dev/null
}

# rootfs sets ROOTFS to a cached Debian tree and BASE_TAR to it as a layer.
rootfs() {
  local key
  key=$({ echo "$suite ${packages[*]}"; sed -n '/^# -* rootfs$/,/^# -* images$/p' "${BASH_SOURCE[0]}"; } | hash_of)
  ROOTFS=$cache/node-rootfs-$suite-$key
  BASE_TAR=$ROOTFS.tar
  [ -f "$BASE_TAR" ] && return
  ensure_debootstrap
  rm -rf "$ROOTFS" "$ROOTFS.partial"
  log "debootstrap $suite into $ROOTFS (about 2 minutes)"
  debootstrap --variant=minbase --include="$(IFS=,; echo "${packages[*]}")" "$suite" "$ROOTFS.partial" "$mirror" \
    >"$cache/node-rootfs.log" 2>&1 || die "debootstrap failed, see $cache/node-rootfs.log"
  trim_rootfs "$ROOTFS.partial"
  mv "$ROOTFS.partial" "$ROOTFS"
  tar --numeric-owner --xattrs -C "$ROOTFS" -cf "$BASE_TAR.partial" .
  mv "$BASE_TAR.partial" "$BASE_TAR"
}

# trim_rootfs leaves systemd only what a container needs, the way kind's node
# image does: no udev, no gettys, no tmpfiles setup at boot, empty machine-id.
trim_rootfs() {
  local r=$1
  chroot "$r" apt-get clean
  rm -rf "$r"/var/lib/apt/lists/* "$r"/var/cache/apt/* "$r"/usr/share/doc/* "$r"/usr/share/man/*
  find "$r/lib/systemd/system/sysinit.target.wants/" -name 'systemd-tmpfiles-setup.service' -delete
  rm -f "$r"/lib/systemd/system/multi-user.target.wants/* "$r"/etc/systemd/system/*.wants/* \
    "$r"/lib/systemd/system/local-fs.target.wants/* "$r"/lib/systemd/system/sockets.target.wants/*udev* \
    "$r"/lib/systemd/system/sockets.target.wants/*initctl* "$r"/lib/systemd/system/basic.target.wants/*
  echo "ReadKMsg=no" >>"$r/etc/systemd/journald.conf"
  ln -sf /dev/null "$r/etc/systemd/system/getty@tty1.service"
  ln -sf /dev/null "$r/etc/systemd/system/console-getty.service"
  : >"$r/etc/machine-id"
  : >"$r/etc/resolv.conf"
  # containerd ships enabled in Debian; keep it enabled in the node
  mkdir -p "$r/etc/systemd/system/multi-user.target.wants"
  ln -sf /lib/systemd/system/containerd.service "$r/etc/systemd/system/multi-user.target.wants/containerd.service"
}

# ---------------------------------------------------------------- images

# component_images writes the preloaded images into $1.
component_images() {
  local dir=$1 b
  mkdir -p "$dir"
  for b in kube-apiserver kube-controller-manager kube-scheduler; do
    static_image "$(image_for "$b")" "$BIN/$b" "$dir/$b.tar"
  done
  static_image "$(image_for etcd)" "$BIN/etcd" "$dir/etcd.tar"
  debian_image "$(image_for kube-proxy)" "$BIN/kube-proxy" "$dir/kube-proxy.tar"
  debian_image "$PODNET_IMAGE" "$TOOLS/podnet" "$dir/podnet.tar"
  "$TOOLS/oci-image" -ref "$(image_for coredns)" -out "$dir/coredns.tar" -file "$COREDNS_BIN:/coredns:0755" \
    -entrypoint '["/coredns"]'
  pause_image "$(image_for pause)" "$dir/pause.tar"
  local ref
  for ref in $PAUSE_IMAGES; do
    [ "$ref" = "$(image_for pause)" ] || pause_image "$ref" "$dir/pause-${ref##*:}.tar"
  done
}

pause_image() { # pause_image <ref> <out>
  "$TOOLS/oci-image" -ref "$1" -out "$2" -file "$TOOLS/pause:/pause:0755" \
    -entrypoint '["/pause"]' -user 65535:65535
}

# static_image: kubeadm's manifests run the component by name, so the binary
# goes to /usr/local/bin on the PATH.
static_image() { # static_image <ref> <binary> <out>
  "$TOOLS/oci-image" -ref "$1" -out "$3" -file "$2:/usr/local/bin/$(basename "$2"):0755" \
    -env PATH=/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
}

# debian_image: kube-proxy and podnet run iptables and ip, so they need a
# Debian userland; the node's rootfs without the node's own programs serves.
debian_image() { # debian_image <ref> <binary> <out>
  local base=$WORK/debian-base.tar
  [ -f "$base" ] || tar --numeric-owner -C "$ROOTFS" --exclude=./usr/bin/containerd\* --exclude=./usr/bin/ctr \
    --exclude=./usr/sbin/runc --exclude=./usr/lib/cni --exclude=./usr/share/locale -cf "$base" .
  "$TOOLS/oci-image" -ref "$1" -out "$3" -layer "$base" -file "$2:/usr/local/bin/$(basename "$2"):0755" \
    -env PATH=/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
}

# ---------------------------------------------------------------- node layer

# node_layer writes the layer on top of the rootfs: the files of rootfs/, the
# Kubernetes binaries and the preloaded images.
node_layer() {
  local tree=$WORK/node
  mkdir -p "$tree/usr/bin" "$tree/kind/images" "$tree/etc/kubernetes/manifests" "$tree/var/lib/kubelet" \
    "$tree/etc/systemd/system/multi-user.target.wants"
  cp -a "$here/rootfs/." "$tree/"
  sed -i "s|@PAUSE_IMAGE@|$(image_for pause)|" "$tree/etc/containerd/config.toml"
  local unit
  for unit in kubelet.service kind-import-images.service; do
    ln -sf "/etc/systemd/system/$unit" "$tree/etc/systemd/system/multi-user.target.wants/$unit"
  done
  cp "$BIN/kubelet" "$BIN/kubeadm" "$BIN/kubectl" "$tree/usr/bin/"
  component_images "$tree/kind/images"
  echo "$KUBE_VERSION" >"$tree/kind/version"
  tar --numeric-owner --owner=0 --group=0 -C "$tree" -cf "$WORK/node.tar" .
}

main() {
  # debootstrap (network and dpkg, little CPU) runs while the binaries build
  rootfs &
  local rootfs_pid=$!
  binaries
  kubeadm_images
  wait "$rootfs_pid" || die "building the Debian rootfs failed"
  rootfs # built by now: only sets ROOTFS and BASE_TAR
  local key out
  key=$({ cat "${BASH_SOURCE[0]}"; (cd "$here/rootfs" && find . -type f -print0 | sort -z | xargs -0 sha256sum);
    echo "$IMAGE $PODNET_IMAGE $BASE_TAR ${IMAGES[*]} $PAUSE_IMAGES $TOOLS"; sha256sum "$BIN"/* "$COREDNS_BIN"; } | hash_of)
  out=$cache/node-image-$KUBE_VERSION-$key.tar
  if [ ! -f "$out" ]; then
    WORK=$(mktemp -d "$cache/.node-image.XXXXXX")
    trap 'rm -rf "$WORK"' EXIT
    log "building $IMAGE"
    node_layer
    "$TOOLS/oci-image" -ref "$IMAGE" -out "$out" -layer "$BASE_TAR" -layer "$WORK/node.tar" \
      -entrypoint '["/usr/local/bin/entrypoint","/sbin/init"]' -env container=docker -stop-signal 'SIGRTMIN+3'
    log "wrote $out ($(du -h "$out" | cut -f1))"
  fi
  echo "$out"
}

main
