#!/usr/bin/env bash
# The local end-to-end environment in one command: a hosting cluster on this
# machine (test/infra/hosting), kind's node image (kindest/node, built from
# kind's own recipe by test/infra/node-image/build-kind.sh) and the management
# images loaded into its containerd, and Cluster API, cert-manager and this
# provider installed by `clusterctl init` from a local repository, running as
# Pods in that cluster, which is also the management cluster.
#
# usage: test/infra/env.sh up|down|status|build|vm-node [down]
#   build: only build (or find in the cache) what `up` needs, and start nothing
#   vm-node: join the cgroup v2 hosting node to the environment that is up
#            (hosting/vm/node.sh, a VM under qemu's software CPU);
#            `vm-node down` stops it and removes its Node
#
# Environment (defaults in brackets), besides those of hosting-cluster.sh:
#   CAPK_CACHE                cache root for everything built [~/.cache/capk]
#   CAPK_PREVIOUS_KUBERNETES  0: no node image of the previous Kubernetes minor, which
#                             only the upgrade test uses [1]
#   CAPK_FLUX                 0: no Flux controllers, which only the GitOps test uses [1]
#   CAPK_CAPI_OPERATOR        0: no Cluster API Operator, which only the self-hosted
#                             spec uses [1]
#   CAPK_CONTROLLER_CPU       the CPU request given to management Deployments that
#                             request none (see request_controller_cpu) [50m]
#   CAPK_HOSTING_EXTRA_NODES  hosting nodes besides the first (hosting/nodes.sh): the
#                             tests' hosting cluster has three, in zones a, b and c [2]
#   CAPK_HOSTING_VM_NODE      1: `build` also builds the cgroup v2 node's disk and
#                             `up` issues its identity, so that `vm-node` can join
#                             it later [1]
#
# `up` writes $CAPK_HOSTING_STATE/e2e.env (KUBECONFIG, CLUSTERCTL, CLUSTERCTL_CONFIG,
# MANAGEMENT_IMAGES, KUBECTL, KUBERNETES_VERSION, KUBERNETES_NODE_IMAGE,
# KUBERNETES_PREVIOUS_VERSION and KUBERNETES_PREVIOUS_NODE_IMAGE of the minor
# before for the upgrade test, TIMELINE, the program that shows where a
# cluster's time went, FLUX, the folder of Flux's controllers and CRDs,
# CAPI_OPERATOR, the folder of the Cluster API Operator and its CRDs,
# WORKLOAD_IMAGE, the image the e2e's workloads run) for the tests and the
# quickstart. `down` removes everything `up` created.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
state=${CAPK_HOSTING_STATE:-/var/lib/capk-hosting}
export GOTOOLCHAIN=local
export CAPK_HOSTING_EXTRA_NODES=${CAPK_HOSTING_EXTRA_NODES:-2} CAPK_HOSTING_VM_NODE=${CAPK_HOSTING_VM_NODE:-1}
# The image the e2e's workloads run (an echo server, probes with bash), preloaded
# in the node images: kind's node userland (node-image/build-kind.sh).
export CAPK_NODE_WORKLOAD_IMAGE=${CAPK_NODE_WORKLOAD_IMAGE:-localhost/capk/e2e-workload:trixie}

log() { printf '[%s] env: %s\n' "$(date +%T)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

# build builds (or finds in the cache) the node images and the management
# components; both scripts print what they produced.
build() {
  log "building the node images and the management components (cached)"
  TOOLS=$("$here/tools.sh") # both builds use the helper programs: build them once, first
  local node_image_out previous_image_out pid
  node_image_out=$(mktemp)
  previous_image_out=$(mktemp)
  # Two builds at once use 2 cores better than one after the other: one links
  # (single-threaded) or runs debootstrap while the other compiles. The node
  # image of the previous Kubernetes minor (for the upgrade test) comes second:
  # it shares the first one's Debian rootfs and kind's programs.
  { "$here/node-image/build-kind.sh" >"$node_image_out" && build_previous_node_image >"$previous_image_out"; } &
  pid=$!
  MANAGEMENT=$("$here/management/build.sh")
  # The cgroup v2 node's disk, for `vm-node`: its debootstrap is mostly
  # network and dpkg, so it runs beside the compiles too, started once the
  # node image's build is past its own apt-get installs (one dpkg at a time).
  local vm_pid=""
  if [ "$CAPK_HOSTING_VM_NODE" = 1 ]; then
    "$here/hosting/vm/build.sh" >/dev/null &
    vm_pid=$!
  fi
  FLUX="" # the GitOps test's source-controller and kustomize-controller
  [ "${CAPK_FLUX:-1}" = 0 ] || FLUX=$("$repo/test/infra/builds/flux.sh")
  CAPI_OPERATOR="" # the self-hosted spec's installer of its second management cluster
  [ "${CAPK_CAPI_OPERATOR:-1}" = 0 ] || CAPI_OPERATOR=$("$repo/test/infra/builds/capi-operator.sh")
  wait "$pid" || die "building the node images failed"
  [ -z "$vm_pid" ] || wait "$vm_pid" || die "building the cgroup v2 node's disk failed"
  NODE_IMAGE_TAR=$(cat "$node_image_out")
  PREVIOUS_NODE_IMAGE_TAR=$(cat "$previous_image_out")
  rm -f "$node_image_out" "$previous_image_out"
  "$repo/test/infra/builds/kube-network-policies.sh" >/dev/null # the hosting cluster's NetworkPolicy agent
  BIN=$("$repo/hack/kube-binaries.sh" kubectl kubeadm)
  CLUSTERCTL=$("$repo/hack/cluster-api-binaries.sh" clusterctl)/clusterctl
  KUBERNETES_VERSION=$("$BIN/kubeadm" version -o short)
  KUBERNETES_NODE_IMAGE=$(image_name "$NODE_IMAGE_TAR")
  KUBERNETES_PREVIOUS_VERSION="" KUBERNETES_PREVIOUS_NODE_IMAGE=""
  if [ -n "$PREVIOUS_NODE_IMAGE_TAR" ]; then
    KUBERNETES_PREVIOUS_VERSION=$("$(CAPK_KUBE_WRAPPER=kubernetes-previous "$repo/hack/kube-binaries.sh" kubeadm)/kubeadm" \
      version -o short)
    KUBERNETES_PREVIOUS_NODE_IMAGE=$(image_name "$PREVIOUS_NODE_IMAGE_TAR")
  fi
}

# build_previous_node_image builds the node image of the Kubernetes minor
# before (hack/tools/kubernetes-previous) for the upgrade test, unless
# CAPK_PREVIOUS_KUBERNETES=0 (the quickstart needs none).
build_previous_node_image() {
  [ "${CAPK_PREVIOUS_KUBERNETES:-1}" = 0 ] && return
  CAPK_KUBE_WRAPPER=kubernetes-previous "$here/node-image/build-kind.sh"
}

# image_name prints the reference an OCI image-layout tarball holds.
image_name() { # image_name <tarball>
  local name
  name=$(tar -xOf "$1" index.json | sed -n 's/.*"io.containerd.image.name":"\([^"]*\)".*/\1/p')
  [ -n "$name" ] || die "no image name in $1"
  echo "$name"
}

# load_images imports images the kubelet would otherwise pull into every
# hosting node's containerd (management Pods and node Pods may land on any),
# the nodes at once.
load_images() { # load_images <image.tar...>
  local dir pid pids=()
  source_hosting_env
  for dir in "$state" ${EXTRA_ZONES:+$(printf "$state/nodes/%s " $EXTRA_ZONES)}; do
    import_images "$dir/containerd/containerd.sock" "$@" &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid" || die "importing the images failed"; done
}

import_images() { # import_images <containerd socket> <image.tar...>
  local sock=$1 tar
  shift
  for tar in "$@"; do
    log "importing $(basename "$tar") into ${sock#"$state"/}"
    ctr --address "$sock" --namespace k8s.io images import "$tar" >/dev/null
  done
}

# source_hosting_env reads the hosting cluster's settings (EXTRA_ZONES).
source_hosting_env() {
  # shellcheck disable=SC1091
  EXTRA_ZONES=$(source "$state/env" && echo "${EXTRA_ZONES:-}")
}

# clusterctl_init installs the management components the way users do.
clusterctl_init() {
  log "clusterctl init"
  HOME=$state/clusterctl-home "$CLUSTERCTL" init --kubeconfig "$state/kubeconfig" \
    --config "$MANAGEMENT/repository/clusterctl.yaml" --infrastructure kubernetes --wait-providers \
    --wait-provider-timeout 600
}

# request_controller_cpu gives every Deployment of the management cluster
# that requests no CPU (the five of Cluster API and cert-manager request
# none) a small request, as a platform team's management cluster would. A Pod
# without one is BestEffort, and on cgroup v1 all BestEffort Pods together get
# cpu.shares 2 against a node Pod's 102 (it requests 100m): while node Pods keep
# both cores busy, the webhooks time out and the controllers fall minutes behind.
request_controller_cpu() {
  local namespace name cpu patched=()
  while read -r namespace name cpu; do
    [ -z "$cpu" ] || continue
    log "requesting ${CAPK_CONTROLLER_CPU:-50m} CPU for $namespace/$name"
    kubectl_ -n "$namespace" set resources deployment "$name" --requests="cpu=${CAPK_CONTROLLER_CPU:-50m}" >/dev/null
    patched+=("$namespace/$name")
  done < <(kubectl_ get deployments -A -o jsonpath='{range .items[*]}{.metadata.namespace} {.metadata.name} {.spec.template.spec.containers[*].resources.requests.cpu}{"\n"}{end}')
  for name in "${patched[@]}"; do # the new Pods start side by side
    kubectl_ -n "${name%%/*}" rollout status deployment "${name#*/}" --timeout=300s >/dev/null
  done
}

kubectl_() { "$BIN/kubectl" --kubeconfig "$state/kubeconfig" "$@"; }

# wait_webhooks waits until every admission webhook a workload cluster goes
# through answers: `clusterctl init --wait-providers` returns once the
# Deployments are Available, which can be before kube-proxy routes their
# webhook Services. A server-side dry run of a generated cluster calls them all
# and stores nothing.
wait_webhooks() {
  log "waiting for the admission webhooks to answer"
  local manifest deadline=$((SECONDS + 180))
  manifest=$(HOME=$state/clusterctl-home "$CLUSTERCTL" generate cluster webhook-probe \
    --kubeconfig "$state/kubeconfig" --config "$MANAGEMENT/repository/clusterctl.yaml" \
    --infrastructure kubernetes --kubernetes-version "$KUBERNETES_VERSION" --target-namespace default)
  until printf '%s\n' "$manifest" | "$BIN/kubectl" --kubeconfig "$state/kubeconfig" \
    create --dry-run=server -f - >/dev/null 2>"$state/webhook-probe.err"; do
    ((SECONDS < deadline)) || die "the admission webhooks did not answer in 180s: $(cat "$state/webhook-probe.err")"
    sleep 2
  done
}

write_env() {
  cat >"$state/e2e.env" <<ENV
KUBECONFIG=$state/kubeconfig
KUBECTL=$BIN/kubectl
CLUSTERCTL=$CLUSTERCTL
CLUSTERCTL_CONFIG=$MANAGEMENT/repository/clusterctl.yaml
MANAGEMENT_IMAGES=$MANAGEMENT/images
KUBERNETES_VERSION=$KUBERNETES_VERSION
KUBERNETES_NODE_IMAGE=$KUBERNETES_NODE_IMAGE
NODE_IMAGE_TAR=$NODE_IMAGE_TAR
KUBERNETES_PREVIOUS_VERSION=$KUBERNETES_PREVIOUS_VERSION
KUBERNETES_PREVIOUS_NODE_IMAGE=$KUBERNETES_PREVIOUS_NODE_IMAGE
TIMELINE=$TOOLS/timeline
FLUX=$FLUX
CAPI_OPERATOR=$CAPI_OPERATOR
PODNET_MANIFEST=$here/podnet/podnet.yaml
PODNET_IMAGE=$(sed -n 's/^ *image: *//p' "$here/podnet/podnet.yaml")
WORKLOAD_IMAGE=$CAPK_NODE_WORKLOAD_IMAGE
ENV
}

up() {
  local start=$SECONDS node_images
  build
  "$here/hosting/hosting-cluster.sh" up
  load_images "$MANAGEMENT"/images/*.tar
  # The node images (over a GB each, a minute and a half to unpack on three
  # nodes) only workload clusters need: they unpack while the management
  # components start.
  load_images "$NODE_IMAGE_TAR" ${PREVIOUS_NODE_IMAGE_TAR:+"$PREVIOUS_NODE_IMAGE_TAR"} &
  node_images=$!
  clusterctl_init
  request_controller_cpu
  wait_webhooks
  wait "$node_images" || die "importing the node images failed"
  write_env
  log "environment up in $((SECONDS - start))s; settings in $state/e2e.env"
}

down() {
  "$here/hosting/hosting-cluster.sh" down
}

# vm_node joins the cgroup v2 hosting node with the node image unpacked on its
# disk; the management images stay off it (its taint keeps their Pods away).
vm_node() {
  [ -f "$state/e2e.env" ] || die "no environment: run $0 up first"
  if [ "${1:-up}" = down ]; then
    "$here/hosting/vm/node.sh" down
    return
  fi
  local tar
  # shellcheck disable=SC1091
  tar=$(source "$state/e2e.env" && echo "${NODE_IMAGE_TAR:-}")
  [ -n "$tar" ] || die "$state/e2e.env names no NODE_IMAGE_TAR: bring the environment up again"
  "$here/hosting/vm/node.sh" up "$tar"
}

case "${1:-}" in
build) build ;;
up) up ;;
down) down ;;
status) "$here/hosting/hosting-cluster.sh" status ;;
vm-node) vm_node "${2:-up}" ;;
*) echo "usage: $0 up|down|status|build|vm-node [down]" >&2; exit 2 ;;
esac
