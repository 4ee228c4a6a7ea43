#!/usr/bin/env bash
# Builds etcd and Kubernetes binaries from the Go module proxy (no downloads from
# GitHub or registry.k8s.io are possible here) into a cache folder named for their
# versions, skips every binary that is already there with the right version, and
# prints the folder.
#
# usage: hack/kube-binaries.sh [binary...]     (default: etcd kube-apiserver)
# env:   CAPK_CACHE         cache root (default: ~/.cache/capk)
#        CAPK_KUBE_WRAPPER  wrapper module under hack/tools/ that pins Kubernetes
#                           (default: kubernetes; kubernetes-previous pins the minor
#                           before it, for the workload upgrade test)
#
# The versions come from the committed wrapper modules under hack/tools/, whose
# go.mod/go.sum make the build reproducible.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
kube_module="$root/hack/tools/${CAPK_KUBE_WRAPPER:-kubernetes}"
[ -f "$kube_module/go.mod" ] || { echo "no wrapper module $kube_module" >&2; exit 2; }
etcd_module="$root/hack/tools/etcd"

module_version() { # module_version <wrapper dir> <module path>
  (cd "$1" && go list -m -f '{{.Version}}' "$2")
}

kube_version=$(module_version "$kube_module" k8s.io/kubernetes)
etcd_version=$(module_version "$etcd_module" go.etcd.io/etcd/server/v3)
out="${CAPK_CACHE:-$HOME/.cache/capk}/kubernetes-${kube_version}-etcd-${etcd_version}"
mkdir -p "$out"

export GOTOOLCHAIN=local GOFLAGS=-buildvcs=false CGO_ENABLED=0

# has_version <binary> <version>: the binary exists and reports that version.
has_version() {
  [ -x "$out/$1" ] || return 1
  local reported
  case "$1" in
    etcd) reported=$("$out/etcd" --version 2>/dev/null | head -1) ;;
    kubectl) reported=$("$out/kubectl" version --client 2>/dev/null | head -1) ;;
    kubeadm) reported=$("$out/kubeadm" version -o short 2>/dev/null) ;;
    *) reported=$("$out/$1" --version 2>/dev/null | head -1) ;;
  esac
  [[ "$reported" == *"${2#v}"* ]]
}

build_etcd() {
  echo "building etcd $etcd_version into $out" >&2
  (cd "$etcd_module" && go build -trimpath -ldflags "-s -w" -o "$out/etcd" go.etcd.io/etcd/server/v3)
}

kube_ldflags() {
  local minor build_date flags="-s -w"
  minor=$(echo "$kube_version" | cut -d. -f2)
  build_date=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    flags+=" -X $pkg.gitVersion=$kube_version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
    flags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=$build_date"
  done
  echo "$flags"
}

build_kube() { # build_kube <command...>
  local packages=()
  for cmd in "$@"; do packages+=("k8s.io/kubernetes/cmd/$cmd"); done
  echo "building $* $kube_version into $out (a cold build takes several minutes)" >&2
  (cd "$kube_module" && go build -trimpath -tags selinux,notest,grpcnotrace \
    -ldflags "$(kube_ldflags)" -o "$out/" "${packages[@]}")
}

wanted=("$@")
[ ${#wanted[@]} -gt 0 ] || wanted=(etcd kube-apiserver)

missing_kube=()
for binary in "${wanted[@]}"; do
  case "$binary" in
    etcd) has_version etcd "$etcd_version" || build_etcd ;;
    kube-apiserver|kube-controller-manager|kube-scheduler|kube-proxy|kubelet|kubeadm|kubectl)
      has_version "$binary" "$kube_version" || missing_kube+=("$binary") ;;
    *) echo "unknown binary $binary" >&2; exit 2 ;;
  esac
done
[ ${#missing_kube[@]} -eq 0 ] || build_kube "${missing_kube[@]}"

for binary in "${wanted[@]}"; do
  if [ "$binary" = etcd ]; then has_version "$binary" "$etcd_version"; else has_version "$binary" "$kube_version"; fi ||
    { echo "$binary in $out does not report the expected version" >&2; exit 1; }
done
echo "$out"
