#!/usr/bin/env bash
# Builds CoreDNS (the version kubeadm deploys, pinned by hack/tools/coredns) from
# the Go module proxy into ${CAPK_CACHE:-~/.cache/capk}/coredns-<version>/,
# skips the build when it is there, and prints the binary's path.
set -euo pipefail

module="$(cd "$(dirname "${BASH_SOURCE[0]}")/tools/coredns" && pwd)"
export GOTOOLCHAIN=local GOFLAGS=-buildvcs=false CGO_ENABLED=0
version=$(cd "$module" && go list -m -f '{{.Version}}' github.com/coredns/coredns)
out="${CAPK_CACHE:-$HOME/.cache/capk}/coredns-$version/coredns"
if ! "$out" -version 2>/dev/null | grep -q "CoreDNS-${version#v}"; then
  echo "building CoreDNS $version into $(dirname "$out")" >&2
  (cd "$module" && go build -trimpath -ldflags "-s -w" -o "$out" github.com/coredns/coredns)
fi
echo "$out"
