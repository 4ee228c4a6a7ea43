#!/usr/bin/env bash
# Builds kube-network-policies (sigs.k8s.io/kube-network-policies, the NetworkPolicy
# implementation of the hosting cluster) from the Go module proxy into
# ${CAPK_CACHE:-~/.cache/capk}/kube-network-policies-<version>/, skips the build
# when the binary there was built from that version, and prints the binary's path.
#
# usage: hack/network-policy-binary.sh
#
# `go install module/pkg@version` builds with the release's own go.mod and go.sum,
# so no wrapper module is needed; the binary's embedded build info (go version -m)
# records the module version and serves as the cache check.
set -euo pipefail

version=v0.8.0
module=sigs.k8s.io/kube-network-policies
export GOTOOLCHAIN=local GOFLAGS=-buildvcs=false CGO_ENABLED=0
out="${CAPK_CACHE:-$HOME/.cache/capk}/kube-network-policies-$version/kube-network-policies"

# is_built: the binary exists and its build info names the module at $version.
is_built() {
  [ -x "$out" ] || return 1
  go version -m "$out" 2>/dev/null | awk '$1 == "mod" {print $2, $3}' | grep -qx "$module $version"
}

if ! is_built; then
  echo "building kube-network-policies $version into $(dirname "$out")" >&2
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  # The main package is .../cmd, so `go install` names the binary "cmd".
  GOBIN=$tmp go install -trimpath -ldflags "-s -w" "$module/cmd@$version"
  mkdir -p "$(dirname "$out")"
  mv "$tmp/cmd" "$out"
  is_built || { echo "$out does not carry $module $version" >&2; exit 1; }
fi
echo "$out"
