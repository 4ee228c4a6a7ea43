#!/usr/bin/env bash
# Builds Flux's source-controller and kustomize-controller from the Go module
# proxy into
# ${CAPK_CACHE:-~/.cache/capk}/flux-source-<version>-kustomize-<version>/,
# with their CRDs in crds/ (skipping what is built already, see cache.sh), and
# prints the folder.
#
# usage: test/infra/builds/flux.sh
#
# Each controller builds as its release does: its main at the module root, with
# its own go.mod and go.sum, CGO_ENABLED=0 and -trimpath (upstream's
# Dockerfile). `go install module@version` refuses such a module because its
# go.mod replaces <module>/api with ./api, and the proxy's zip of the module
# has no ./api (the api is the separate module <module>/api, tagged with the
# controller). So the script copies the module from the module cache into a
# temporary folder, copies the api module, at the version the go.mod requires,
# into its ./api (the tree of upstream's tag), and builds there with
# -mod=readonly: the dependencies are exactly upstream's, checked by its go.sum.
# Nothing of Flux is kept in the repository.
#
# The versions are the newest that Go 1.26 builds: v1.10 needs Go 1.27, and
# source-controller v1.9.1 to v1.9.6 need versions of github.com/fluxcd/pkg/artifact
# the proxy does not serve. The controllers print no version; the check is that
# --help runs.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=test/infra/builds/cache.sh
. "$here/cache.sh"

source_version=v1.9.0
kustomize_version=v1.9.6
out=$cache_root/flux-source-$source_version-kustomize-$kustomize_version

# module_dir <module>@<version>: downloads a module into the module cache and
# prints its folder there.
module_dir() {
  local dir
  dir=$(cd "$tmp" && go mod download -json "$1" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
  [ -n "$dir" ] || { echo "the proxy has no $1" >&2; exit 1; }
  echo "$dir"
}

# build <binary> <module> <version>: builds the main at the module's root into
# $out/<binary>.
build() {
  local binary=$1 module=$2 version=$3 work src api_version api help
  echo "building $binary $version into $out" >&2
  work=$tmp/$binary
  src=$(module_dir "$module@$version")
  api_version=$(awk -v api="$module/api" '$1 == api {print $2}' "$src/go.mod")
  [ -n "$api_version" ] || { echo "$module $version requires no $module/api" >&2; exit 1; }
  api=$(module_dir "$module/api@$api_version")
  cp -r "$src" "$work"
  chmod u+w "$work"
  cp -r "$api" "$work/api"
  chmod -R u+w "$work"
  (cd "$work" && go build -mod=readonly -trimpath -ldflags "-s -w" -o "$out/$binary" .)
  help=$("$out/$binary" --help 2>&1) || { echo "$binary --help fails" >&2; exit 1; }
  grep -q -- --health-addr <<<"$help" || { echo "$binary --help lists no --health-addr" >&2; exit 1; }
  mkdir -p "$out/crds" # the controllers install none
  cp "$src"/config/crd/bases/*.yaml "$out/crds/"
  stamp "$out" "$(key "$version")" "$binary"
}

# key is what a controller's stamp holds: its version, and that its CRDs are in crds/.
key() { echo "$1 with crds"; }

tmp=
for controller in "source $source_version" "kustomize $kustomize_version"; do
  read -r name version <<<"$controller"
  is_built "$out" "$name-controller" "$(key "$version")" && continue
  if [ -z "$tmp" ]; then
    mkdir -p "$out"
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
  fi
  build "$name-controller" "github.com/fluxcd/$name-controller" "$version"
done
echo "$out"
