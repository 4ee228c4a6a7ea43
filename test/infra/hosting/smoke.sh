#!/usr/bin/env bash
# Smoke check of the hosting cluster: up, a pause Pod plus a ClusterIP Service,
# API health directly and through the kubernetes Service's ClusterIP (kube-proxy
# on the host), Service traffic host -> Pod and Pod -> itself (hairpin) and
# Pod -> API server, down, and proof that nothing is left. Prints timings.
# With CAPK_HOSTING_EXTRA_NODES (nodes.sh), also every Node Ready in its own
# zone with its own Pod CIDR, and a Pod on each node reaching the others, the
# host reaching it, it reaching the API server through its ClusterIP, and
# every Pod reaching every node's Pod through a NodePort of the first node.
#
# usage: test/infra/hosting/smoke.sh      (same environment as hosting-cluster.sh)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
S=${CAPK_HOSTING_STATE:-/var/lib/capk-hosting}
cluster="$here/hosting-cluster.sh"

log() { printf '[%s] smoke: %s\n' "$(date +%T)" "$*" >&2; }
fail() { log "FAIL: $*"; exit 1; }

# footprint lists what the cluster may leave on the host, so the state after
# `down` can be compared with the state before `up`. Counters and comments
# are dropped from iptables-save; they change on their own.
footprint() {
  echo "## links"; ip -o link show | awk -F': ' '{print $2}' | cut -d@ -f1 | sort
  echo "## addresses"; ip -o addr show | awk '{print $2, $4}' | sort
  echo "## routes"; ip route show | sort
  echo "## mounts"; findmnt -rn -o TARGET | sort
  for ipt in iptables-save ip6tables-save; do
    echo "## $ipt"
    if command -v "$ipt" >/dev/null; then "$ipt" | { grep -v '^#' || true; } | sed 's/\[[0-9]*:[0-9]*\]//'; fi
  done
  echo "## cgroups"; find /sys/fs/cgroup -mindepth 2 -maxdepth 2 -type d -name 'capk*' | sort
  echo "## sysctl"
  sysctl vm.overcommit_memory vm.panic_on_oom kernel.panic kernel.panic_on_oops net.ipv4.ip_local_reserved_ports
}

# our_processes: any process that names the state folder on its command line.
our_processes() {
  local d args
  for d in /proc/[0-9]*; do
    [ "${d#/proc/}" = $$ ] && continue
    mapfile -d '' args 2>/dev/null <"$d/cmdline" || continue
    [[ "${args[*]}" == *"$S/"* ]] && echo "${d#/proc/} ${args[*]:0:6}"
  done
  return 0
}

# workload is a Pod on the first node (check_dataplane finds its network
# namespace among the first node's mounts) and its Service.
workload() {
  cat <<EOF
apiVersion: v1
kind: Pod
metadata: {name: smoke, namespace: default, labels: {app: capk-smoke}}
spec:
  nodeName: $NODE_NAME
  restartPolicy: Never
  automountServiceAccountToken: false
  enableServiceLinks: false
  terminationGracePeriodSeconds: 5
  containers:
  - name: pause
    image: $PAUSE_IMAGE
    imagePullPolicy: Never
    ports: [{containerPort: 8080}]
---
apiVersion: v1
kind: Service
metadata: {name: smoke, namespace: default}
spec:
  selector: {app: capk-smoke}
  ports: [{port: 80, targetPort: 8080}]
EOF
}

check_workload() {
  local k=("$BIN/kubectl" --kubeconfig "$S/kubeconfig") ip eps
  workload | "${k[@]}" apply -f - >/dev/null
  "${k[@]}" wait --for=jsonpath='{.status.phase}'=Running pod/smoke --timeout=120s >/dev/null ||
    fail "Pod not Running: $("${k[@]}" describe pod smoke | tail -20)"
  ip=$("${k[@]}" get pod smoke -o jsonpath='{.status.podIP}')
  [ -n "$ip" ] || fail "Pod has no IP"
  log "Pod smoke Running with IP $ip"
  for _ in $(seq 60); do
    eps=$("${k[@]}" get endpointslices -l kubernetes.io/service-name=smoke -o jsonpath='{.items[*].endpoints[*].addresses[*]}')
    [ "$eps" = "$ip" ] && break
    sleep 0.5
  done
  [ "$eps" = "$ip" ] || fail "Service smoke has endpoints '$eps', want $ip"
  log "Service smoke: ClusterIP $("${k[@]}" get svc smoke -o jsonpath='{.spec.clusterIP}') -> $eps"
}

check_api() {
  [ "$("$BIN/kubectl" --kubeconfig "$S/kubeconfig" get --raw /readyz)" = ok ] || fail "/readyz is not ok"
  log "/readyz ok"
  # The kubernetes Service's ClusterIP is DNATed by kube-proxy's rules on the host.
  [ "$(curl -sS --max-time 10 --cacert "$S/pki/ca.crt" "https://$SERVICE_IP/readyz")" = ok ] ||
    fail "/readyz through the ClusterIP $SERVICE_IP failed"
  log "/readyz through ClusterIP $SERVICE_IP ok"
}

# raw_reply <seconds> <address:port> [command prefix, e.g. nsenter...]: what
# the raw TCP server there (socat with SYSTEM:echo) answers. It sends nothing:
# with curl, a request that arrived after echo had ended failed with EPIPE in
# the server, and socat dropped the reply ("Empty reply from server", one run
# in many).
raw_reply() {
  local seconds=$1 target=$2
  shift 2
  "$@" timeout "$seconds" socat -u "TCP:$target" STDOUT 2>/dev/null
}

# check_dataplane serves a reply from inside the Pod's network namespace
# (socat on the host, entered into the netns: the pause image has no tools)
# and reaches it through the Service from the host and from the Pod itself
# (hairpin), then the API server through the kubernetes Service from the Pod.
check_dataplane() {
  local ns svc listener reply
  ns=$(findmnt -rn -t nsfs -o TARGET | { grep -F "$S/containerd/state/" || true; } | head -1)
  [ -n "$ns" ] || fail "no Pod network namespace under $S/containerd/state"
  svc=$("$BIN/kubectl" --kubeconfig "$S/kubeconfig" get svc smoke -o jsonpath='{.spec.clusterIP}')
  nsenter --net="$ns" socat TCP-LISTEN:8080,fork,reuseaddr SYSTEM:'echo capk-smoke' &  # a raw reply (raw_reply)
  listener=$!
  for _ in $(seq 40); do
    reply=$(raw_reply 2 "$svc:80") && break
    sleep 0.25
  done
  [ "$reply" = capk-smoke ] || { kill "$listener"; fail "host -> Service $svc:80 -> Pod failed"; }
  log "host -> Service $svc:80 -> Pod ok"
  reply=$(raw_reply 10 "$svc:80" nsenter --net="$ns") || true
  [ "$reply" = capk-smoke ] || { kill "$listener"; fail "Pod -> own Service $svc:80 (hairpin) failed"; }
  log "Pod -> own Service $svc:80 (hairpin) ok"
  reply=$(nsenter --net="$ns" curl -sS --max-time 10 --cacert "$S/pki/ca.crt" "https://$SERVICE_IP/readyz") || true
  [ "$reply" = ok ] || { kill "$listener"; fail "Pod -> https://$SERVICE_IP/readyz failed"; }
  log "Pod -> https://$SERVICE_IP/readyz ok"
  kill "$listener"
  wait "$listener" 2>/dev/null || true
}

check_clean() {
  local left
  [ ! -e "$S" ] || fail "$S still exists"
  left=$(our_processes)
  [ -z "$left" ] || fail "processes left: $left"
  footprint >"$tmp/after"
  diff -u "$tmp/before" "$tmp/after" || fail "the host differs from before up (diff above)"
  log "nothing left: processes, links, addresses, routes, mounts, iptables, cgroups and sysctls as before"
}

# check_nodes: with extra nodes, each Node is Ready in its zone with a Pod
# CIDR of its own, and a pause Pod pinned to each one reaches the Pods of the
# others, is reached from the host, and reaches the API server's ClusterIP.
check_nodes() {
  local k=("$BIN/kubectl" --kubeconfig "$S/kubeconfig") want=("$NODE_NAME a") zone nodes cidrs
  [ -n "${EXTRA_ZONES:-}" ] || return 0
  for zone in $EXTRA_ZONES; do want+=("$NODE_NAME-$zone $zone"); done
  nodes=$("${k[@]}" get nodes -o jsonpath='{range .items[*]}{.metadata.name} {.metadata.labels.topology\.kubernetes\.io/zone}{"\n"}{end}')
  [ "$nodes" = "$(printf '%s\n' "${want[@]}")" ] || fail "Nodes and zones: $nodes; want ${want[*]}"
  cidrs=$("${k[@]}" get nodes -o jsonpath='{range .items[*]}{.spec.podCIDR}{"\n"}{end}' | sort -u | grep -c .)
  [ "$cidrs" = "${#want[@]}" ] || fail "the ${#want[@]} Nodes have $cidrs distinct Pod CIDRs"
  log "Nodes Ready in zones: ${want[*]}"
  local names node ips=() pids=() listeners=() i j reply
  read -ra names <<<"$("${k[@]}" get nodes -o jsonpath='{.items[*].metadata.name}')"
  for node in "${names[@]}"; do
    pinned_pod "$node" | "${k[@]}" apply -f - >/dev/null
    node_port_service "$node" | "${k[@]}" apply -f - >/dev/null
  done
  "${k[@]}" wait --for=condition=Ready pod -l app=capk-smoke-node --timeout=120s >/dev/null || fail "pinned Pods not Ready"
  for node in "${names[@]}"; do
    ips+=("$("${k[@]}" get pod "smoke-$node" -o jsonpath='{.status.podIP}')")
    pids+=("$(task_pid "$node")")
  done
  for i in "${!ips[@]}"; do
    nsenter -t "${pids[i]}" -n socat TCP-LISTEN:8081,fork,reuseaddr SYSTEM:"echo node-$i" &
    listeners+=($!)
  done
  sleep 1
  for i in "${!ips[@]}"; do
    reply=$(raw_reply 5 "${ips[i]}:8081") || true
    [ "$reply" = "node-$i" ] || { kill "${listeners[@]}"; fail "host -> Pod ${ips[i]} failed"; }
    for j in "${!ips[@]}"; do
      [ "$i" != "$j" ] || continue
      reply=$(raw_reply 5 "${ips[j]}:8081" nsenter -t "${pids[i]}" -n) || true
      [ "$reply" = "node-$j" ] || { kill "${listeners[@]}"; fail "Pod ${ips[i]} -> Pod ${ips[j]} failed"; }
    done
    reply=$(nsenter -t "${pids[i]}" -n curl -sS --max-time 10 --cacert "$S/pki/ca.crt" "https://$SERVICE_IP/readyz") || true
    [ "$reply" = ok ] || { kill "${listeners[@]}"; fail "Pod ${ips[i]} -> https://$SERVICE_IP/readyz failed"; }
  done
  check_node_ports || { kill "${listeners[@]}"; fail "$failed"; }
  kill "${listeners[@]}"
  wait "${listeners[@]}" 2>/dev/null || true
  log "Pods on ${#ips[@]} nodes reach each other, are reached from the host, reach the API server"
  log "every Pod reaches every node's Pod through a NodePort of the first node's address"
}

# check_node_ports: every pinned Pod reaches every node's Pod (its own too)
# through that Pod's NodePort on the first node's address: kube-proxy there
# sends the connection back to the node it came from, the path of a workload
# cluster's node Pod to its control-plane endpoint. It sets $failed and
# returns 1 on the first connection without the right answer. Uses the
# caller's names (of the nodes), ips, pids and k.
check_node_ports() {
  local i j port reply tries
  for i in "${!names[@]}"; do
    port=$("${k[@]}" get service "smoke-${names[i]}" -o jsonpath='{.spec.ports[0].nodePort}')
    for j in "${!ips[@]}"; do
      for tries in 1 2 3 4 5 6 7 8 9 10; do
        reply=$(raw_reply 3 "$NODE_IP:$port" nsenter -t "${pids[j]}" -n) || true
        [ "$reply" = "node-$i" ] && break
        sleep 1
      done
      [ "$reply" = "node-$i" ] || { failed="Pod ${ips[j]} -> $NODE_IP:$port (Pod on ${names[i]}) failed after $tries tries"; return 1; }
    done
  done
}

node_port_service() {
  cat <<EOF
apiVersion: v1
kind: Service
metadata: {name: smoke-$1, namespace: default}
spec:
  type: NodePort
  selector: {smoke-node: $1}
  ports: [{port: 8081, targetPort: 8081}]
EOF
}

pinned_pod() {
  cat <<EOF
apiVersion: v1
kind: Pod
metadata: {name: smoke-$1, namespace: default, labels: {app: capk-smoke-node, smoke-node: $1}}
spec:
  nodeName: $1
  restartPolicy: Never
  automountServiceAccountToken: false
  enableServiceLinks: false
  terminationGracePeriodSeconds: 5
  containers: [{name: pause, image: $PAUSE_IMAGE, imagePullPolicy: Never}]
EOF
}

# task_pid prints a process of Pod smoke-<node>: the node's containerd knows
# it (an extra node's Pod network namespaces are mounted in its own mount
# namespace, not the host's).
task_pid() {
  local node=$1 dir=$S id
  [ "$node" = "$NODE_NAME" ] || dir=$S/nodes/${node#"$NODE_NAME"-}
  id=$(ctr --address "$dir/containerd/containerd.sock" -n k8s.io containers ls \
    "labels.\"io.kubernetes.pod.name\"==smoke-$node" -q | head -1)
  [ -n "$id" ] || fail "no container of Pod smoke-$node"
  ctr --address "$dir/containerd/containerd.sock" -n k8s.io tasks ls | awk -v id="$id" '$1 == id {print $2}'
}

main() {
  local t0 t1 t2 t3
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  "$cluster" down >/dev/null 2>&1 || true
  footprint >"$tmp/before"
  t0=$SECONDS
  "$cluster" up
  t1=$SECONDS
  # shellcheck disable=SC1091
  source "$S/env"
  check_workload
  check_api
  check_dataplane
  check_nodes
  t2=$SECONDS
  "$cluster" down
  t3=$SECONDS
  check_clean
  log "PASS: up $((t1 - t0))s, workload and checks $((t2 - t1))s, down $((t3 - t2))s, total $((SECONDS - t0))s"
}

main "$@"
