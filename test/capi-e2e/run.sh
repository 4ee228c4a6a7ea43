#!/usr/bin/env bash
# Runs Cluster API's own end-to-end specs against the provider (make test-capi-e2e):
# renders the flavors, builds the suite, brings the local environment up (or
# reuses one that runs), runs the specs and, when it brought the environment
# up, takes it down again.
#
# Environment (defaults in brackets):
#   KUSTOMIZE          the kustomize binary [kustomize]
#   CAPI_E2E_OUT       artifacts: config, repository, logs, JUnit XML [<repo>/out/capi-e2e]
#   CAPI_E2E_PROCS     specs run side by side [1]
#   GINKGO_FOCUS       only the specs whose text matches this regular expression
#   GINKGO_SKIP        not the specs whose text matches this regular expression
#   CAPK_E2E_KEEP      1: leave an environment this script started running [0]
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
out=${CAPI_E2E_OUT:-$repo/out/capi-e2e}
state=${CAPK_HOSTING_STATE:-/var/lib/capk-hosting}
export GOTOOLCHAIN=local

log() { printf '[%s] capi-e2e: %s\n' "$(date +%T)" "$*" >&2; }

# render_flavors writes each flavor of data/ (a kustomization over the
# provider's own templates) and the ClusterClass they use into $out/flavors.
render_flavors() {
  local flavor
  rm -rf "$out/flavors" && mkdir -p "$out/flavors"
  for flavor in "$here"/data/cluster-template*/; do
    kustomize_build "$flavor" >"$out/flavors/$(basename "$flavor").yaml"
  done
  kustomize_build "$here/data/clusterclass" >"$out/flavors/clusterclass-kubernetes-default.yaml"
}

# kustomize_build renders a kustomization that takes files from outside its
# folder (the provider's templates/).
kustomize_build() { "${KUSTOMIZE:-kustomize}" build --load-restrictor LoadRestrictionsNone "$1"; }

# environment_up brings the environment up unless one runs; when it does, it
# takes it down again on exit (unless CAPK_E2E_KEEP=1).
environment_up() {
  if [ -f "$state/e2e.env" ] && "$repo/test/infra/env.sh" status >/dev/null 2>&1; then
    log "reusing the running environment ($state)"
    return
  fi
  if [ "${CAPK_E2E_KEEP:-0}" != 1 ]; then
    trap '"$repo/test/infra/env.sh" down >/dev/null 2>&1 || true' EXIT
  fi
  "$repo/test/infra/env.sh" up >&2
}

main() {
  mkdir -p "$out"
  log "rendering the flavors"
  render_flavors
  log "building the suite"
  (cd "$here" && go test -c -tags e2e -o "$out/capi-e2e.test" .)
  environment_up
  local filters=()
  [ -z "${GINKGO_FOCUS:-}" ] || filters+=(--focus "$GINKGO_FOCUS")
  [ -z "${GINKGO_SKIP:-}" ] || filters+=(--skip "$GINKGO_SKIP")
  log "running the specs"
  # --junit-report is relative to --output-dir.
  (cd "$here" && go tool ginkgo run -v --procs "${CAPI_E2E_PROCS:-1}" --timeout 80m "${filters[@]}" \
    --output-dir "$out" --junit-report junit.xml --keep-separate-reports=false \
    "$out/capi-e2e.test" -- \
    -e2e.environment "$state/e2e.env" -e2e.config "$here/config/kubernetes.yaml" \
    -e2e.artifacts-folder "$out")
}

main "$@"
