#!/usr/bin/env bash
# The main job, on a fresh machine: builds everything offline from source, brings
# up the local hosting/management cluster with Cluster API and this provider
# (test/infra/env.sh up), and creates a workload cluster whose nodes are Pods:
# one control plane and two workers from the provider's default template, with
# the podnet pod network installed by a ClusterResourceSet.
#
# usage: test/infra/quickstart.sh          (make quickstart; as root)
#        test/infra/env.sh down            (make quickstart-down) removes it all
#
# Environment: CLUSTER_NAME [quickstart], CLUSTER_NAMESPACE [quickstart],
# WORKER_MACHINE_COUNT [2], plus those of env.sh and hosting-cluster.sh.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
state=${CAPK_HOSTING_STATE:-/var/lib/capk-hosting}
name=${CLUSTER_NAME:-quickstart}
namespace=${CLUSTER_NAMESPACE:-quickstart}

log() { printf '[%s] quickstart: %s\n' "$(date +%T)" "$*" >&2; }

start=$SECONDS
# The quickstart creates no cluster of the previous Kubernetes minor and runs no
# Flux or Cluster API Operator: no need to build them.
# One hosting node is enough for the quickstart, and quicker to load images into.
[ -f "$state/e2e.env" ] || CAPK_PREVIOUS_KUBERNETES=${CAPK_PREVIOUS_KUBERNETES:-0} CAPK_FLUX=${CAPK_FLUX:-0} \
  CAPK_CAPI_OPERATOR=${CAPK_CAPI_OPERATOR:-0} CAPK_HOSTING_EXTRA_NODES=${CAPK_HOSTING_EXTRA_NODES:-0} \
    CAPK_HOSTING_VM_NODE=${CAPK_HOSTING_VM_NODE:-0} "$here/env.sh" up
set -a
# shellcheck disable=SC1091
source "$state/e2e.env"
set +a
export HOME=${HOME:-/root}

# timeline prints where the time to Available went, per machine, and writes it
# as JSON and as a Gantt chart (test/infra/cmd/timeline) under out/.
timeline() {
  local out=$here/../../out
  mkdir -p "$out"
  log "timeline: $out/quickstart-timeline.svg and .json"
  "${TIMELINE:-$("$here/tools.sh")/timeline}" -kubeconfig "$KUBECONFIG" -namespace "$namespace" -cluster "$name" \
    -json "$out/quickstart-timeline.json" -svg "$out/quickstart-timeline.svg" || log "no timeline (see above)"
}

log "namespace $namespace (Pod Security: privileged, node Pods are) and the podnet ClusterResourceSet"
"$KUBECTL" create namespace "$namespace" --dry-run=client -o yaml | "$KUBECTL" apply -f -
"$KUBECTL" label namespace "$namespace" pod-security.kubernetes.io/enforce=privileged --overwrite
"$KUBECTL" -n "$namespace" create configmap podnet --from-file=podnet.yaml="$PODNET_MANIFEST" \
  --dry-run=client -o yaml | "$KUBECTL" apply -f -
"$KUBECTL" -n "$namespace" apply -f "$here/podnet/clusterresourceset.yaml"

log "cluster $namespace/$name: clusterctl generate cluster | kubectl apply"
# Small CPU requests: the hosting node has 2 cores (requests, not limits).
CAPK_NODE_CPU=${CAPK_NODE_CPU:-100m} "$CLUSTERCTL" generate cluster "$name" --config "$CLUSTERCTL_CONFIG" --infrastructure kubernetes \
  --target-namespace "$namespace" --kubernetes-version "$KUBERNETES_VERSION" \
  --control-plane-machine-count 1 --worker-machine-count "${WORKER_MACHINE_COUNT:-2}" | "$KUBECTL" apply -f -
"$KUBECTL" -n "$namespace" label cluster "$name" cni=podnet --overwrite

log "waiting for the Cluster to be Available"
"$KUBECTL" -n "$namespace" wait cluster "$name" --for=condition=Available --timeout=20m
"$KUBECTL" -n "$namespace" wait machines -l cluster.x-k8s.io/cluster-name="$name" \
  --for=jsonpath='{.status.phase}'=Running --timeout=10m
"$CLUSTERCTL" get kubeconfig "$name" -n "$namespace" >"$state/$name.kubeconfig"
"$KUBECTL" --kubeconfig "$state/$name.kubeconfig" wait nodes --all --for=condition=Ready --timeout=5m
"$KUBECTL" --kubeconfig "$state/$name.kubeconfig" get nodes -o wide
"$CLUSTERCTL" describe cluster "$name" -n "$namespace" || true
timeline
log "done in $((SECONDS - start))s"
cat <<EOF
The workload cluster's kubeconfig:   $state/$name.kubeconfig
The management cluster's kubeconfig: $KUBECONFIG
Remove everything:                   sudo test/infra/env.sh down
EOF
