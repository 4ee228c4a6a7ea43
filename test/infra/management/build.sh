#!/usr/bin/env bash
# Builds everything `clusterctl init --infrastructure kubernetes` installs, for a
# machine with no registry and no GitHub: the images as OCI tarballs (to import
# into a containerd) and a local clusterctl repository with cert-manager, Cluster
# API core, kubeadm bootstrap, kubeadm control plane and this provider.
#
# usage: test/infra/management/build.sh        prints the output folder
#
#   ctr -n k8s.io images import <folder>/images/*.tar     (on every node)
#   clusterctl init --infrastructure kubernetes --config <folder>/repository/clusterctl.yaml
#
# Environment (defaults in brackets):
#   CAPK_CACHE   cache root for binaries and the output [~/.cache/capk]
#   CAPK_IMAGE   reference of the provider's manager image [the Makefile's
#                RELEASE_IMAGE, the default of the release manifests]
#
# Output, <cache>/management-<hash>/ (see README.md next to this script):
#   images/<name>.tar              one OCI image-layout tarball per image a Deployment uses
#   repository/clusterctl.yaml     providers, cert-manager and CAPK_IMAGE, all local
#   repository/<provider-label>/<version>/...
#   repository/infrastructure-kubernetes/v0.1.0/   the previous release, for the upgrade test
#
# The binaries come from the Go module proxy (hack/cluster-api-binaries.sh,
# test/infra/builds/cert-manager.sh), the provider's artifacts from `make
# release-manifests image`, the images from test/infra/cmd/oci-image. The folder
# is named by a hash of all inputs: a warm call only hashes. clusterctl.yaml holds
# absolute file:// URLs, so the folder must not be moved.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../../.." && pwd)
cache=${CAPK_CACHE:-$HOME/.cache/capk}
# The provider's release before the current one (metadata.yaml), for the upgrade test.
previous_version=v0.1.0
# Where CAPI's release manifests take the managers' images from.
capi_registry=registry.k8s.io/cluster-api
export GOTOOLCHAIN=local GOFLAGS=-buildvcs=false

log() { printf '[%s] management: %s\n' "$(date +%T)" "$*" >&2; }
die() { log "error: $*"; exit 1; }
hash_of() { sha256sum | cut -c1-12; }

# make_var prints a variable of the project's Makefile (environment overrides
# such as CAPK_IMAGE apply, as they do for its targets).
make_var() {
  # shellcheck disable=SC2016 # $($*) is make syntax
  make -s --no-print-directory -C "$repo" --eval 'print-%: ; @echo $($*)' "print-$1"
}

module_dir() { # module_dir <wrapper module folder> <module path>: its source in the module cache
  (cd "$1" && go list -m -f '{{.Dir}}' "$2")
}

# ---------------------------------------------------------------- inputs

inputs() {
  CAPI_BIN=$("$repo/hack/cluster-api-binaries.sh" all)
  CM_BIN=$("$repo/test/infra/builds/cert-manager.sh")
  TOOLS=$("$here/../tools.sh")
  CAPI_VERSION=${CAPI_BIN##*/cluster-api-}
  CM_VERSION=${CM_BIN##*/cert-manager-}
  CAPI_SOURCE=$(module_dir "$repo/hack/tools/clusterctl" sigs.k8s.io/cluster-api)
  CM_SOURCE=$(module_dir "$here/../builds/cert-manager" github.com/cert-manager/cert-manager)
  CAPK_VERSION=$(make_var VERSION)
  CAPK_IMAGE=$(make_var CAPK_IMAGE)
}

# provider_sources lists what `make release-manifests image` reads, so that a
# change to any of them changes the output folder.
provider_sources() {
  (cd "$repo" && find Makefile go.mod go.sum metadata.yaml cmd api internal config templates -type f \
    ! -name '*_test.go' -print0 | sort -z | xargs -0 sha256sum)
}

input_key() {
  {
    cat "${BASH_SOURCE[0]}" "$here/verify.sh" "$here/cert-manager.yaml"
    echo "$CAPI_VERSION $CM_VERSION $CAPK_VERSION $CAPK_IMAGE $TOOLS"
    (cd "$CAPI_BIN" && sha256sum cluster-api-controller kubeadm-bootstrap-controller kubeadm-control-plane-controller)
    (cd "$CM_BIN" && sha256sum controller cainjector)
    provider_sources
  } | hash_of
}

# ---------------------------------------------------------------- images

# static_image packs one static binary as a distroless-like image: the binary
# alone, run as 65532 (distroless' nonroot, what the Deployments' runAsNonRoot
# expects), no /etc/passwd.
static_image() { # static_image <ref> <binary> <path in image> <out>
  "$TOOLS/oci-image" -ref "$1" -out "$4" -file "$2:$3:0755" -entrypoint "[\"$3\"]" -user 65532:65532
}

# capi_image_ref is the reference CAPI's release manifests use for a manager.
capi_image_ref() { echo "$capi_registry/$1:$CAPI_VERSION"; }

# cert-manager's images are our own mains, not upstream's binaries, so they are
# not named like upstream's quay.io images.
cert_manager_image_ref() { echo "localhost/capk/cert-manager-$1:$CM_VERSION"; }

images() {
  local dir=$1 manager
  mkdir -p "$dir"
  for manager in cluster-api-controller kubeadm-bootstrap-controller kubeadm-control-plane-controller; do
    static_image "$(capi_image_ref "$manager")" "$CAPI_BIN/$manager" /manager "$dir/$manager.tar"
  done
  static_image "$(cert_manager_image_ref controller)" "$CM_BIN/controller" /cert-manager-controller \
    "$dir/cert-manager-controller.tar"
  static_image "$(cert_manager_image_ref cainjector)" "$CM_BIN/cainjector" /cert-manager-cainjector \
    "$dir/cert-manager-cainjector.tar"
  make -s -C "$repo" image CAPK_IMAGE="$CAPK_IMAGE" IMAGE_TAR="$dir/capk-manager.tar" >&2
}

# ---------------------------------------------------------------- Cluster API

# capi_components renders a CAPI provider the way its release does: kustomize
# over <component>/config/default with the image set to the release tag and the
# pull policy to IfNotPresent (upstream's `make manifest-modification`), here as
# an overlay because the module cache is read-only.
capi_components() { # capi_components <component dir> <image name> <out file>
  local overlay
  overlay=$(mktemp -d "$WORK/overlay.XXXXXX")
  cat >"$overlay/kustomization.yaml" <<EOF
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- $(realpath --relative-to="$overlay" "$CAPI_SOURCE/$1/config/default")
images:
- name: gcr.io/k8s-staging-cluster-api/$2
  newName: $capi_registry/$2
  newTag: $CAPI_VERSION
patches:
- target:
    kind: Deployment
  patch: |-
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: manager
    spec:
      template:
        spec:
          containers:
          - name: manager
            imagePullPolicy: IfNotPresent
EOF
  "$KUSTOMIZE" build "$overlay" >"$3"
  grep -q "image: $(capi_image_ref "$2")\$" "$3" || die "$1: the manager image is not $(capi_image_ref "$2")"
}

capi_providers() {
  local base=$1
  mkdir -p "$base/cluster-api/$CAPI_VERSION" "$base/bootstrap-kubeadm/$CAPI_VERSION" \
    "$base/control-plane-kubeadm/$CAPI_VERSION"
  capi_components core cluster-api-controller "$base/cluster-api/$CAPI_VERSION/core-components.yaml"
  capi_components bootstrap/kubeadm kubeadm-bootstrap-controller \
    "$base/bootstrap-kubeadm/$CAPI_VERSION/bootstrap-components.yaml"
  capi_components controlplane/kubeadm kubeadm-control-plane-controller \
    "$base/control-plane-kubeadm/$CAPI_VERSION/control-plane-components.yaml"
  local dir
  for dir in cluster-api bootstrap-kubeadm control-plane-kubeadm; do
    cp "$CAPI_SOURCE/metadata.yaml" "$base/$dir/$CAPI_VERSION/metadata.yaml"
  done
}

# ---------------------------------------------------------------- this provider

capk_provider() {
  local dir=$1/infrastructure-kubernetes/$CAPK_VERSION
  mkdir -p "$dir"
  (cd "$repo/out" && cp infrastructure-components.yaml metadata.yaml cluster-template*.yaml clusterclass-*.yaml "$dir/")
}

# capk_previous_release writes the release before, v0.1, for the upgrade test
# (test/e2e/upgrade_test.go, docs/upgrade.md): the same manager and templates,
# with CRDs that store v1alpha1 as v0.1's did, i.e. the +kubebuilder:storageversion
# marker on v1alpha1. Its components are what `clusterctl init --infrastructure
# kubernetes:v0.1.0` installs.
capk_previous_release() {
  local dir=$1/infrastructure-kubernetes/$previous_version
  mkdir -p "$dir"
  "$TOOLS/crd-storage" -group infrastructure.cluster.x-k8s.io -version v1alpha1 \
    <"$repo/out/infrastructure-components.yaml" >"$dir/infrastructure-components.yaml"
  (cd "$repo/out" && cp metadata.yaml cluster-template*.yaml clusterclass-*.yaml "$dir/")
}

# ---------------------------------------------------------------- cert-manager

# cert_manager_provider writes cert-manager.yaml: our namespace, service
# accounts, RBAC and Deployments (cert-manager.yaml next to this script) and
# upstream's CRDs. clusterctl adds its labels and the version annotation itself
# when it installs the file.
cert_manager_provider() {
  local dir=$1/cert-manager/$CM_VERSION crd
  mkdir -p "$dir"
  {
    sed -e '/^#/d' -e "s|@VERSION@|$CM_VERSION|g" \
      -e "s|@CONTROLLER_IMAGE@|$(cert_manager_image_ref controller)|g" \
      -e "s|@CAINJECTOR_IMAGE@|$(cert_manager_image_ref cainjector)|g" "$here/cert-manager.yaml"
    for crd in "$CM_SOURCE"/deploy/crds/*.yaml; do
      echo "---"
      grep -v '^---$' "$crd"
    done
  } >"$dir/cert-manager.yaml"
}

# ---------------------------------------------------------------- clusterctl.yaml

# clusterctl_config names every provider by a file:// URL of its final place
# (keys: cmd/clusterctl/client/config/{providers,cert_manager}_client.go).
# CAPK_IMAGE is the image the images/ folder holds; an environment variable of
# the same name still overrides it. CLUSTER_TOPOLOGY turns on Cluster API's
# ClusterClass support (its feature gate is off by default), which the topology
# flavor and Cluster API's ClusterClass specs need; EXP_MACHINE_TAINT_PROPAGATION
# lets Machines carry taints for their Nodes (KCPAndMachineDeploymentRolloutSpec).
clusterctl_config() { # clusterctl_config <repository dir in its final place> <out>
  cat >"$2" <<EOF
providers:
- name: cluster-api
  type: CoreProvider
  url: file://$1/cluster-api/$CAPI_VERSION/core-components.yaml
- name: kubeadm
  type: BootstrapProvider
  url: file://$1/bootstrap-kubeadm/$CAPI_VERSION/bootstrap-components.yaml
- name: kubeadm
  type: ControlPlaneProvider
  url: file://$1/control-plane-kubeadm/$CAPI_VERSION/control-plane-components.yaml
- name: kubernetes
  type: InfrastructureProvider
  url: file://$1/infrastructure-kubernetes/$CAPK_VERSION/infrastructure-components.yaml
cert-manager:
  url: file://$1/cert-manager/$CM_VERSION/cert-manager.yaml
  version: $CM_VERSION
CAPK_IMAGE: $CAPK_IMAGE
CLUSTER_TOPOLOGY: "true"
EXP_MACHINE_TAINT_PROPAGATION: "true"
CLUSTERCTL_DISABLE_VERSIONCHECK: "true"
EOF
}

# ---------------------------------------------------------------- main

build() { # build <partial folder> <final folder>
  log "building the provider's release artifacts and image"
  make -s -C "$repo" release-manifests >&2
  KUSTOMIZE=$(make_var KUSTOMIZE)
  log "building images"
  images "$1/images"
  log "writing the clusterctl repository"
  capi_providers "$1/repository"
  capk_provider "$1/repository"
  capk_previous_release "$1/repository"
  cert_manager_provider "$1/repository"
  clusterctl_config "$2/repository" "$1/repository/clusterctl.yaml"
}

main() {
  inputs
  local out
  out=$cache/management-$(input_key)
  if [ ! -d "$out" ]; then
    WORK=$(mktemp -d "$cache/.management.XXXXXX")
    trap 'rm -rf "$WORK"' EXIT
    build "$WORK/out" "$out"
    # -T: when a concurrent call got there first, keep its folder rather than nest ours in it.
    mv -T "$WORK/out" "$out" 2>/dev/null || log "$out was written meanwhile by another call"
    "$here/verify.sh" "$out" || { rm -rf "$out"; die "verification of $out failed"; }
    log "wrote $out ($(du -sh "$out" | cut -f1))"
  fi
  echo "$out"
}

main
