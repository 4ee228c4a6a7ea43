#!/usr/bin/env bash
# A one-node *hosting* Kubernetes cluster on this machine for the provider's
# end-to-end tests: containerd, etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler, kubelet, kube-proxy and kube-network-policies (NetworkPolicy
# enforcement) run as plain background processes (PID 1 of these machines is
# not systemd), everything under one state folder.
#
# usage: test/infra/hosting/hosting-cluster.sh up|down|status
#
# Environment (defaults in brackets):
#   CAPK_HOSTING_STATE         state folder: PKI, configs, data, logs, PID files [/var/lib/capk-hosting]
#   CAPK_HOSTING_BIN           folder with etcd and the Kubernetes binaries [built/cached by hack/kube-binaries.sh]
#   CAPK_HOSTING_NETPOL_BIN    kube-network-policies binary [built/cached by test/infra/builds/kube-network-policies.sh]
#   CAPK_HOSTING_NETPOL_QUEUE  NFQUEUE number new Pod connections are sent to for a verdict [100]
#   CAPK_HOSTING_NETPOL_V      kube-network-policies log verbosity; 2 logs every verdict [0]
#   CAPK_CACHE                 cache root for built binaries and helper tools [~/.cache/capk]
#   CAPK_HOSTING_NODE_NAME     name of the Node [capk-hosting]
#   CAPK_HOSTING_BRIDGE        bridge holding the node address [capk0]
#   CAPK_HOSTING_NODE_IP       node address; API server, kubelet, NodePorts bind here [10.251.0.1]
#   CAPK_HOSTING_POD_BRIDGE    bridge the CNI plugin attaches Pods to [capkpods0]
#   CAPK_HOSTING_CLUSTER_CIDR  Pod network; the controller-manager gives the Node a /24 of it [10.252.0.0/16]
#   CAPK_HOSTING_SERVICE_CIDR  Service network; its first address is the kubernetes Service [10.253.0.0/16]
#   CAPK_HOSTING_API_PORT      kube-apiserver port on the node address [36443]
#   CAPK_HOSTING_PORT_BASE     etcd client/peer on 127.0.0.1:BASE+79/+80, kubelet on the node address:BASE+250,
#                              health/metrics ports on 127.0.0.1:BASE+248/249/256/257/258/259 [36300]
#   CAPK_HOSTING_CGROUP        cgroup (in every v1 hierarchy) that holds all Pods [capk-hosting]
#   CAPK_HOSTING_PAUSE_IMAGE   sandbox image [registry.k8s.io/pause:<version kubeadm pins>]
#   CAPK_HOSTING_INSTALL       1: apt-get install missing packages; 0: fail instead [1]
#   CAPK_HOSTING_TIMEOUT       seconds `up` waits for each step [180]
#   CAPK_HOSTING_STOP_GRACE    seconds a container gets to stop on `down` [10]
#   CAPK_HOSTING_EXTRA_NODES   hosting nodes besides the first, in zones b, c, ... (nodes.sh) [0]
#   CAPK_HOSTING_VM_NODE       1: the identity of a cgroup v2 node that vm/node.sh joins (nodes.sh) [0]
#
# `up` leaves the admin kubeconfig at $CAPK_HOSTING_STATE/kubeconfig. `down`
# removes everything `up` created except Debian packages; those are listed in
# $CAPK_HOSTING_STATE.packages (remove with `apt-get purge $(cat that-file)`).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../../.." && pwd)
export GOTOOLCHAIN=local
S=${CAPK_HOSTING_STATE:-/var/lib/capk-hosting}
components=(containerd etcd kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy
  kube-network-policies)
packages=(containerd runc containernetworking-plugins iptables conntrack socat)
# Host paths the components may create outside the state folder; `down`
# removes those that did not exist before `up`.
outside_paths=(/var/lib/cni /var/log/containers /var/log/pods /var/lib/kubelet /run/containerd /etc/kubernetes /var/run/kubernetes)
# Kernel settings the kubelet (setupKernelTunables) and `up` change; `down` restores them.
sysctls=(vm/overcommit_memory vm/panic_on_oom kernel/panic kernel/panic_on_oops kernel/keys/root_maxkeys
  kernel/keys/root_maxbytes net/bridge/bridge-nf-call-iptables net/bridge/bridge-nf-call-ip6tables
  net/ipv4/ip_local_reserved_ports fs/inotify/max_user_instances fs/inotify/max_user_watches)

# shellcheck source=nodes.sh
source "$here/nodes.sh"
# shellcheck source=processes.sh
source "$here/processes.sh"

log() { printf '[%s] %s\n' "$(date +%T)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

# ---------------------------------------------------------------- configuration

# configure resolves every setting once; `up` saves the result to $S/env so
# that `down` and `status` act on what was started, whatever their environment.
configure() {
  NODE_NAME=${CAPK_HOSTING_NODE_NAME:-capk-hosting}
  BRIDGE=${CAPK_HOSTING_BRIDGE:-capk0}
  NODE_IP=${CAPK_HOSTING_NODE_IP:-10.251.0.1}
  POD_BRIDGE=${CAPK_HOSTING_POD_BRIDGE:-capkpods0}
  CLUSTER_CIDR=${CAPK_HOSTING_CLUSTER_CIDR:-10.252.0.0/16}
  SERVICE_CIDR=${CAPK_HOSTING_SERVICE_CIDR:-10.253.0.0/16}
  API_PORT=${CAPK_HOSTING_API_PORT:-36443}
  PORT_BASE=${CAPK_HOSTING_PORT_BASE:-36300}
  CGROUP=${CAPK_HOSTING_CGROUP:-capk-hosting}
  TIMEOUT=${CAPK_HOSTING_TIMEOUT:-180}
  STOP_GRACE=${CAPK_HOSTING_STOP_GRACE:-10}
  NETPOL_QUEUE=${CAPK_HOSTING_NETPOL_QUEUE:-100}
  NETPOL_V=${CAPK_HOSTING_NETPOL_V:-0}
  local base=${SERVICE_CIDR%/*}
  SERVICE_IP=${base%.*}.$((${base##*.} + 1))
  extra_nodes_configure
  ports=("$API_PORT")
  local offset
  for offset in 79 80 248 249 250 256 257 258 259; do ports+=($((PORT_BASE + offset))); done
}

save_env() {
  local v
  for v in NODE_NAME BRIDGE NODE_IP POD_BRIDGE CLUSTER_CIDR SERVICE_CIDR SERVICE_IP API_PORT PORT_BASE CGROUP \
    TIMEOUT STOP_GRACE BIN TOOLS PAUSE_IMAGE NETPOL NETPOL_QUEUE NETPOL_V EXTRA_ZONES VM_NODE; do
    printf '%s=%q\n' "$v" "${!v}"
  done >"$S/env"
}

# load_env reads what `up` saved; false when there is no (complete) state.
load_env() {
  [ -f "$S/env" ] || return 1
  # shellcheck disable=SC1091
  source "$S/env"
}

kubectl_() { "$BIN/kubectl" --kubeconfig "$S/kubeconfig" "$@"; }

# ---------------------------------------------------------------- processes

# start runs a component in its own session (so it outlives the caller's
# terminal and process group) with its log and PID file in the state folder.
# It must not inherit the lock's file descriptor, or the lock outlives us.
start() {
  local name=$1
  shift
  setsid "$@" </dev/null >"$S/logs/$name.log" 2>&1 9<&- &
  echo $! >"$S/pids/$name.pid"
}

# wait_for polls a command until it succeeds or $TIMEOUT seconds pass.
wait_for() {
  local what=$1 deadline=$((SECONDS + TIMEOUT))
  shift
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || die "timed out after ${TIMEOUT}s waiting for $what (logs: $S/logs)"
    sleep 0.5
  done
}

# ---------------------------------------------------------------- prerequisites

# install_packages installs the Debian packages that are missing and appends
# the names dpkg did not know before to $S.packages, so they can be purged.
install_packages() {
  local missing=() p before
  for p in "${packages[@]}"; do
    [ "$(dpkg-query -W -f '${Status}' "$p" 2>/dev/null)" = "install ok installed" ] || missing+=("$p")
  done
  [ ${#missing[@]} -gt 0 ] || return 0
  [ "${CAPK_HOSTING_INSTALL:-1}" = 1 ] || die "missing packages: ${missing[*]}"
  log "installing ${missing[*]}"
  before=$(dpkg-query -W -f '${Package}\n' | sort)
  apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null ||
    { apt-get update >/dev/null && apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null; }
  comm -13 <(echo "$before") <(dpkg-query -W -f '${Package}\n' | sort) >>"$S.packages"
}

# kube_binaries builds (or finds cached) etcd and the Kubernetes binaries.
kube_binaries() {
  if [ -n "${CAPK_HOSTING_BIN:-}" ]; then
    BIN=$CAPK_HOSTING_BIN
  else
    BIN=$("$repo/hack/kube-binaries.sh" etcd kube-apiserver kube-controller-manager kube-scheduler kubelet \
      kube-proxy kubectl kubeadm)
  fi
  local b
  for b in etcd kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl; do
    [ -x "$BIN/$b" ] || die "$BIN/$b is missing"
  done
}

# netpol_binary builds (or finds cached) kube-network-policies.
netpol_binary() {
  NETPOL=${CAPK_HOSTING_NETPOL_BIN:-$("$repo/test/infra/builds/kube-network-policies.sh")}
  [ -x "$NETPOL" ] || die "$NETPOL is missing"
}

# helper_tools builds the Go helpers of test/infra once per source revision.
helper_tools() {
  TOOLS=$("$here/../tools.sh")
}

# pause_image is the sandbox image the kubelet's release expects: kubeadm of
# the same release pins it, so ask kubeadm instead of hard-coding a version.
pause_image() {
  PAUSE_IMAGE=${CAPK_HOSTING_PAUSE_IMAGE:-}
  [ -n "$PAUSE_IMAGE" ] && return 0
  local version
  version=$("$BIN/kubelet" --version | awk '{print $2}')
  PAUSE_IMAGE=$("$BIN/kubeadm" config images list --kubernetes-version "$version" 2>/dev/null | grep '/pause:') ||
    die "cannot learn the pause image from kubeadm; set CAPK_HOSTING_PAUSE_IMAGE"
}

# ---------------------------------------------------------------- host state

# snapshot records what `down` must restore: kernel settings, which outside
# paths existed, and which iptables tables existed.
snapshot() {
  local s p
  mkdir -p "$S/restore"
  for s in "${sysctls[@]}"; do printf '%s\t%s\n' "$s" "$(cat "/proc/sys/$s")"; done >"$S/restore/sysctl"
  for p in "${outside_paths[@]}"; do [ -e "$p" ] || echo "$p"; done >"$S/restore/absent-paths"
  "$TOOLS/nft-prune" -list >"$S/restore/nft-tables" 2>/dev/null || true
}

# network creates the bridge that holds the node address (nothing else uses
# it, so traffic stays on this machine) and routes the Service network to it
# so host-to-ClusterIP traffic never depends on the default route.
network() {
  ip link add "$BRIDGE" type bridge
  ip addr add "$NODE_IP/24" dev "$BRIDGE" # a /24 keeps room for more host-side addresses
  ip link set "$BRIDGE" up
  ip route add "$SERVICE_CIDR" dev "$BRIDGE" src "$NODE_IP"
  # Pod-to-Service traffic between Pods on one bridge must pass iptables.
  echo 1 >/proc/sys/net/bridge/bridge-nf-call-iptables
  echo 1 >/proc/sys/net/bridge/bridge-nf-call-ip6tables
}

# inotify_limits raises the inotify limits, which are per user and so shared
# by every node Pod (all root): each one's systemd, containerd and kubelet hold
# inotify instances, and at the default 128 instances the ninth node Pod's
# containerd starts without its CRI service. The values are those kind's
# known issues give for many nodes on one host.
inotify_limits() {
  raise fs/inotify/max_user_instances 8192
  raise fs/inotify/max_user_watches 524288
}

raise() { # raise <sysctl> <minimum>
  [ "$(cat "/proc/sys/$1")" -ge "$2" ] || echo "$2" >"/proc/sys/$1"
}

# reserve_ports makes sure our fixed ports are free, then keeps the kernel from
# handing them out as ephemeral ports (the tests of other sessions bind
# random loopback ports, and every outgoing connection takes one) while we run.
reserve_ports() {
  local p reserved
  for p in "${ports[@]}"; do
    [ -z "$(ss -Hltn "( sport = :$p )")" ] || die "port $p is in use: $(ss -Hltnp "( sport = :$p )")"
  done
  ! queue_bound || die "NFQUEUE $NETPOL_QUEUE is in use (/proc/net/netfilter/nfnetlink_queue); set CAPK_HOSTING_NETPOL_QUEUE"
  reserved=$(cat /proc/sys/net/ipv4/ip_local_reserved_ports)
  p=$(IFS=,; echo "${ports[*]}")
  echo "${reserved:+$reserved,}$p" >/proc/sys/net/ipv4/ip_local_reserved_ports
}

# cgroups creates the kubelet's cgroup root in every v1 hierarchy; the kubelet
# refuses a root that does not exist, and one root of our own makes `down`'s
# cleanup exact. A new cpuset cgroup is empty and must get its parent's CPUs.
cgroups() {
  local h
  for h in $(cgroup_hierarchies); do
    mkdir -p "$h/$CGROUP"
  done
  if [ -d /sys/fs/cgroup/cpuset/"$CGROUP" ]; then
    cat /sys/fs/cgroup/cpuset/cpuset.cpus >/sys/fs/cgroup/cpuset/"$CGROUP"/cpuset.cpus
    cat /sys/fs/cgroup/cpuset/cpuset.mems >/sys/fs/cgroup/cpuset/"$CGROUP"/cpuset.mems
  fi
}

cgroup_hierarchies() { findmnt -rn -t cgroup,cgroup2 -o TARGET | grep '^/sys/fs/cgroup/'; }

# ---------------------------------------------------------------- components

pki() {
  "$TOOLS/pki" -dir "$S/pki" -node-name "$NODE_NAME" -node-ip "$NODE_IP" -service-ip "$SERVICE_IP" \
    -server "https://$NODE_IP:$API_PORT" -nodes "$(pki_nodes)"
  cp "$S/pki/admin.kubeconfig" "$S/kubeconfig"
}

# ---------------------------------------------------------------- node components
#
# Every hosting node runs containerd, the kubelet, kube-proxy and podnet. The
# functions below act on the node use_node chose: the first node (Node
# $NODE_NAME, zone a) keeps its files directly in $S and runs in the host's
# namespaces; nodes.sh adds the others.

# use_node sets N_* for the first node; nodes.sh's use_extra_node for others.
use_node() {
  N_NAME=$NODE_NAME N_IP=$NODE_IP N_ZONE=a N_DIR=$S N_SFX="" N_CGROUP=$CGROUP
  N_SERVER_CERT=kubelet-server N_KUBECONFIG=kubelet.kubeconfig
  IN_NODE=()
}

# containerd_config: only what differs from containerd's defaults. Everything
# lives in the state folder (netns mounts included) so `down` finds it all.
containerd_config() {
  local c=$N_DIR/containerd cri='plugins."io.containerd.grpc.v1.cri"'
  mkdir -p "$c" "$N_DIR/cni/net.d"
  cat >"$c/config.toml" <<EOF
version = 2
root = "$c/root"
state = "$c/state"
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs",
  "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs", "io.containerd.grpc.v1.introspection-debug"]
[grpc]
  address = "$c/containerd.sock"
[plugins."io.containerd.internal.v1.opt"]
  path = "$c/opt"
[$cri]
  sandbox_image = "$PAUSE_IMAGE"
  # CAP_SYS_RESOURCE is not in this VM's bounding set: without this every
  # sandbox fails with "can't get final child's PID from pipe: EOF".
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  disable_hugetlb_controller = true
  tolerate_missing_hugetlb_controller = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
[$cri.cni]
  bin_dir = "/usr/lib/cni"
  conf_dir = "$N_DIR/cni/net.d"
  # containerd renders this once the kubelet passes the Node's podCIDR.
  conf_template = "$N_DIR/cni/template.conflist"
[$cri.containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"
[$cri.containerd.runtimes.runc.options]
  SystemdCgroup = false
  Root = "$c/runc"
EOF
}

# cni_template: a bridge with hairpin mode, so a Pod reaches itself through
# its own Service VIP (a node Pod behind the control-plane Service does).
# No masquerading: Pods have no business leaving this machine.
cni_template() {
  cat >"$N_DIR/cni/template.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "capk-hosting",
  "plugins": [
    {
      "type": "bridge", "bridge": "$POD_BRIDGE", "isGateway": true, "ipMasq": false, "hairpinMode": true,
      "ipam": {"type": "host-local", "dataDir": "$N_DIR/cni/ipam",
               "ranges": [[{"subnet": "{{.PodCIDR}}"}]], "routes": [{"dst": "0.0.0.0/0"}]}
    },
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
EOF
}

start_containerd() {
  containerd_config
  cni_template
  start "containerd$N_SFX" "${IN_NODE[@]}" containerd --config "$N_DIR/containerd/config.toml"
  wait_for "the containerd socket of $N_NAME" ctr_ version
}

ctr_() { ctr --address "$N_DIR/containerd/containerd.sock" --namespace k8s.io "$@"; }

import_pause() {
  [ -f "$S/pause.tar" ] || "$TOOLS/oci-image" -ref "$PAUSE_IMAGE" -out "$S/pause.tar" \
    -file "$TOOLS/pause:/pause:0755" -entrypoint '["/pause"]' -user 65535:65535
  ctr_ images import "$S/pause.tar" >/dev/null
  # Not `ctr | grep -q`: grep's early exit would fail the pipe (pipefail).
  local images
  images=$(ctr_ images ls -q)
  grep -qxF "$PAUSE_IMAGE" <<<"$images" || die "$PAUSE_IMAGE missing after import"
}

start_etcd() {
  local p=$S/pki client=https://127.0.0.1:$((PORT_BASE + 79)) peer=https://127.0.0.1:$((PORT_BASE + 80))
  start etcd "$BIN/etcd" --name "$NODE_NAME" --data-dir "$S/etcd" --unsafe-no-fsync \
    --listen-client-urls "$client" --advertise-client-urls "$client" \
    --listen-peer-urls "$peer" --initial-advertise-peer-urls "$peer" --initial-cluster "$NODE_NAME=$peer" \
    --cert-file "$p/etcd-server.crt" --key-file "$p/etcd-server.key" --trusted-ca-file "$p/etcd-ca.crt" \
    --client-cert-auth --peer-cert-file "$p/etcd-server.crt" --peer-key-file "$p/etcd-server.key" \
    --peer-trusted-ca-file "$p/etcd-ca.crt" --peer-client-cert-auth
}

start_apiserver() {
  local p=$S/pki
  start kube-apiserver "$BIN/kube-apiserver" --bind-address "$NODE_IP" --advertise-address "$NODE_IP" \
    --secure-port "$API_PORT" --etcd-servers "https://127.0.0.1:$((PORT_BASE + 79))" \
    --etcd-cafile "$p/etcd-ca.crt" --etcd-certfile "$p/apiserver-etcd-client.crt" \
    --etcd-keyfile "$p/apiserver-etcd-client.key" \
    --tls-cert-file "$p/apiserver.crt" --tls-private-key-file "$p/apiserver.key" --client-ca-file "$p/ca.crt" \
    --kubelet-client-certificate "$p/apiserver-kubelet-client.crt" \
    --kubelet-client-key "$p/apiserver-kubelet-client.key" --kubelet-certificate-authority "$p/ca.crt" \
    --kubelet-preferred-address-types InternalIP,Hostname \
    --service-account-issuer https://kubernetes.default.svc.cluster.local \
    --service-account-key-file "$p/sa.pub" --service-account-signing-key-file "$p/sa.key" \
    --service-cluster-ip-range "$SERVICE_CIDR" --authorization-mode Node,RBAC \
    --enable-admission-plugins NodeRestriction --allow-privileged=true --cert-dir "$S/pki/apiserver-generated"
}

start_controller_manager() {
  local p=$S/pki k=$S/pki/controller-manager.kubeconfig
  start kube-controller-manager "$BIN/kube-controller-manager" --kubeconfig "$k" \
    --authentication-kubeconfig "$k" --authorization-kubeconfig "$k" \
    --bind-address 127.0.0.1 --secure-port "$((PORT_BASE + 257))" --leader-elect=false \
    --service-account-private-key-file "$p/sa.key" --root-ca-file "$p/ca.crt" \
    --cluster-signing-cert-file "$p/ca.crt" --cluster-signing-key-file "$p/ca.key" \
    --use-service-account-credentials --allocate-node-cidrs --cluster-cidr "$CLUSTER_CIDR" \
    --node-cidr-mask-size 24 --service-cluster-ip-range "$SERVICE_CIDR"
}

start_scheduler() {
  local k=$S/pki/scheduler.kubeconfig
  start kube-scheduler "$BIN/kube-scheduler" --kubeconfig "$k" --authentication-kubeconfig "$k" \
    --authorization-kubeconfig "$k" --bind-address 127.0.0.1 --secure-port "$((PORT_BASE + 259))" \
    --leader-elect=false
}

# kubelet_config: cgroup v1 (failCgroupV1: false) with the cgroupfs driver
# under our own root; webhook authn/authz so `kubectl logs/exec` use RBAC;
# eviction and image GC relaxed so a full-ish disk does not evict node Pods.
kubelet_config() {
  local p=$S/pki
  mkdir -p "$N_DIR/kubelet"
  cat >"$N_DIR/kubelet/config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cgroupDriver: cgroupfs
cgroupRoot: /$N_CGROUP
failCgroupV1: false
failSwapOn: false
containerRuntimeEndpoint: unix://$N_DIR/containerd/containerd.sock
podLogsDir: $N_DIR/kubelet/pod-logs
address: $N_IP
port: $((PORT_BASE + 250))
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $((PORT_BASE + 248))
tlsCertFile: $p/$N_SERVER_CERT.crt
tlsPrivateKeyFile: $p/$N_SERVER_CERT.key
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $p/ca.crt}
authorization: {mode: Webhook}
clusterDomain: cluster.local
evictionHard: {memory.available: 100Mi, nodefs.available: 1%, imagefs.available: 1%, nodefs.inodesFree: 1%}
imageGCHighThresholdPercent: 100
EOF
}

start_kubelet() {
  kubelet_config
  start "kubelet$N_SFX" "${IN_NODE[@]}" "$BIN/kubelet" --config "$N_DIR/kubelet/config.yaml" \
    --kubeconfig "$S/pki/$N_KUBECONFIG" --root-dir "$N_DIR/kubelet/root" --hostname-override "$N_NAME" \
    --node-ip "$N_IP" --node-labels "topology.kubernetes.io/zone=$N_ZONE"
}

# kube-proxy in iptables mode. NodePorts only on the node address; the
# conntrack zeros stop it from rewriting machine-wide conntrack sysctls.
start_kube_proxy() {
  cat >"$N_DIR/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: $S/pki/kube-proxy.kubeconfig}
mode: iptables
clusterCIDR: $CLUSTER_CIDR
hostnameOverride: $N_NAME
healthzBindAddress: 127.0.0.1:$((PORT_BASE + 256))
metricsBindAddress: 127.0.0.1:$((PORT_BASE + 249))
nodePortAddresses: ["$N_IP/32"]
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
EOF
  start "kube-proxy$N_SFX" "${IN_NODE[@]}" "$BIN/kube-proxy" --config "$N_DIR/kube-proxy.yaml"
}

# ---------------------------------------------------------------- network policies
#
# kube-network-policies (https://sigs.k8s.io/kube-network-policies) decides on
# the first packet of every connection in user space, reading them from an
# NFQUEUE. It would divert them itself with an nftables `queue` rule, but this
# kernel has no nft queue expression (CONFIG_NFT_QUEUE): its whole nftables
# batch fails, it logs the error, retries on Pod and NetworkPolicy changes, and
# still reads the queue. The iptables NFQUEUE target works, so the diversion is
# ours: chain CAPK-NETPOL, hooked first into mangle POSTROUTING (after DNAT,
# before SNAT, like its nft chain), for every new connection from or to the Pod
# network, not only those of Pods a policy selects, since we keep no such set.

# netpol_rbac: the agent's ServiceAccount may only list and watch what its
# informers read (without the AdminNetworkPolicy flags it watches no Nodes
# and records no Events).
netpol_rbac() {
  kubectl_ apply -f - >/dev/null <<EOF
apiVersion: v1
kind: ServiceAccount
metadata: {name: kube-network-policies, namespace: kube-system}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: capk:kube-network-policies}
rules:
- {apiGroups: [""], resources: [pods, namespaces], verbs: [list, watch]}
- {apiGroups: [networking.k8s.io], resources: [networkpolicies], verbs: [list, watch]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: capk:kube-network-policies}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: capk:kube-network-policies}
subjects: [{kind: ServiceAccount, name: kube-network-policies, namespace: kube-system}]
EOF
}

# netpol_credentials: the agent only knows rest.InClusterConfig (no kubeconfig
# flag), so it gets what a Pod gets: a ServiceAccount token and the cluster CA
# in $S/netpol/run/secrets/kubernetes.io/serviceaccount, which start_netpol
# shows it at /var/run in a private mount namespace. The token needs the API,
# so unlike the others' client certificates it is made after the API is up.
netpol_credentials() {
  local d=$S/netpol/run/secrets/kubernetes.io/serviceaccount
  mkdir -p "$d"
  netpol_rbac
  (umask 077 && kubectl_ create token kube-network-policies --namespace kube-system --duration 8760h >"$d/token")
  cp "$S/pki/ca.crt" "$d/ca.crt"
  echo kube-system >"$d/namespace"
}

# start_netpol runs the agent fail-closed (no --fail-open: what it cannot
# judge it drops), talking to the API server directly. It runs through a
# symlink in the state folder so its command line names the folder (see
# pid_of). Hiding the host's /run also hides a runtime's NRI socket: v0.8.0
# accepts --disable-nri but never applies it.
start_netpol() {
  [ -e "$S/netpol/kube-network-policies" ] || netpol_credentials
  ln -sfn "$NETPOL" "$S/netpol/kube-network-policies"
  # shellcheck disable=SC2016 # expanded by the inner sh
  start "kube-network-policies$N_SFX" "${IN_NODE[@]}" env KUBERNETES_SERVICE_HOST="$NODE_IP" \
    KUBERNETES_SERVICE_PORT="$API_PORT" \
    unshare --mount --propagation private -- sh -c 'mount --bind "$0" /var/run && exec "$@"' "$S/netpol/run" \
    "$S/netpol/kube-network-policies" --hostname-override "$N_NAME" --nfqueue-id "$NETPOL_QUEUE" \
    --metrics-bind-address "127.0.0.1:$((PORT_BASE + 258))" --netfilter-bug-1766-fix=false --disable-nri \
    -v "$NETPOL_V"
}

# queue_bound is true while a program reads our NFQUEUE (in the node's
# network namespace: each has queues of its own).
queue_bound() {
  "${IN_NODE[@]}" awk -v q="$NETPOL_QUEUE" '$1 == q {found = 1} END {exit !found}' /proc/net/netfilter/nfnetlink_queue
}

# netpol_divert sends new connections from or to the Pod network to the
# agent's queue, once the agent reads it (it does after its caches synced).
# Not diverted: established and related packets (only first packets get a
# verdict) and packets root sends from the host, such as the kubelet's probes
# (the agent's own `meta skuid 0 accept`). No --queue-bypass: if the agent is
# gone, new Pod connections are dropped rather than let through unchecked.
netpol_divert() {
  local c=CAPK-NETPOL ipt=("${IN_NODE[@]}" iptables -w -t mangle)
  wait_for "kube-network-policies on $N_NAME to read NFQUEUE $NETPOL_QUEUE" queue_bound
  "${ipt[@]}" -N "$c"
  "${ipt[@]}" -A "$c" -m conntrack --ctstate ESTABLISHED,RELATED -j RETURN
  "${ipt[@]}" -A "$c" -m owner --uid-owner 0 -j RETURN
  "${ipt[@]}" -A "$c" -s "$CLUSTER_CIDR" -j NFQUEUE --queue-num "$NETPOL_QUEUE"
  "${ipt[@]}" -A "$c" -d "$CLUSTER_CIDR" -j NFQUEUE --queue-num "$NETPOL_QUEUE"
  "${ipt[@]}" -I POSTROUTING 1 -j "$c"
}

# publish_cluster_info writes kube-public/cluster-info as kubeadm does on the
# clusters users host on: a kubeconfig with the API server's address and CA
# and no credentials. Cluster API's KCP remediation spec reads it to tell node
# Pods where the management cluster is. Unlike kubeadm, no Role lets
# anonymous users read it: nothing here joins by bootstrap token.
publish_cluster_info() {
  local ca
  ca=$(base64 -w0 "$S/pki/ca.crt")
  kubectl_ create configmap cluster-info --namespace kube-public --dry-run=client -o yaml \
    --from-literal=kubeconfig="apiVersion: v1
kind: Config
clusters:
- name: \"\"
  cluster:
    server: https://$NODE_IP:$API_PORT
    certificate-authority-data: $ca
contexts: []
users: []
" | kubectl_ apply -f - >/dev/null
}

node_ready() {
  [ "$(kubectl_ get node "$N_NAME" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = True ]
}

# ---------------------------------------------------------------- up

up() {
  local t0=$SECONDS
  configure
  if load_env && running >/dev/null; then
    log "already up; export KUBECONFIG=$S/kubeconfig"
    return 0
  fi
  [ ! -e "$S" ] || { log "removing the leftovers of an earlier run"; down; configure; }
  # Leave a failed start as it is, for its logs, and say how to clean up.
  set -E
  trap 'log "up failed; logs in $S/logs; clean up with: $0 down"' ERR
  mkdir -p "$S/pids" "$S/logs"
  install_packages
  kube_binaries
  netpol_binary
  helper_tools
  pause_image
  save_env
  snapshot
  reserve_ports
  network
  inotify_limits
  cgroups
  extra_node_namespaces
  pki
  bring_up
  log "hosting cluster up in $((SECONDS - t0))s; export KUBECONFIG=$S/kubeconfig"
}

# bring_up starts the components in dependency order but without waiting where
# a component retries on its own, so the slow API server start overlaps the rest.
bring_up() {
  use_node
  start_containerd
  start_etcd
  start_apiserver
  import_pause
  start_kubelet
  start_kube_proxy
  start_extra_nodes
  # These two exit if RBAC's bootstrap policy is not there yet; /readyz
  # includes that post-start hook.
  wait_for "the API server" kubectl_ get --raw /readyz
  publish_cluster_info
  start_controller_manager
  start_scheduler
  start_netpol
  start_extra_netpols
  start_podnets
  wait_for "every Node to be Ready" nodes_ready
  # Pods are refused until the ServiceAccount controller made the default one.
  wait_for "the default ServiceAccount" kubectl_ get serviceaccount default
  netpol_divert
  extra_netpol_divert
}

# ---------------------------------------------------------------- down

down() {
  local t0=$SECONDS
  if ! load_env; then
    [ -e "$S" ] && { log "no $S/env; removing $S"; sweep_mounts; rm -rf "$S"; }
    log "down: nothing to do"
    return 0
  fi
  local nodes containerds
  mapfile -t nodes < <(extra_node_components kubelet kube-proxy kube-network-policies podnet)
  mapfile -t containerds < <(extra_node_components containerd)
  stop_components kubelet kube-proxy kube-network-policies podnet "${nodes[@]}"
  reset_all_pods
  # The API server goes before etcd, so it does not spin on a dead etcd.
  stop_components kube-controller-manager kube-scheduler kube-apiserver
  stop_components etcd containerd "${containerds[@]}"
  kill_leftovers
  sweep_mounts
  sweep_extra_nodes
  sweep_network
  sweep_iptables
  sweep_cgroups
  restore_host
  rm -rf "$S"
  log "hosting cluster down in $((SECONDS - t0))s"
}

# reset_pods stops every Pod through the CRI while containerd still runs, so
# CNI DEL cleans veths, IPs and the CNI cache (the kubelet is stopped first or
# it would recreate them).
reset_pods() {
  pid_of "containerd$N_SFX" >/dev/null || return 0
  [ -x "${TOOLS:-}/cri-reset" ] || return 0
  "$TOOLS/cri-reset" -socket "$N_DIR/containerd/containerd.sock" -grace "${STOP_GRACE}s" ||
    log "cri-reset on $N_NAME failed; falling back to killing what is left"
}

# kill_leftovers ends processes that survived: shims and anything naming the
# state folder, then every process still in our cgroup (containers whose shim
# died). All are ours by construction; each is killed by PID.
kill_leftovers() {
  local pid
  for pid in $(leftover_pids); do
    log "killing leftover pid $pid ($(readlink "/proc/$pid/exe" 2>/dev/null))"
    kill -KILL "$pid" 2>/dev/null || true
  done
  local i
  for ((i = 0; i < 50; i++)); do
    [ -z "$(leftover_pids)" ] && return 0
    sleep 0.1
  done
}

leftover_pids() {
  local d pid
  for d in /proc/[0-9]*; do
    pid=${d#/proc/}
    [ "$pid" != $$ ] && [ "$pid" != "$BASHPID" ] && ours "$pid" && is_daemon "$pid" && echo "$pid"
  done
  cat /sys/fs/cgroup/pids/"$CGROUP"/cgroup.procs 2>/dev/null || true
  find /sys/fs/cgroup/pids/"$CGROUP" -mindepth 1 -name cgroup.procs -exec cat {} + 2>/dev/null || true
}

# is_daemon excludes this script and its children (their command lines name
# the state folder too): only programs `up` started or spawned qualify.
is_daemon() {
  local exe
  exe=$(readlink "/proc/$1/exe" 2>/dev/null) || return 1
  case "$exe" in
  "$BIN/kubectl") return 1 ;;
  "$BIN"/* | "${NETPOL:-/nonexistent}" | "${TOOLS:-/nonexistent}/podnet" | */containerd | */containerd-shim* | */runc) return 0 ;;
  */qemu-system-*) return 0 ;; # the cgroup v2 node's VM (vm/node.sh); its tap goes with it
  esac
  return 1
}

# sweep_mounts unmounts everything below the state folder, deepest first:
# kubelet volumes (tmpfs, projected tokens), netns files, overlay rootfs.
sweep_mounts() {
  local m
  for m in $(findmnt -rn -o TARGET | grep -F "$S/" | sort -r); do
    umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || log "could not unmount $m"
  done
}

sweep_network() {
  local veth
  for veth in $(ip -o link show master "$POD_BRIDGE" 2>/dev/null | awk -F': ' '{print $2}' | cut -d@ -f1); do
    ip link del "$veth" 2>/dev/null || true
  done
  ip link del "$POD_BRIDGE" 2>/dev/null || true
  ip link del "$BRIDGE" 2>/dev/null || true
}

# sweep_iptables removes the KUBE-* chains (kube-proxy, kubelet), CNI-*
# chains (portmap) and CAPK-NETPOL (netpol_divert) with the rules that jump to
# them, in both families, then drops tables that only exist because of us
# (nft backend).
sweep_iptables() {
  local ipt
  command -v iptables >/dev/null || return 0
  "$BIN/kube-proxy" --cleanup --config "$S/kube-proxy.yaml" >/dev/null 2>&1 || true
  for ipt in iptables ip6tables; do
    sweep_chains "$ipt"
  done
  if [ -f "$S/restore/nft-tables" ] && [ -x "${TOOLS:-}/nft-prune" ]; then
    "$TOOLS/nft-prune" -keep "$S/restore/nft-tables" || log "nft-prune failed"
  fi
}

sweep_chains() {
  local ipt=$1 table rule chain
  for table in filter nat mangle raw; do
    # First the rules of built-in chains that jump to ours (-A FORWARD -j KUBE-FORWARD),
    jump_rules "$ipt" "$table" | while read -r rule; do
      eval "\"$ipt\" -t $table -D ${rule#-A }" 2>/dev/null || true
    done
    # then flush all our chains (they jump to each other) and delete them.
    for chain in $(our_chains "$ipt" "$table"); do "$ipt" -t "$table" -F "$chain" 2>/dev/null || true; done
    for chain in $(our_chains "$ipt" "$table"); do "$ipt" -t "$table" -X "$chain" 2>/dev/null || true; done
  done
}

our_chains() { "$1" -t "$2" -S 2>/dev/null | awk '/^-N ((KUBE|CNI)-|CAPK-NETPOL$)/{print $2}'; }

# jump_rules prints the rules of built-in chains that jump to our chains.
jump_rules() {
  "$1" -t "$2" -S 2>/dev/null | grep -E '^-A .* -j ((KUBE|CNI)-|CAPK-NETPOL( |$))' |
    grep -vE '^-A ((KUBE|CNI)-|CAPK-NETPOL )' || true
}

# sweep_cgroups removes our cgroup root and everything below it, deepest first.
sweep_cgroups() {
  local h
  for h in $(cgroup_hierarchies); do
    [ -d "$h/$CGROUP" ] || continue
    find "$h/$CGROUP" -depth -type d -exec rmdir {} + 2>/dev/null || true
    [ ! -d "$h/$CGROUP" ] || log "could not remove $h/$CGROUP"
  done
}

restore_host() {
  local key value p
  if [ -f "$S/restore/sysctl" ]; then
    while IFS=$'\t' read -r key value; do echo "$value" >"/proc/sys/$key" || true; done <"$S/restore/sysctl"
  fi
  if [ -f "$S/restore/absent-paths" ]; then
    while read -r p; do [ -z "$p" ] || rm -rf "$p"; done <"$S/restore/absent-paths"
  fi
}

# ---------------------------------------------------------------- status

# running prints the state of each component; false unless all run.
running() {
  local c pid all=0 extra=()
  [ -z "${EXTRA_ZONES:-}" ] || mapfile -t extra < <(echo podnet; extra_node_components)
  for c in "${components[@]}" "${extra[@]}"; do
    if pid=$(pid_of "$c"); then
      printf '%-24s running (pid %s)\n' "$c" "$pid"
    else
      printf '%-24s stopped\n' "$c"
      all=1
    fi
  done
  return $all
}

status() {
  configure
  if ! load_env; then
    echo "down (no state in $S)"
    return 1
  fi
  local rc=0
  running || rc=1
  echo "kubeconfig: $S/kubeconfig (API https://$NODE_IP:$API_PORT)"
  kubectl_ get nodes -o wide 2>/dev/null || echo "API server not reachable"
  kubectl_ get pods -A -o wide 2>/dev/null || true
  return $rc
}

# lock allows one up or down at a time (per checkout): they must not interleave.
lock() {
  exec 9<"${BASH_SOURCE[0]}"
  flock -n 9 || die "another up or down is running"
}

main() {
  [ "$(id -u)" = 0 ] || die "must run as root (bridges, iptables, cgroups, mounts)"
  case "${1:-}" in
  up) lock; up ;;
  down) lock; configure; down ;;
  status) status ;;
  *) echo "usage: $0 up|down|status" >&2; exit 2 ;;
  esac
}

main "$@"
