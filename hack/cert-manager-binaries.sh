#!/usr/bin/env bash
# Builds the cert-manager controller and cainjector of the local environment from
# the Go module proxy into ${CAPK_CACHE:-~/.cache/capk}/cert-manager-<version>/,
# skips each binary that is there and reports that version, and prints the folder.
#
# usage: hack/cert-manager-binaries.sh
#
# The binaries are the small mains of hack/tools/cert-manager (cmd/controller,
# cmd/cainjector) over cert-manager's public packages: upstream's cmd/ modules are
# not served by the proxy. There is no webhook: it lives in an internal package
# of cert-manager and cannot be imported. Without it nothing validates
# cert-manager's own objects, which Cluster API does not need.
set -euo pipefail

module="$(cd "$(dirname "${BASH_SOURCE[0]}")/tools/cert-manager" && pwd)"
export GOTOOLCHAIN=local GOFLAGS=-buildvcs=false CGO_ENABLED=0

version=$(cd "$module" && go list -m -f '{{.Version}}' github.com/cert-manager/cert-manager)
out="${CAPK_CACHE:-$HOME/.cache/capk}/cert-manager-$version"

# The version reaches the user agent (and so the field manager) and --version.
ldflags="-s -w -X github.com/cert-manager/cert-manager/pkg/util.AppVersion=$version"

# The mains are the project's own code, so besides the version they report, a
# stamp records the hash of the sources they were built from.
sources=$(cd "$module" && { cat go.mod go.sum; find cmd -name '*.go' -print0 | sort -z | xargs -0 cat; } |
  sha256sum | cut -c1-12)

is_built() { # is_built <binary>
  [ "$("$out/$1" --version 2>/dev/null)" = "$version" ] && [ "$(cat "$out/.$1.sources" 2>/dev/null)" = "$sources" ]
}

missing=()
for binary in controller cainjector; do
  is_built "$binary" || missing+=("$binary")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "building cert-manager ${missing[*]} $version into $out" >&2
  mkdir -p "$out"
  (cd "$module" && go build -trimpath -ldflags "$ldflags" -o "$out/" "${missing[@]/#/./cmd/}")
  for binary in "${missing[@]}"; do
    [ "$("$out/$binary" --version)" = "$version" ] || { echo "$binary does not report $version" >&2; exit 1; }
    echo "$sources" >"$out/.$binary.sources"
  done
fi
echo "$out"
