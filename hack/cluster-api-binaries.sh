#!/usr/bin/env bash
# Builds Cluster API binaries (clusterctl for now) from the Go module proxy into a
# cache folder named for their version, skips what is already built with that
# version, and prints the folder.
#
# usage: hack/cluster-api-binaries.sh [binary...]     (default: clusterctl)
# env:   CAPK_CACHE   cache root (default: ~/.cache/capk)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
module="$root/hack/tools/clusterctl"
export GOTOOLCHAIN=local GOFLAGS=-buildvcs=false CGO_ENABLED=0

version=$(cd "$module" && go list -m -f '{{.Version}}' sigs.k8s.io/cluster-api)
out="${CAPK_CACHE:-$HOME/.cache/capk}/cluster-api-${version}"
mkdir -p "$out"

ldflags() {
  local minor flags="-s -w" pkg=sigs.k8s.io/cluster-api/version
  minor=$(echo "$version" | cut -d. -f2)
  flags+=" -X $pkg.gitVersion=$version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
  flags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "$flags"
}

for binary in "${@:-clusterctl}"; do
  case "$binary" in
    clusterctl) package=sigs.k8s.io/cluster-api/cmd/clusterctl ;;
    *) echo "unknown binary $binary" >&2; exit 2 ;;
  esac
  if [ -x "$out/$binary" ] && "$out/$binary" version -o short 2>/dev/null | grep -qx "$version"; then
    continue
  fi
  echo "building $binary $version into $out" >&2
  (cd "$module" && go build -trimpath -ldflags "$(ldflags)" -o "$out/$binary" "$package")
  "$out/$binary" version -o short | grep -qx "$version" || { echo "$binary does not report $version" >&2; exit 1; }
done
echo "$out"
