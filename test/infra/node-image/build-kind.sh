#!/usr/bin/env bash
# Builds the node image users run, kindest/node, from kind's own recipe and
# without a container engine or a registry: kind's base image
# (sigs.k8s.io/kind images/base: its Dockerfile's packages and steps, its files
# byte for byte, read from the kind module at build time) on Debian trixie by
# debootstrap, the programs that Dockerfile builds (test/infra/builds/kind-base.sh),
# and what `kind build node-image` adds: kubeadm, kubelet and kubectl in
# /usr/bin, /kind/version, and the images kubeadm needs imported into the
# image's containerd store without unpacking them.
#
# usage: test/infra/node-image/build-kind.sh        prints the OCI tarball's path
#
# Environment (defaults in brackets):
#   CAPK_CACHE          cache root for binaries, the rootfs and the image [~/.cache/capk]
#   CAPK_NODE_IMAGE     reference of the image [docker.io/kindest/node:<Kubernetes version>,
#                       the image the provider runs when a machine names none]
#   CAPK_DEBIAN_MIRROR  Debian mirror for debootstrap [http://deb.debian.org/debian]
#   CAPK_KUBE_WRAPPER   Kubernetes release, a wrapper module under hack/tools/ [kubernetes];
#                       kubernetes-previous is the minor before, for the upgrade test
#   CAPK_NODE_PAUSE_IMAGES  more references the pause image is preloaded as, besides
#                       kubeadm's and kind's [registry.k8s.io/pause:3.10.1: Cluster API
#                       v1.14's e2e framework runs its drain workloads with it]
#   CAPK_NODE_WORKLOAD_IMAGE  when set, also preload under this reference an image of
#                       kind's node userland, for the end-to-end tests' workloads
#                       (env.sh sets it) []
#
# Where it differs from kind's own build, and why:
# - The images are built here from the binaries of the same versions (no
#   registry): the control plane, etcd, kube-proxy, CoreDNS, pause, and the
#   e2e's pod network podnet. kind's default CNI and storage manifests
#   (/kind/manifests) and their images are left out: Cluster API clusters
#   install their own.
# - kubeadm's own pause image is preloaded beside kind's sandbox image, since
#   Cluster API's kubeadm bootstrap runs the image preflight check.
# - kube-proxy and podnet run on a layer of the rootfs's iptables, nftables
#   and iproute2 packages and their libraries (net_layer), as upstream's
#   distroless kube-proxy image does, not on the whole rootfs.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../../.." && pwd)
cache=${CAPK_CACHE:-$HOME/.cache/capk}
mirror=${CAPK_DEBIAN_MIRROR:-http://deb.debian.org/debian}
# kind's BASE_IMAGE is debian:trixie-slim; minbase is debootstrap's closest.
suite=trixie

log() { printf '[%s] node-image: %s\n' "$(date +%T)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

hash_of() { sha256sum | cut -c1-12; }

# ---------------------------------------------------------------- inputs

# inputs sets everything else the image is made of; main has set RECIPE.
inputs() {
  PROGRAMS=$("$repo/test/infra/builds/kind-base.sh")
  BIN=$("$repo/hack/kube-binaries.sh" etcd kube-apiserver kube-controller-manager kube-scheduler kube-proxy \
    kubelet kubeadm kubectl)
  COREDNS_BIN=$("$repo/test/infra/builds/coredns.sh")
  TOOLS=$("$here/../tools.sh")
  KUBE_VERSION=$("$BIN/kubeadm" version -o short)
  IMAGE=${CAPK_NODE_IMAGE:-docker.io/kindest/node:$KUBE_VERSION}
  PODNET_IMAGE=$(sed -n 's/^ *image: *//p' "$here/../podnet/podnet.yaml")
  PAUSE_IMAGES=${CAPK_NODE_PAUSE_IMAGES-registry.k8s.io/pause:3.10.1}
  WORKLOAD_IMAGE=${CAPK_NODE_WORKLOAD_IMAGE:-}
  KIND_PAUSE_IMAGE=$(sed -n 's/^ *sandbox_image = "\(.*\)"$/\1/p' "$RECIPE/files/etc/containerd/config.toml")
  [ -n "$KIND_PAUSE_IMAGE" ] || die "kind's containerd config names no sandbox_image"
}

# kind_packages prints the packages of the Dockerfile's clean-install, one a line.
kind_packages() {
  sed -n '/clean-install \\$/,/^ *&&/p' "$RECIPE/Dockerfile" | sed -e '1d' -e '$d' -e 's/\\$//' | tr -s ' ' '\n' |
    sed '/^$/d'
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
  command -v debootstrap >/dev/null && [ -e /usr/share/debootstrap/scripts/$suite ] && return
  log "installing debootstrap"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends debootstrap >/dev/null
  [ -e /usr/share/debootstrap/scripts/$suite ] || die "this debootstrap does not know $suite"
}

# rootfs sets ROOTFS to a cached tree of kind's base image without the
# programs it builds from source, and BASE_TAR to it as a layer.
rootfs() {
  local key packages
  mapfile -t packages < <(kind_packages)
  [ ${#packages[@]} -ge 10 ] || die "found ${#packages[@]} packages in kind's Dockerfile: ${packages[*]}"
  key=$({ echo "$suite ${packages[*]}"; sed -n '/^# -* rootfs$/,/^# -* images$/p' "${BASH_SOURCE[0]}";
    (cd "$RECIPE" && find Dockerfile files -type f -print0 | sort -z | xargs -0 sha256sum); } | hash_of)
  ROOTFS=$cache/kind-rootfs-$suite-$key
  BASE_TAR=$ROOTFS.tar
  [ -f "$BASE_TAR" ] && return
  ensure_debootstrap
  rm -rf "$ROOTFS" "$ROOTFS.partial"
  log "debootstrap $suite with kind's packages into $ROOTFS (a few minutes)"
  debootstrap --variant=minbase --include="$(IFS=,; echo "${packages[*]}")" "$suite" "$ROOTFS.partial" "$mirror" \
    >"$cache/kind-rootfs.log" 2>&1 || die "debootstrap failed, see $cache/kind-rootfs.log"
  kind_base_steps "$ROOTFS.partial"
  mv "$ROOTFS.partial" "$ROOTFS"
  tar --numeric-owner --xattrs -C "$ROOTFS" -cf "$BASE_TAR.partial" .
  mv "$BASE_TAR.partial" "$BASE_TAR"
}

# kind_base_steps does to the tree what kind's base Dockerfile does, in its
# order: the files with its modes, clean-install's cleanup, the systemd
# trimming, the units it enables and masks, /etc/kubernetes/manifests.
kind_base_steps() {
  local r=$1
  copy_kind_files "$r"
  chroot "$r" apt-get clean -y
  rm -rf "$r"/var/cache/debconf/* "$r"/var/lib/apt/lists/* "$r"/var/log/* "$r"/tmp/* "$r"/var/tmp/* \
    "$r"/usr/share/doc/* "$r"/usr/share/doc-base/* "$r"/usr/share/man/* "$r"/usr/share/local/*
  find "$r/lib/systemd/system/sysinit.target.wants/" -name 'systemd-tmpfiles-setup.service' -delete
  rm -f "$r"/lib/systemd/system/multi-user.target.wants/* "$r"/etc/systemd/system/*.wants/* \
    "$r"/lib/systemd/system/local-fs.target.wants/* "$r"/lib/systemd/system/sockets.target.wants/*udev* \
    "$r"/lib/systemd/system/sockets.target.wants/*initctl* "$r"/lib/systemd/system/basic.target.wants/*
  echo "ReadKMsg=no" >>"$r/etc/systemd/journald.conf"
  ln -sf /usr/lib/systemd/systemd "$r/sbin/init"
  systemctl --root="$r" enable kubelet.service containerd.service undo-mount-hacks.service >/dev/null 2>&1
  systemctl --root="$r" mask systemd-binfmt.service >/dev/null 2>&1
  mkdir -p "$r/etc/kubernetes/manifests"
  # debian:trixie-slim has an empty machine-id and resolv.conf; kind's
  # entrypoint makes a machine-id at every start.
  : >"$r/etc/machine-id"
  : >"$r/etc/resolv.conf"
}

# copy_kind_files copies images/base/files as the Dockerfile's COPY lines do:
# scripts (usr/local/bin, kind/bin) 0755, everything else 0644, folders 0755.
copy_kind_files() {
  local r=$1
  cp -r --no-preserve=mode "$RECIPE/files/." "$r/"
  (cd "$RECIPE/files" && find . -type d -print0 | (cd "$r" && xargs -0 chmod 0755))
  (cd "$RECIPE/files" && find . -type f -print0 | (cd "$r" && xargs -0 chmod 0644))
  chmod 0755 "$r"/usr/local/bin/* "$r"/kind/bin/*
}

# ---------------------------------------------------------------- images

# component_images writes the images to preload into $1, as OCI tarballs.
component_images() {
  local dir=$1 b ref
  mkdir -p "$dir"
  NET_TAR=$WORK/net.tar
  net_layer "$NET_TAR"
  for b in kube-apiserver kube-controller-manager kube-scheduler; do
    static_image "$(image_for "$b")" "$BIN/$b" "$dir/$b.tar"
  done
  static_image "$(image_for etcd)" "$BIN/etcd" "$dir/etcd.tar"
  debian_image "$(image_for kube-proxy)" "$BIN/kube-proxy" "$dir/kube-proxy.tar"
  debian_image "$PODNET_IMAGE" "$TOOLS/podnet" "$dir/podnet.tar"
  # unpacked only on the nodes that run a workload of it
  [ -z "$WORKLOAD_IMAGE" ] || "$TOOLS/oci-image" -ref "$WORKLOAD_IMAGE" -out "$dir/workload.tar" -layer "$BASE_TAR" \
    -env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
  "$TOOLS/oci-image" -ref "$(image_for coredns)" -out "$dir/coredns.tar" -file "$COREDNS_BIN:/coredns:0755" \
    -entrypoint '["/coredns"]'
  local pauses=("$KIND_PAUSE_IMAGE" "$(image_for pause)")
  for ref in $PAUSE_IMAGES; do pauses+=("$ref"); done
  for ref in $(printf '%s\n' "${pauses[@]}" | sort -u); do
    pause_image "$ref" "$dir/pause-${ref##*:}.tar"
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

# debian_image: kube-proxy and podnet run iptables and ip, so they need
# those programs: NET_TAR. iptables-wrapper stands in for the iptables
# programs ahead of /usr/sbin, so that the rules go to the node's backend, as
# upstream's kube-proxy image does it.
debian_image() { # debian_image <ref> <binary> <out>
  local wrapped=() name suffix
  for name in iptables ip6tables; do
    for suffix in "" -save -restore; do
      wrapped+=(-file "$TOOLS/iptables-wrapper:/usr/local/bin/$name$suffix:0755")
    done
  done
  "$TOOLS/oci-image" -ref "$1" -out "$3" -layer "$NET_TAR" -file "$2:/usr/local/bin/$(basename "$2"):0755" \
    "${wrapped[@]}" -env PATH=/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
}

# net_layer writes the layer kube-proxy and podnet run on: the rootfs's
# Debian packages of iptables, nftables (kube-proxy cleans up after its nft
# mode), iproute2 and netbase and the libraries they depend on, like
# upstream's distroless kube-proxy image, not the whole rootfs. Every node's
# containerd unpacks this layer before kube-proxy starts: the ~190 MB rootfs
# took ~5 minutes of the cgroup v2 VM's software CPU. glibc's character set
# converters stay out too (8 MB no program here loads). The programs must run
# from the layer alone, or the build fails.
net_layer() { # net_layer <out>
  local tree=$WORK/net p list
  mkdir -p "$tree"
  for p in $(package_closure iptables nftables iproute2 netbase); do
    list=$ROOTFS/var/lib/dpkg/info/$p.list
    [ -f "$list" ] || list=$ROOTFS/var/lib/dpkg/info/$p:amd64.list
    [ -f "$list" ] || die "no file list for package $p in the rootfs"
    cat "$list"
  done | usr_merged | grep -v '/gconv/' | sort -u | while IFS= read -r p; do
    if [ -e "$ROOTFS$p" ] || [ -L "$ROOTFS$p" ]; then printf '.%s\n' "$p"; fi
  done >"$WORK/net.files"
  printf '%s\n' ./bin ./sbin ./lib ./lib64 ./etc/passwd ./etc/group ./run ./tmp >>"$WORK/net.files"
  tar --numeric-owner -C "$ROOTFS" --no-recursion -T "$WORK/net.files" -cf "$1"
  tar -C "$tree" -xf "$1"
  for p in "iptables-nft --version" "iptables-legacy --version" "ip6tables-nft-save --version" "nft --version" \
    "ip -V" "bridge -V"; do
    chroot "$tree" /usr/sbin/$p >/dev/null 2>&1 || die "the network layer cannot run $p: $(chroot "$tree" /usr/sbin/$p 2>&1)"
  done
  rm -rf "$tree"
}

# package_closure prints the named packages installed in the rootfs and those
# they depend on, one a line; debconf and perl, which only the packages'
# install scripts use, are left out.
package_closure() { # package_closure <package>...
  awk -v want="$*" '
    /^Package: / { p = $2 }
    /^Status: .* installed$/ { installed[p] = 1 }
    /^(Pre-)?Depends: / { sub(/^[^:]*: /, ""); deps[p] = deps[p] "," $0 }
    END {
      skip["debconf"] = skip["perl-base"] = 1
      n = split(want, queue, " ")
      for (i = 1; i <= n; i++) seen[queue[i]] = 1
      for (i = 1; i <= n; i++) {
        p = queue[i]
        if (!installed[p]) { print "not installed: " p > "/dev/stderr"; exit 1 }
        print p
        m = split(deps[p], d, ",")
        for (j = 1; j <= m; j++) {
          k = split(d[j], alt, "|")
          for (a = 1; a <= k; a++) {
            name = alt[a]; gsub(/\([^)]*\)|:any|[ \t]/, "", name)
            if (!installed[name] || skip[name]) continue
            if (!seen[name]) { seen[name] = 1; queue[++n] = name }
            break
          }
        }
      }
    }' "$ROOTFS/var/lib/dpkg/status"
}

# usr_merged maps the paths of dpkg's file lists to where the merged-/usr
# rootfs has them (/lib/x is /usr/lib/x), so the layer holds each file once.
usr_merged() { sed -E 's#^/(bin|sbin|lib|lib64)(/|$)#/usr/\1\2#'; }

# import_images imports the tarballs into the containerd store under <root>
# as kind's node image build does (ctr images import --no-unpack --digests,
# pinned): a containerd of the image's own build runs on the host for it, with
# that root, a private socket and no CRI. Only the content store and the
# metadata database stay: nothing is unpacked, so no snapshot is needed.
import_images() { # import_images <tarball folder> <containerd root>
  local state=$WORK/containerd-state config=$WORK/containerd-import.toml pid tar
  mkdir -p "$2" "$state"
  cat >"$config" <<EOF
version = 3
root = "$2"
state = "$state"
disabled_plugins = ["io.containerd.grpc.v1.cri", "io.containerd.cri.v1.images", "io.containerd.cri.v1.runtime"]
[grpc]
  address = "$state/containerd.sock"
EOF
  "$PROGRAMS/usr/local/bin/containerd" --config "$config" >"$WORK/containerd-import.log" 2>&1 &
  pid=$!
  local ctr=("$PROGRAMS/usr/local/bin/ctr" --address "$state/containerd.sock" --namespace k8s.io)
  local tries=0
  until "${ctr[@]}" version >/dev/null 2>&1; do
    ((++tries < 100)) || { kill "$pid"; die "containerd for the import did not start: $WORK/containerd-import.log"; }
    sleep 0.1
  done
  for tar in "$1"/*.tar; do
    "${ctr[@]}" images import --label=io.cri-containerd.pinned=pinned --all-platforms --no-unpack --digests \
      - <"$tar" >/dev/null 2>>"$WORK/containerd-import.log" ||
      { kill "$pid"; die "importing $tar failed: $(tail -n 5 "$WORK/containerd-import.log")"; }
  done
  kill "$pid"
  wait "$pid" || true
  # keep the store and its metadata; the snapshotters' empty folders go
  find "$2" -mindepth 1 -maxdepth 1 ! -name io.containerd.content.v1.content ! -name io.containerd.metadata.v1.bolt \
    -exec rm -rf {} +
}

# ---------------------------------------------------------------- node layer

# node_layer writes the layer on top of the rootfs: the programs kind builds,
# the containerd runtime spec the Dockerfile generates, the Kubernetes
# binaries, /kind/version and the preloaded images.
node_layer() {
  local tree=$WORK/node
  mkdir -p "$tree/usr/bin" "$tree/etc/containerd" "$tree/kind"
  cp -a "$PROGRAMS/." "$tree/"
  # the Dockerfile's `ctr oci spec | jq ... > /etc/containerd/cri-base.json`
  "$PROGRAMS/usr/local/bin/ctr" oci spec |
    chroot "$ROOTFS" jq '.hooks.createContainer[.hooks.createContainer| length] |= . + {"path": "/kind/bin/mount-product-files.sh"}' |
    chroot "$ROOTFS" jq 'del(.process.rlimits)' >"$tree/etc/containerd/cri-base.json"
  cp "$BIN/kubelet" "$BIN/kubeadm" "$BIN/kubectl" "$tree/usr/bin/"
  printf '%s' "$KUBE_VERSION" >"$tree/kind/version"
  component_images "$WORK/images"
  import_images "$WORK/images" "$tree/var/lib/containerd"
  tar --numeric-owner --owner=0 --group=0 -C "$tree" -cf "$WORK/node.tar" .
}

main() {
  # debootstrap (network and dpkg, little CPU) runs while the binaries build;
  # both read kind's recipe
  RECIPE=$("$repo/test/infra/builds/kind-base.sh" --recipe)
  rootfs &
  local rootfs_pid=$!
  inputs
  kubeadm_images
  wait "$rootfs_pid" || die "building the Debian rootfs failed"
  rootfs # built by now: only sets ROOTFS and BASE_TAR
  local key out
  key=$({ cat "${BASH_SOURCE[0]}"; echo "$IMAGE $PODNET_IMAGE $WORKLOAD_IMAGE $BASE_TAR $PROGRAMS ${IMAGES[*]} $PAUSE_IMAGES $TOOLS";
    sha256sum "$BIN"/* "$COREDNS_BIN"; } | hash_of)
  out=$cache/kind-node-image-$KUBE_VERSION-$key.tar
  if [ ! -f "$out" ]; then
    WORK=$(mktemp -d "$cache/.kind-node-image.XXXXXX")
    trap 'rm -rf "$WORK"' EXIT
    log "building $IMAGE"
    node_layer
    "$TOOLS/oci-image" -ref "$IMAGE" -out "$WORK/image.tar" -layer "$BASE_TAR" -layer "$WORK/node.tar" \
      -entrypoint '["/usr/local/bin/entrypoint","/sbin/init"]' -env container=docker -stop-signal 'SIGRTMIN+3'
    # The image must not drift from kind's recipe (test/infra/cmd/kind-recipe-check).
    "$TOOLS/kind-recipe-check" -image "$WORK/image.tar" -recipe "$RECIPE" -kubernetes-version "$KUBE_VERSION" >&2 ||
      die "the image differs from kind's recipe in $RECIPE"
    mv "$WORK/image.tar" "$out"
    log "wrote $out ($(du -h "$out" | cut -f1))"
  fi
  echo "$out"
}

main
