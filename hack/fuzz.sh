#!/usr/bin/env bash
# Runs one fuzz target for a bounded time (go test -fuzz ... -fuzztime).
#
# Go 1.26's fuzz coordinator can fail a target with "context deadline exceeded"
# at the moment -fuzztime runs out, having found nothing: a race between its
# deadline and the workers' context (go.dev/issue/75804, fixed in Go 1.27). A
# real failure writes the failing input to <package>/testdata/fuzz/<target>/.
# So a run that fails with exactly that message and wrote no input is run once
# more; any other failure, or a second one, fails.
#
# usage: hack/fuzz.sh <package>:<target> <fuzztime>
set -uo pipefail

pkg=${1%%:*} target=${1##*:} fuzztime=${2:?usage: hack/fuzz.sh <package>:<target> <fuzztime>}
corpus=$pkg/testdata/fuzz/$target
log=$(mktemp)
trap 'rm -f "$log"' EXIT

inputs() { find "$corpus" -type f 2>/dev/null | wc -l; }

fuzz() {
  go test "$pkg" -run '^$' -fuzz "^$target\$" -fuzztime "$fuzztime" -fuzzminimizetime 1s -parallel 1 2>&1 |
    tee "$log"
  return "${PIPESTATUS[0]}"
}

before=$(inputs)
fuzz && exit 0
if [ "$(inputs)" = "$before" ] && grep -qx '    context deadline exceeded' "$log"; then
  echo "--- $target: the fuzz coordinator's deadline race (go.dev/issue/75804), no failing input; once more"
  fuzz && exit 0
fi
exit 1
