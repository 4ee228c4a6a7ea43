# shellcheck shell=bash
# Sourced by hosting-cluster.sh: the hosting nodes after the first one (issue
# 19, plan in MULTI-NODE.md). Each is a kubelet, containerd, kube-proxy,
# kube-network-policies and podnet of its own, run as host processes in a network namespace and a mount
# namespace of the node's:
#   - the network namespace holds eth0 (the node's address on $BRIDGE, through
#     a veth whose host side is capk-<zone>), the node's Pod bridge and its
#     Pods' routes; it has no default route, so nothing leaves the machine;
#   - the mount namespace gives the node its own /var/lib/kubelet, which the
#     kubelet uses whatever its --root-dir (device plugins, their checkpoint).
# Node Pods run on them exactly as on the first node: host -> node Pod.
# Zones b, c, ... follow the first node's a; addresses follow its address.
#
# Environment:
#   CAPK_HOSTING_EXTRA_NODES   how many hosting nodes besides the first [0]
#   CAPK_HOSTING_VM_NODE       1: also issue the identity of the cgroup v2
#                              node, a VM that vm/node.sh joins after `up` [0]

# extra_nodes_configure lists the extra nodes' zones in EXTRA_ZONES.
extra_nodes_configure() {
  local count=${CAPK_HOSTING_EXTRA_NODES:-0} zones=(b c d e f g h) i
  [[ "$count" =~ ^[0-9]+$ ]] && ((count <= ${#zones[@]})) ||
    die "CAPK_HOSTING_EXTRA_NODES=$count: give a number from 0 to ${#zones[@]}"
  EXTRA_ZONES=""
  for ((i = 0; i < count; i++)); do EXTRA_ZONES+="${EXTRA_ZONES:+ }${zones[i]}"; done
  VM_NODE=${CAPK_HOSTING_VM_NODE:-0}
  [[ "$VM_NODE" =~ ^[01]$ ]] || die "CAPK_HOSTING_VM_NODE=$VM_NODE: give 0 or 1"
}

# use_vm_node sets VM_NAME and VM_IP, the cgroup v2 node's Node name and
# address on $BRIDGE (vm/node.sh): the first node's address plus 10, above
# the extra nodes'.
use_vm_node() {
  VM_NAME=$NODE_NAME-v2 VM_IP=${NODE_IP%.*}.$((${NODE_IP##*.} + 10))
}

# use_extra_node sets N_* (see use_node) for the node of zone $1: the i-th
# extra node has the first node's address plus i, and runs every program
# through IN_NODE in its namespaces.
use_extra_node() {
  local zone=$1 i=1 z base=${NODE_IP%.*}
  for z in $EXTRA_ZONES; do
    [ "$z" = "$zone" ] && break
    i=$((i + 1))
  done
  N_NAME=$NODE_NAME-$zone N_IP=$base.$((${NODE_IP##*.} + i)) N_ZONE=$zone N_DIR=$S/nodes/$zone N_SFX=-$zone
  N_CGROUP=$CGROUP/$zone N_SERVER_CERT=kubelet-server-$N_NAME N_KUBECONFIG=kubelet-$N_NAME.kubeconfig
  IN_NODE=(nsenter "--net=$S/ns/$zone.net" "--mount=$S/ns/$zone.mnt" --)
}

# pki_nodes is pki's -nodes argument: NAME=IP of every extra node.
pki_nodes() {
  local zone out=""
  for zone in $EXTRA_ZONES; do
    use_extra_node "$zone"
    out+="${out:+,}$N_NAME=$N_IP"
  done
  if [ "$VM_NODE" = 1 ]; then
    use_vm_node
    out+="${out:+,}$VM_NAME=$VM_IP"
  fi
  echo "$out"
}

# extra_node_components prints the PID file names of the given programs on
# every extra node (all four without arguments).
extra_node_components() {
  local zone c programs=("$@")
  [ $# -gt 0 ] || programs=(containerd kubelet kube-proxy kube-network-policies podnet)
  for zone in ${EXTRA_ZONES:-}; do
    for c in "${programs[@]}"; do echo "$c-$zone"; done
  done
}

# extra_node_namespaces creates each node's namespaces and wires its network
# (before any Pod exists: a mount namespace copies the host's mounts once,
# and should not hold on to Pods' mounts of the first node). The namespace
# files live in $S/ns, a private mount of its own as unshare(1) requires.
extra_node_namespaces() {
  local zone
  [ -n "$EXTRA_ZONES" ] || return 0
  mkdir -p "$S/ns"
  mount --bind "$S/ns" "$S/ns"
  mount --make-private "$S/ns"
  for zone in $EXTRA_ZONES; do
    use_extra_node "$zone"
    touch "$S/ns/$zone.net" "$S/ns/$zone.mnt"
    unshare --net="$S/ns/$zone.net" true
    ip link add "capk-$zone" type veth peer name eth0 netns "$S/ns/$zone.net"
    ip link set "capk-$zone" master "$BRIDGE" up
    # Hairpin: with bridge-nf-call-iptables, kube-proxy's DNAT of a NodePort
    # of the first node's address runs while the frame is still on $BRIDGE,
    # and a backend on the sending node is reached back through the port the
    # frame came in by, which a bridge refuses without hairpin mode.
    bridge link set dev "capk-$zone" hairpin on
    in_netns ip link set lo up
    in_netns ip addr add "$N_IP/24" dev eth0
    in_netns ip link set eth0 up
    in_netns ip route add "$SERVICE_CIDR" dev eth0 src "$N_IP"
    in_netns sh -c 'echo 1 >/proc/sys/net/bridge/bridge-nf-call-iptables; echo 1 >/proc/sys/net/ipv4/ip_forward'
    # The kubelet's fixed paths below /var/lib/kubelet get a folder of the node's.
    mkdir -p "$N_DIR/var-lib-kubelet" /var/lib/kubelet
    unshare --mount="$S/ns/$zone.mnt" --propagation private \
      mount --bind "$N_DIR/var-lib-kubelet" /var/lib/kubelet
    extra_node_cgroups
  done
}

in_netns() { nsenter --net="$S/ns/$N_ZONE.net" -- "$@"; }

# extra_node_cgroups gives the node's kubelet its root below the first
# node's group, in every hierarchy, so that `down` sweeps it with the rest.
extra_node_cgroups() {
  local h
  for h in $(cgroup_hierarchies); do mkdir -p "$h/$N_CGROUP"; done
  if [ -d "/sys/fs/cgroup/cpuset/$N_CGROUP" ]; then
    cat "/sys/fs/cgroup/cpuset/$CGROUP/cpuset.cpus" >"/sys/fs/cgroup/cpuset/$N_CGROUP/cpuset.cpus"
    cat "/sys/fs/cgroup/cpuset/$CGROUP/cpuset.mems" >"/sys/fs/cgroup/cpuset/$N_CGROUP/cpuset.mems"
  fi
}

# start_extra_nodes starts every extra node's containerd, kubelet and
# kube-proxy; they join by their client certificates (pki -nodes).
start_extra_nodes() {
  local zone
  for zone in $EXTRA_ZONES; do
    use_extra_node "$zone"
    start_containerd
    import_pause
    start_kubelet
    start_kube_proxy
  done
  use_node
}

# start_extra_netpols runs kube-network-policies on every extra node, judging
# the connections of that node's network namespace (extra_netpol_divert
# diverts them there once it reads its queue).
start_extra_netpols() {
  local zone
  for zone in ${EXTRA_ZONES:-}; do
    use_extra_node "$zone"
    start_netpol
  done
  use_node
}

extra_netpol_divert() {
  local zone
  for zone in ${EXTRA_ZONES:-}; do
    use_extra_node "$zone"
    netpol_divert
  done
  use_node
}

# start_podnets runs podnet on every node, for its routes only: each node
# routes the others' Pod CIDRs through their addresses on $BRIDGE. No CNI
# file (the nodes keep their bridge) and no masquerading (Pods do not leave).
start_podnets() {
  local zone
  [ -n "$EXTRA_ZONES" ] || return 0
  use_node
  start_podnet
  for zone in $EXTRA_ZONES; do
    use_extra_node "$zone"
    start_podnet
  done
  use_node
}

start_podnet() {
  start "podnet$N_SFX" "${IN_NODE[@]}" "$TOOLS/podnet" -kubeconfig "$S/pki/kube-proxy.kubeconfig" \
    -node-name "$N_NAME" -cni-conf "" -masquerade=false -encap never
}

# nodes_ready is true when every node is Ready.
nodes_ready() {
  local zone
  use_node
  node_ready || return 1
  for zone in $EXTRA_ZONES; do
    use_extra_node "$zone"
    node_ready || { use_node; return 1; }
  done
  use_node
}

# reset_all_pods stops every node's Pods through its CRI (see reset_pods),
# the nodes at once: each may wait out its containers' grace period.
reset_all_pods() {
  local zone jobs=()
  use_node
  reset_pods &
  jobs+=($!)
  for zone in ${EXTRA_ZONES:-}; do
    use_extra_node "$zone"
    reset_pods &
    jobs+=($!)
  done
  use_node
  wait "${jobs[@]}"
}

# sweep_extra_nodes removes the host side of every extra node: its veth (its
# namespaces go with sweep_mounts, which unmounts their files).
sweep_extra_nodes() {
  local zone
  for zone in ${EXTRA_ZONES:-}; do ip link del "capk-$zone" 2>/dev/null || true; done
}
