#!/usr/bin/env bash
# Measures a cold .ci/run: a fresh clone of this repository's HEAD, run with an
# empty Go module cache, Go build cache, ~/.cache/capk and HOME (golangci-lint's
# cache), all under one folder; prints the duration and .ci/run's exit code.
#
# usage: hack/cold-ci.sh [folder]   (default: /tmp/capk-cold-ci; removed first)
set -uo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
root=${1:-/tmp/capk-cold-ci}
rm -rf "$root"
mkdir -p "$root/home"
export HOME=$root/home CAPK_CACHE=$root/capk GOCACHE=$root/gocache GOMODCACHE=$root/gomod GOFLAGS=-modcacherw
git clone -q "$repo" "$root/repo"
cd "$root/repo"
start=$SECONDS
# Every line of the log gets the time it was written, for the phase durations.
.ci/run 2>&1 | while IFS= read -r line; do printf '%(%T)T %s\n' -1 "$line"; done >"$root/ci.log"
rc=$?
echo "cold .ci/run: exit $rc in $((SECONDS - start))s; log: $root/ci.log"
exit "$rc"
