#!/usr/bin/env bash
# Builds the Cluster API Operator (sigs.k8s.io/cluster-api-operator) from the
# Go module proxy into ${CAPK_CACHE:-~/.cache/capk}/capi-operator-<version>/,
# with its CRDs in crds/ (skipped when built, see cache.sh), and prints the
# folder. The e2e runs it as a process on this machine to install the second
# management cluster of the self-hosted spec (test/capi-e2e/operator_test.go).
#
# usage: test/infra/builds/capi-operator.sh
#
# v0.29.0 is the newest release; it is built on Cluster API v1.13's clusterctl
# library, whose contract (v1beta2) and provider handling are those of v1.14,
# and it builds with Go 1.26. The CRDs are the module's config/crd/bases (one
# version, so no conversion webhook is needed); nothing of the operator is kept
# in the repository.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=test/infra/builds/cache.sh
. "$here/cache.sh"

version=v0.29.0
module=sigs.k8s.io/cluster-api-operator
out=$cache_root/capi-operator-$version
key="$version with crds"
if ! is_built "$out" capi-operator "$key"; then
  echo "building capi-operator $version into $out" >&2
  install_cmd "$module" "$version" capi-operator "$out"
  "$out/capi-operator" --help 2>&1 | grep -q -- --webhook-cert-dir ||
    { echo "capi-operator --help lists no --webhook-cert-dir" >&2; exit 1; }
  src=$(cd / && go mod download -json "$module@$version" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
  [ -n "$src" ] || { echo "the proxy has no $module@$version" >&2; exit 1; }
  mkdir -p "$out/crds"
  cp "$src"/config/crd/bases/*.yaml "$out/crds/"
  stamp "$out" "$key" capi-operator
fi
echo "$out"
