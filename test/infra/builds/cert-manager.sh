#!/usr/bin/env bash
# Builds the cert-manager controller and cainjector of the local environment from
# the Go module proxy into ${CAPK_CACHE:-~/.cache/capk}/cert-manager-<version>/
# (skipping what is built already, see cache.sh) and prints the folder.
#
# usage: test/infra/builds/cert-manager.sh
#
# The binaries are the small mains of cert-manager/ (cmd/controller,
# cmd/cainjector) over cert-manager's public packages: upstream's cmd/ modules are
# not served by the proxy. There is no webhook: it lives in an internal package
# of cert-manager and cannot be imported. Without it nothing validates
# cert-manager's own objects, which Cluster API does not need.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=test/infra/builds/cache.sh
. "$here/cache.sh"
module=$here/cert-manager

version=$(module_version "$module" github.com/cert-manager/cert-manager)
out=$cache_root/cert-manager-$version
key="$version $(sources_key "$module" cmd)"

missing=()
for binary in controller cainjector; do
  is_built "$out" "$binary" "$key" || missing+=("$binary")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "building cert-manager ${missing[*]} $version into $out" >&2
  mkdir -p "$out"
  # The version reaches the user agent (and so the field manager) and --version.
  (cd "$module" && go build -trimpath -ldflags "-s -w -X github.com/cert-manager/cert-manager/pkg/util.AppVersion=$version" \
    -o "$out/" "${missing[@]/#/./cmd/}")
  for binary in "${missing[@]}"; do
    [ "$("$out/$binary" --version)" = "$version" ] || { echo "$binary does not report $version" >&2; exit 1; }
  done
  stamp "$out" "$key" "${missing[@]}"
fi
echo "$out"
