#!/usr/bin/env bash
# Builds the Go helper programs of test/infra (cmd/...) once per source revision
# into ${CAPK_CACHE:-~/.cache/capk}/infra-tools-<hash> and prints that folder.
# A warm call costs one hash of the sources; a rebuild ~10 s of linking.
#
# usage: test/infra/tools.sh
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export GOTOOLCHAIN=local GOFLAGS=-buildvcs=false CGO_ENABLED=0

sum=$(cd "$here" && { cat go.mod go.sum; find cmd -name '*.go' -print0 | sort -z | xargs -0 cat; } |
  sha256sum | cut -c1-12)
tools=${CAPK_CACHE:-$HOME/.cache/capk}/infra-tools-$sum

stale=0
for dir in "$here"/cmd/*/; do
  [ -x "$tools/$(basename "$dir")" ] || stale=1
done
if [ $stale = 1 ]; then
  echo "building test/infra helper programs into $tools" >&2
  (cd "$here" && go build -trimpath -ldflags "-s -w" -o "$tools/" ./cmd/...)
fi
echo "$tools"
