#!/usr/bin/env bash
# Checks, without a cluster, that a folder written by build.sh serves
# `clusterctl init` offline:
#   - clusterctl (the built one, reading no user configuration) generates every
#     provider from the local repository and lists the cluster templates;
#   - every image a Deployment of the repository uses (after clusterctl's
#     variable processing, as `clusterctl init` would install it) has a tarball in
#     images/ whose io.containerd.image.name is that image's full reference;
#   - no Deployment needs a registry: no Always/Never pull policy, no :latest.
#
# usage: test/infra/management/verify.sh <folder printed by build.sh>
#
# Needs only bash, tar, grep, sed and awk besides clusterctl.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../../.." && pwd)
folder=$(cd "${1:?usage: verify.sh <folder printed by build.sh>}" && pwd)
config=$folder/repository/clusterctl.yaml
failures=0

fail() { echo "verify: FAIL: $*" >&2; failures=$((failures + 1)); }
pass() { echo "verify: ok: $*" >&2; }

# clusterctl runs the built clusterctl with a home of its own, so that no
# ~/.config/cluster-api/clusterctl.yaml, overrides folder or cache is read.
clusterctl() {
  HOME=$SCRATCH XDG_CONFIG_HOME=$SCRATCH/config "$CLUSTERCTL" --config "$config" "$@"
}

# deployment_values <field> <yaml file>: the values of <field>: (scalars) in the
# Deployment documents of a multi-document file.
deployment_values() {
  awk -v field="$1" '
    function flush() { if (kind == "Deployment") for (i = 1; i <= n; i++) print values[i]; kind = ""; n = 0 }
    /^---/ { flush(); next }
    /^kind:/ { kind = $2 }
    $0 ~ "^[ ]*(- )?" field ":[ ]+[^ ]" {
      value = $0; sub("^[ ]*(- )?" field ":[ ]+", "", value); gsub(/["'\'']/, "", value); values[++n] = value
    }
    END { flush() }' "$2"
}

# containerd_name: the fully qualified name containerd stores a reference under,
# as test/infra/cmd/oci-image writes it (busybox -> docker.io/library/busybox:latest).
containerd_name() {
  local ref=$1 domain rest
  domain=${ref%%/*}
  if [[ "$ref" == */* && ( "$domain" == *.* || "$domain" == *:* || "$domain" == localhost ) ]]; then
    rest=${ref#*/}
  else
    domain=docker.io rest=$ref
    [[ "$rest" == */* ]] || rest=library/$rest
  fi
  [[ "${rest##*/}" == *:* || "$rest" == *@* ]] || rest=$rest:latest
  echo "$domain/$rest"
}

# tarball_names prints "<name> <tarball>" for every image tarball in images/.
tarball_names() {
  local tarball
  for tarball in "$folder"/images/*.tar; do
    tar -xOf "$tarball" index.json | grep -o '"io.containerd.image.name":"[^"]*"' | cut -d'"' -f4 |
      sed "s|\$| $(basename "$tarball")|"
  done
}

# only_version <provider-label>: the one version folder of a provider.
only_version() { ls "$folder/repository/$1"; }

generate_providers() {
  local capi_version capk_version
  capi_version=$(only_version cluster-api)
  local -a providers=("core cluster-api:$capi_version" "bootstrap kubeadm:$capi_version"
    "control-plane kubeadm:$capi_version")
  # this provider has two releases: the current one and v0.1 for the upgrade test
  for capk_version in $(ls "$folder/repository/infrastructure-kubernetes" | sort -V); do
    providers+=("infrastructure kubernetes:$capk_version")
  done
  local provider type name out
  for provider in "${providers[@]}"; do
    read -r type name <<<"$provider"
    out=$SCRATCH/$type-${name/:/-}.yaml
    if clusterctl generate provider "--$type" "$name" >"$out" 2>"$out.err"; then
      pass "clusterctl generate provider --$type $name"
      GENERATED+=("$out")
    else
      fail "clusterctl generate provider --$type $name: $(tail -1 "$out.err")"
    fi
  done
  # Without a management cluster clusterctl needs the namespace spelled out.
  if clusterctl generate cluster verify --infrastructure "kubernetes:$capk_version" --target-namespace default \
    --list-variables \
    >"$SCRATCH/variables.txt" 2>&1; then
    pass "clusterctl generate cluster --infrastructure kubernetes:$capk_version --list-variables"
  else
    fail "clusterctl generate cluster --list-variables: $(tail -1 "$SCRATCH/variables.txt")"
  fi
}

# cert_manager_file is the cert-manager.yaml clusterctl.yaml points at.
cert_manager_file() {
  sed -n '/^cert-manager:/,/^[^ ]/s|^ *url: *file://||p' "$config"
}

# tarball_for <containerd name>: the tarball in images/ of that name, if any.
tarball_for() { awk -v name="$1" '$1 == name { print $2; exit }' <<<"$TARBALLS"; }

check_images() {
  local file image name tarball policy
  TARBALLS=$(tarball_names)
  for file in "${GENERATED[@]}" "$(cert_manager_file)"; do
    [ -f "$file" ] || { fail "missing $file"; continue; }
    while read -r image; do
      name=$(containerd_name "$image")
      tarball=$(tarball_for "$name")
      if [ -n "$tarball" ]; then
        pass "$image is images/$tarball"
      else
        fail "$image ($(basename "$file")) has no tarball named $name in $folder/images"
      fi
      [[ "$name" != *:latest ]] || fail "$image is :latest, which kubelets pull Always"
    done < <(deployment_values image "$file")
    while read -r policy; do
      [ "$policy" = IfNotPresent ] || fail "$(basename "$file"): a Deployment has imagePullPolicy $policy"
    done < <(deployment_values imagePullPolicy "$file")
  done
}

main() {
  CLUSTERCTL=${CLUSTERCTL:-$("$repo/hack/cluster-api-binaries.sh" clusterctl)/clusterctl}
  SCRATCH=$(mktemp -d)
  trap 'rm -rf "$SCRATCH"' EXIT
  GENERATED=()
  grep -q '^CLUSTERCTL_DISABLE_VERSIONCHECK: "true"$' "$config" || fail "clusterctl.yaml does not disable the version check"
  [ -f "$(cert_manager_file)" ] || fail "cert-manager url of clusterctl.yaml is not a file: $(cert_manager_file)"
  generate_providers
  check_images
  [ "$failures" -eq 0 ] || { echo "verify: $failures failure(s)" >&2; exit 1; }
  echo "verify: $folder is complete" >&2
}

main
