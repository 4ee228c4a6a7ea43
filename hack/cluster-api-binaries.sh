#!/usr/bin/env bash
# Builds Cluster API binaries from the Go module proxy into a cache folder named for
# their version, skips what is already built with that version, and prints the folder.
# The versions come from the committed wrapper module hack/tools/clusterctl.
#
# usage: hack/cluster-api-binaries.sh [binary...|all]     (default: clusterctl)
#   clusterctl                        the CLI
#   cluster-api-controller            core manager        (sigs.k8s.io/cluster-api/core)
#   kubeadm-bootstrap-controller      kubeadm bootstrap   (sigs.k8s.io/cluster-api/bootstrap/kubeadm)
#   kubeadm-control-plane-controller  kubeadm control plane (sigs.k8s.io/cluster-api/controlplane/kubeadm)
#   all                               the four above
# The manager names are the image names of CAPI's releases.
#
# env:   CAPK_CACHE   cache root (default: ~/.cache/capk)
#
# Binaries are static (CGO_ENABLED=0) and carry the release's version ldflags; the
# build date is the module's release time, so two builds give the same bytes.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
module="$root/hack/tools/clusterctl"
export GOTOOLCHAIN=local GOFLAGS=-buildvcs=false CGO_ENABLED=0

all=(clusterctl cluster-api-controller kubeadm-bootstrap-controller kubeadm-control-plane-controller)

version=$(cd "$module" && go list -m -f '{{.Version}}' sigs.k8s.io/cluster-api)
release_time=$(cd "$module" && go list -m -f '{{.Time.UTC.Format "2006-01-02T15:04:05Z"}}' sigs.k8s.io/cluster-api)
out="${CAPK_CACHE:-$HOME/.cache/capk}/cluster-api-${version}"

package_of() { # package_of <binary>: its main package
  case "$1" in
    clusterctl) echo sigs.k8s.io/cluster-api/cmd/clusterctl ;;
    cluster-api-controller) echo sigs.k8s.io/cluster-api/core ;;
    kubeadm-bootstrap-controller) echo sigs.k8s.io/cluster-api/bootstrap/kubeadm ;;
    kubeadm-control-plane-controller) echo sigs.k8s.io/cluster-api/controlplane/kubeadm ;;
    *) echo "unknown binary $1 (want one of ${all[*]} or all)" >&2; exit 2 ;;
  esac
}

ldflags() {
  local minor flags="-s -w" pkg=sigs.k8s.io/cluster-api/version
  minor=$(echo "$version" | cut -d. -f2)
  flags+=" -X $pkg.gitVersion=$version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
  flags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=$release_time"
  echo "$flags"
}

# The managers have no version flag, so a stamp next to each one records the
# version and the dependency set (go.sum) it was built from.
stamp_of() { # stamp_of <binary>
  echo "$1 $version $(sha256sum "$module/go.sum" | cut -c1-12)"
}

is_built() { # is_built <binary>
  [ -x "$out/$1" ] || return 1
  if [ "$1" = clusterctl ]; then
    "$out/clusterctl" version -o short 2>/dev/null | grep -qx "$version"
  else
    [ "$(cat "$out/.$1.stamp" 2>/dev/null)" = "$(stamp_of "$1")" ]
  fi
}

build() { # build <binary>
  echo "building $1 $version into $out" >&2
  (cd "$module" && go build -trimpath -ldflags "$(ldflags)" -o "$out/$1" "$(package_of "$1")")
  if [ "$1" = clusterctl ]; then
    "$out/clusterctl" version -o short | grep -qx "$version" ||
      { echo "clusterctl does not report $version" >&2; exit 1; }
  else
    stamp_of "$1" >"$out/.$1.stamp"
  fi
}

wanted=("$@")
[ ${#wanted[@]} -gt 0 ] || wanted=(clusterctl)
[ "${wanted[*]}" != all ] || wanted=("${all[@]}")

mkdir -p "$out"
for binary in "${wanted[@]}"; do
  package_of "$binary" >/dev/null
  is_built "$binary" || build "$binary"
done
echo "$out"
