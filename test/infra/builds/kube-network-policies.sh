#!/usr/bin/env bash
# Builds kube-network-policies (sigs.k8s.io/kube-network-policies, the
# NetworkPolicy implementation of the hosting cluster) from the Go module proxy
# into ${CAPK_CACHE:-~/.cache/capk}/kube-network-policies-<version>/ (skipped
# when built, see cache.sh) and prints the binary's path.
#
# usage: test/infra/builds/kube-network-policies.sh
#
# `go install module/pkg@version` builds with the release's own go.mod and go.sum,
# so no wrapper module is needed.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=test/infra/builds/cache.sh
. "$here/cache.sh"

version=v0.8.0
module=sigs.k8s.io/kube-network-policies
out=$cache_root/kube-network-policies-$version
if ! is_built "$out" kube-network-policies "$version"; then
  echo "building kube-network-policies $version into $out" >&2
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  # The main package is .../cmd, so `go install` names the binary "cmd".
  GOBIN=$tmp go install -trimpath -ldflags "-s -w" "$module/cmd@$version"
  go version -m "$tmp/cmd" | awk '$1 == "mod" {print $2, $3}' | grep -qx "$module $version" ||
    { echo "the build does not carry $module $version" >&2; exit 1; }
  mkdir -p "$out"
  mv "$tmp/cmd" "$out/kube-network-policies"
  stamp "$out" "$version" kube-network-policies
fi
echo "$out/kube-network-policies"
