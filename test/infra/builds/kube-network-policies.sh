#!/usr/bin/env bash
# Builds kube-network-policies (sigs.k8s.io/kube-network-policies, the
# NetworkPolicy implementation of the hosting cluster) from the Go module proxy
# into ${CAPK_CACHE:-~/.cache/capk}/kube-network-policies-<version>/ (skipped
# when built, see cache.sh) and prints the binary's path.
#
# usage: test/infra/builds/kube-network-policies.sh
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=test/infra/builds/cache.sh
. "$here/cache.sh"

version=v0.8.0
module=sigs.k8s.io/kube-network-policies
out=$cache_root/kube-network-policies-$version
if ! is_built "$out" kube-network-policies "$version"; then
  echo "building kube-network-policies $version into $out" >&2
  install_cmd "$module" "$version" kube-network-policies "$out"
  stamp "$out" "$version" kube-network-policies
fi
echo "$out/kube-network-policies"
