#!/usr/bin/env bash
# Builds CoreDNS (the version kubeadm deploys, pinned by the wrapper module
# coredns/) from the Go module proxy into
# ${CAPK_CACHE:-~/.cache/capk}/coredns-<version>/ (skipped when built, see
# cache.sh) and prints the binary's path.
#
# usage: test/infra/builds/coredns.sh
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=test/infra/builds/cache.sh
. "$here/cache.sh"
module=$here/coredns

version=$(module_version "$module" github.com/coredns/coredns)
out=$cache_root/coredns-$version
if ! is_built "$out" coredns "$version"; then
  echo "building CoreDNS $version into $out" >&2
  (cd "$module" && go build -trimpath -ldflags "-s -w" -o "$out/coredns" github.com/coredns/coredns)
  "$out/coredns" -version | grep -q "CoreDNS-${version#v}" || { echo "coredns does not report $version" >&2; exit 1; }
  stamp "$out" "$version" coredns
fi
echo "$out/coredns"
