# Sourced by the scripts of test/infra/builds: each builds a Go program from
# the Go module proxy once into a folder of ${CAPK_CACHE:-~/.cache/capk} named
# for its version, and a warm call only checks what is there.
#
# A binary counts as built when it is there and its stamp (.<binary>.stamp next
# to it) holds the key it was built for: the version, and for the project's own
# mains the hash of their sources. A build that fails or is interrupted leaves
# no stamp, so the next call builds again.

export GOTOOLCHAIN=local GOFLAGS=-buildvcs=false CGO_ENABLED=0
cache_root=${CAPK_CACHE:-$HOME/.cache/capk}

# is_built <folder> <binary> <key>
is_built() {
  [ -x "$1/$2" ] && [ "$(cat "$1/.$2.stamp" 2>/dev/null)" = "$3" ]
}

# stamp <folder> <key> <binary...>: records that the binaries were built for key.
stamp() {
  local folder=$1 key=$2 binary
  shift 2
  for binary in "$@"; do
    echo "$key" >"$folder/.$binary.stamp"
  done
}

# sources_key <module folder> <folder...>: the hash of the module's go.mod and
# go.sum and of the Go files under the folders, for mains of the project's own.
sources_key() {
  local module=$1
  shift
  (cd "$module" && { cat go.mod go.sum; find "$@" -name '*.go' -print0 | sort -z | xargs -0 cat; } |
    sha256sum | cut -c1-12)
}

# module_version <module folder> <module path>: the version the wrapper module requires.
module_version() {
  (cd "$1" && go list -m -f '{{.Version}}' "$2")
}

# install_cmd <module> <version> <binary> <folder>: builds the main package
# <module>/cmd of a release into <folder>/<binary>. `go install pkg@version`
# builds with the release's own go.mod and go.sum, so no wrapper module is
# needed; it names the binary "cmd". The check is that the binary carries the
# module at that version.
install_cmd() {
  local module=$1 version=$2 binary=$3 folder=$4 tmp
  tmp=$(mktemp -d)
  if ! GOBIN=$tmp go install -trimpath -ldflags "-s -w" "$module/cmd@$version"; then
    rm -rf "$tmp"
    return 1
  fi
  if ! go version -m "$tmp/cmd" | awk '$1 == "mod" {print $2, $3}' | grep -qx "$module $version"; then
    echo "the build does not carry $module $version" >&2
    rm -rf "$tmp"
    return 1
  fi
  mkdir -p "$folder"
  mv "$tmp/cmd" "$folder/$binary"
  rm -rf "$tmp"
}
