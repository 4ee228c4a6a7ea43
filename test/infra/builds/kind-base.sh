#!/usr/bin/env bash
# Builds the programs kind's base image builds from source (sigs.k8s.io/kind,
# images/base/Dockerfile), at the versions that Dockerfile pins, from the Go
# module proxy instead of git clones, into
# ${CAPK_CACHE:-~/.cache/capk}/kind-base-<kind version>-<hash>/ laid out as in
# the image, and prints that folder:
#
#   usr/local/bin/   containerd, ctr, containerd-shim-runc-v2, crictl,
#                    containerd-fuse-overlayfs-grpc
#   usr/local/sbin/  runc (cgo, libseccomp)
#   opt/cni/bin/     host-local, loopback, ptp, portmap
#
# usage: test/infra/builds/kind-base.sh
#        test/infra/builds/kind-base.sh --recipe   prints kind's images/base folder
#                                                  (in the Go module cache) instead
#
# kind is the wrapper module kind/; each program is pinned by a wrapper module
# of its own (containerd/, runc/, crictl/, cni-plugins/, fuse-overlayfs/), so
# that each builds with its own dependency set, as from its own repository. The
# build fails when a wrapper pins another version than kind's Dockerfile. The
# build tags, cgo settings and version flags are those of the Dockerfile and of
# each project's Makefile; the git revision some of them print is unknown here
# (the module proxy serves no commit) and left empty.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=test/infra/builds/cache.sh
. "$here/cache.sh"

log() { printf '[%s] kind-base: %s\n' "$(date +%T)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

# kind_dir prints the kind module's folder in the module cache, downloading it.
kind_dir() {
  (cd "$here/kind" && go mod download sigs.k8s.io/kind && go list -m -f '{{.Dir}}' sigs.k8s.io/kind)
}

# dockerfile_arg prints the default of an ARG of kind's base Dockerfile.
dockerfile_arg() { # dockerfile_arg <name>
  local value
  value=$(sed -n "s/^ARG $1=\"\(.*\)\"\$/\1/p" "$KIND/images/base/Dockerfile")
  [ -n "$value" ] || die "kind's base Dockerfile has no ARG $1"
  echo "$value"
}

# pinned checks that a wrapper module pins the version kind's Dockerfile names
# and prints it.
pinned() { # pinned <wrapper> <module path> <Dockerfile ARG>
  local want got
  want=$(dockerfile_arg "$3")
  got=$(module_version "$here/$1" "$2")
  [ "$got" = "$want" ] || die "$1/go.mod pins $2 $got; kind $KIND_VERSION's Dockerfile builds $want ($3)"
  echo "$got"
}

inputs() {
  KIND=$(kind_dir)
  KIND_VERSION=$(module_version "$here/kind" sigs.k8s.io/kind)
  CONTAINERD_VERSION=$(pinned containerd github.com/containerd/containerd/v2 CONTAINERD_VERSION)
  RUNC_VERSION=$(pinned runc github.com/opencontainers/runc RUNC_VERSION)
  CRICTL_VERSION=$(pinned crictl sigs.k8s.io/cri-tools CRICTL_VERSION)
  CNI_VERSION=$(pinned cni-plugins github.com/containernetworking/plugins CNI_PLUGINS_VERSION)
  FUSE_VERSION=$(pinned fuse-overlayfs github.com/containerd/fuse-overlayfs-snapshotter/v2 \
    CONTAINERD_FUSE_OVERLAYFS_VERSION)
  CONTAINERD_TAGS="$(dockerfile_arg BUILDTAGS) urfave_cli_no_docs"
}

# key is what the folder is built for: this script and the wrappers' go.mod
# and go.sum (which name the versions and every dependency).
key() {
  (cd "$here" && cat kind-base.sh {kind,containerd,runc,crictl,cni-plugins,fuse-overlayfs}/go.{mod,sum}) |
    sha256sum | cut -c1-12
}

# ensure_libseccomp installs what runc's seccomp support compiles against.
ensure_libseccomp() {
  pkg-config --exists libseccomp 2>/dev/null && return
  log "installing libseccomp-dev and pkg-config (runc's seccomp support)"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends libseccomp-dev pkg-config >/dev/null
}

gobuild() { # gobuild <wrapper> <go build arguments...>
  local wrapper=$1
  shift
  (cd "$here/$wrapper" && go build -trimpath "$@")
}

# containerd as its Makefile builds it: PIE with cgo, the Dockerfile's tags;
# the shim static without cgo and with no_grpc.
build_containerd() {
  local pkg=github.com/containerd/containerd/v2
  local version="-X $pkg/version.Version=$CONTAINERD_VERSION -X $pkg/version.Package=$pkg"
  CGO_ENABLED=1 gobuild containerd -buildmode=pie -tags "$CONTAINERD_TAGS" -ldflags "$version" \
    -o "$1/usr/local/bin/" "$pkg/cmd/containerd" "$pkg/cmd/ctr"
  CGO_ENABLED=0 gobuild containerd -tags "$CONTAINERD_TAGS no_grpc" -ldflags "$version -extldflags -static" \
    -o "$1/usr/local/bin/" "$pkg/cmd/containerd-shim-runc-v2"
}

# runc as `make runc`: PIE with cgo, tags seccomp and urfave_cli_no_docs (its
# version is embedded from its VERSION file).
build_runc() {
  ensure_libseccomp
  CGO_ENABLED=1 gobuild runc -buildmode=pie -tags "seccomp urfave_cli_no_docs" \
    -o "$1/usr/local/sbin/runc" github.com/opencontainers/runc
}

build_crictl() {
  CGO_ENABLED=0 gobuild crictl -ldflags "-X sigs.k8s.io/cri-tools/pkg/version.Version=$CRICTL_VERSION" \
    -o "$1/usr/local/bin/crictl" sigs.k8s.io/cri-tools/cmd/crictl
}

# The four plugins the Dockerfile builds, with their version set (kind's
# build leaves it "unknown").
build_cni_plugins() {
  local pkg=github.com/containernetworking/plugins
  CGO_ENABLED=0 gobuild cni-plugins -ldflags "-X $pkg/pkg/utils/buildversion.BuildVersion=$CNI_VERSION" \
    -o "$1/opt/cni/bin/" "$pkg/plugins/ipam/host-local" "$pkg/plugins/main/loopback" \
    "$pkg/plugins/main/ptp" "$pkg/plugins/meta/portmap"
}

build_fuse_overlayfs() {
  local pkg=github.com/containerd/fuse-overlayfs-snapshotter/v2/cmd/containerd-fuse-overlayfs-grpc
  CGO_ENABLED=0 gobuild fuse-overlayfs -ldflags "-s -w -X $pkg/version.Version=$FUSE_VERSION" \
    -o "$1/usr/local/bin/" "$pkg"
}

# verify checks that every program reports the version kind pins. Outputs are
# read whole before matching: with pipefail, `prog | grep -q` fails whenever
# grep stops reading before prog has written everything (SIGPIPE).
verify() { # verify <folder>
  local f=$1
  reports " $CONTAINERD_VERSION" "$f/usr/local/bin/containerd" --version || die "containerd is not $CONTAINERD_VERSION"
  reports " $CONTAINERD_VERSION" "$f/usr/local/bin/ctr" --version || die "ctr is not $CONTAINERD_VERSION"
  reports " $CONTAINERD_VERSION" "$f/usr/local/bin/containerd-shim-runc-v2" -v ||
    die "containerd-shim-runc-v2 is not $CONTAINERD_VERSION"
  reports "runc version ${RUNC_VERSION#v}" "$f/usr/local/sbin/runc" --version || die "runc is not $RUNC_VERSION"
  reports "libseccomp: " "$f/usr/local/sbin/runc" --version || die "runc was built without seccomp"
  reports "crictl version $CRICTL_VERSION" "$f/usr/local/bin/crictl" --version || die "crictl is not $CRICTL_VERSION"
  # The plugins (CNI_COMMAND=VERSION prints the spec versions, not theirs)
  # and fuse-overlayfs (no version flag): their Go build information.
  local plugin
  for plugin in host-local loopback ptp portmap; do
    built_from "$f/opt/cni/bin/$plugin" github.com/containernetworking/plugins "$CNI_VERSION"
  done
  built_from "$f/usr/local/bin/containerd-fuse-overlayfs-grpc" github.com/containerd/fuse-overlayfs-snapshotter/v2 \
    "$FUSE_VERSION"
}

# reports runs a program and succeeds when its output contains the text.
reports() { # reports <text> <program> <arguments...>
  local want=$1 out
  shift
  out=$("$@" 2>&1) || return 1
  [[ "$out" == *"$want"* ]]
}

# built_from fails unless the binary's Go build information names the module
# at the version.
built_from() { # built_from <binary> <module> <version>
  local info
  info=$(go version -m "$1") || die "$1 has no Go build information"
  grep -qE "^\s+(mod|dep)\s+$2\s+$3(\s|\$)" <<<"$info" || die "$1 is not built from $2 $3"
}

main() {
  if [ "${1:-}" = --recipe ]; then
    echo "$(kind_dir)/images/base"
    return
  fi
  inputs
  local out
  out=$cache_root/kind-base-$KIND_VERSION-$(key)
  if [ ! -d "$out" ]; then
    log "building kind $KIND_VERSION's base programs: containerd $CONTAINERD_VERSION, runc $RUNC_VERSION," \
      "crictl $CRICTL_VERSION, CNI plugins $CNI_VERSION, fuse-overlayfs $FUSE_VERSION"
    mkdir -p "$cache_root"
    WORK=$(mktemp -d "$cache_root/.kind-base.XXXXXX")
    trap 'rm -rf "$WORK"' EXIT
    mkdir -p "$WORK/usr/local/bin" "$WORK/usr/local/sbin" "$WORK/opt/cni/bin"
    build_containerd "$WORK"
    build_runc "$WORK"
    build_crictl "$WORK"
    build_cni_plugins "$WORK"
    build_fuse_overlayfs "$WORK"
    verify "$WORK"
    # -T: when a concurrent call got there first, keep its folder.
    mv -T "$WORK" "$out" 2>/dev/null || log "$out was written meanwhile by another call"
  fi
  echo "$out"
}

main "$@"
