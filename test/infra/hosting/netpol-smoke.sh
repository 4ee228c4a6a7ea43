#!/usr/bin/env bash
# NetworkPolicy check of the hosting cluster (kube-network-policies behind the
# CAPK-NETPOL NFQUEUE diversion): Pods of namespace netpol-a (labelled like node
# Pods, infrastructure.cluster.x-k8s.io/node-role) and netpol-b, and an
# unlabelled Pod in netpol-c, each serving TCP 8080 and 9090 with
# systemd-socket-activate from kind's node image. Without a policy A reaches B.
# With the policy below on B's Pods:
# A cannot connect, directly or through B's ClusterIP Service; B's Pods reach
# each other; C reaches 9090 only; B's Pods reach A; root on the host reaches B;
# the kubelet's HTTP, TCP and exec probes on B's Pods pass (a Pod created after
# the policy becomes Ready). Deleting the policy opens A -> B again.
# On a hosting cluster with extra nodes (nodes.sh) the Pods are spread over
# them (a on zone b, b1 on c, b2 and c on a, b3 on b), so that each node's
# agent judges connections that leave or reach it.
#
# usage: test/infra/hosting/netpol-smoke.sh     (as root; same environment as hosting-cluster.sh)
#
# If the hosting cluster is down, the script brings it up, and down at the end,
# and checks that nothing is left, like smoke.sh. If it is up, the script uses it
# and leaves it up (only its namespaces are deleted).
#
# Environment: CAPK_NETPOL_SMOKE_IMAGE_TAR  OCI tarball with bash and systemd-socket-activate
#              [kind's node image, test/infra/node-image/build-kind.sh]
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
S=${CAPK_HOSTING_STATE:-/var/lib/capk-hosting}
cluster="$here/hosting-cluster.sh"
role=infrastructure.cluster.x-k8s.io/node-role
failures=0

log() { printf '[%s] netpol-smoke: %s\n' "$(date +%T)" "$*" >&2; }
fail() { log "FAIL: $*"; exit 1; }
k() { "$BIN/kubectl" --kubeconfig "$S/kubeconfig" "$@"; }

# image imports the tarball (unless containerd has it) and sets IMAGE.
image() {
  local tar=${CAPK_NETPOL_SMOKE_IMAGE_TAR:-}
  [ -n "$tar" ] || tar=$("$here/../node-image/build-kind.sh")
  IMAGE=$(tar -xOf "$tar" --occurrence=1 index.json | grep -o '"io.containerd.image.name":"[^"]*"' | cut -d'"' -f4)
  [ -n "$IMAGE" ] || fail "no io.containerd.image.name in $tar"
  local dir images
  for dir in "$S" ${EXTRA_ZONES:+$(printf "$S/nodes/%s " $EXTRA_ZONES)}; do
    local ctr=(ctr --address "$dir/containerd/containerd.sock" --namespace k8s.io)
    images=$("${ctr[@]}" images ls -q)
    if ! grep -qxF "$IMAGE" <<<"$images"; then
      log "importing $IMAGE from $tar into ${dir#"$S"}/containerd"
      "${ctr[@]}" images import "$tar" >/dev/null
    fi
  done
}

# node_of prints the Node a Pod is pinned to: none on one node; with extra
# nodes, zone b, c or a by the Pod's name.
node_of() {
  [ -n "${EXTRA_ZONES:-}" ] || return 0
  case $1 in
  a | b3) echo "$NODE_NAME-b" ;;
  b1) echo "$NODE_NAME-c" ;;
  *) echo "$NODE_NAME" ;;
  esac
}

# serve is the Pod's command: a listener on 8080 and 9090, each connection answered
# by "<pod> <port>" as an HTTP/1.0 reply once the request's headers are read.
serve=$(cat <<'EOF'
cat >/reply <<'R'
while read -r l && [ -n "${l%$'\r'}" ]; do :; done
printf 'HTTP/1.0 200 OK\r\n\r\n%s %s\n' "$HOSTNAME" "$1"
R
for port in 8080 9090; do systemd-socket-activate --accept --inetd --listen=0.0.0.0:$port bash /reply $port & done
wait
EOF
)

# pod prints a Pod running serve in the image.
# usage: pod <namespace> <name> <labels (flow map)> [probes (yaml, indented)]
pod() {
  local indented="      ${serve//$'\n'/$'\n      '}"
  cat <<EOF
---
apiVersion: v1
kind: Pod
metadata: {name: $2, namespace: $1, labels: $3}
spec:
  nodeName: $(node_of "$2")
  automountServiceAccountToken: false
  enableServiceLinks: false
  terminationGracePeriodSeconds: 1
  containers:
  - name: serve
    image: $IMAGE
    imagePullPolicy: Never
    command: [bash, -c]
    args:
    - |
$indented
    ports: [{containerPort: 8080}, {containerPort: 9090}]
${4:-}
EOF
}

# probes: HTTP readiness, TCP liveness and an exec startup probe, every 2 s.
probes='    readinessProbe: {httpGet: {port: 8080, path: /}, periodSeconds: 2, failureThreshold: 1}
    livenessProbe: {tcpSocket: {port: 9090}, periodSeconds: 2, failureThreshold: 1}
    startupProbe: {exec: {command: [bash, -c, "exec 3<>/dev/tcp/127.0.0.1/8080"]}, periodSeconds: 1}'

workloads() {
  local ns
  for ns in netpol-a netpol-b netpol-c; do printf -- '---\napiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n' "$ns"; done
  pod netpol-a a "{app: netpol-a, $role: worker}"
  pod netpol-b b1 "{app: netpol-b, $role: control-plane}" "$probes"
  pod netpol-b b2 "{app: netpol-b, $role: worker}" "$probes"
  pod netpol-c c "{app: netpol-c}"
  cat <<EOF
---
apiVersion: v1
kind: Service
metadata: {name: b, namespace: netpol-b}
spec:
  selector: {app: netpol-b}
  ports: [{name: web, port: 80, targetPort: 8080}, {name: api, port: 90, targetPort: 9090}]
EOF
}

# policy: B's Pods accept B's Pods on every port, and on 9090 any Pod of any
# namespace that is not a node Pod (no node-role label).
policy() {
  cat <<EOF
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: isolate, namespace: netpol-b}
spec:
  podSelector: {matchLabels: {app: netpol-b}}
  policyTypes: [Ingress]
  ingress:
  - from: [{podSelector: {matchLabels: {app: netpol-b}}}]
  - from: [{namespaceSelector: {}, podSelector: {matchExpressions: [{key: $role, operator: DoesNotExist}]}}]
    ports: [{protocol: TCP, port: 9090}]
EOF
}

# connect prints the reply of <ip>:<port> to a one-line HTTP request sent from
# <namespace>/<pod>, or from the host (as root) if the Pod is "host".
connect() {
  local ns=$1 pod=$2 ip=$3 port=$4
  local cmd="timeout 5 bash -c 'exec 3<>/dev/tcp/$ip/$port; printf \"GET / HTTP/1.0\\r\\n\\r\\n\" >&3; cat <&3' | tail -1"
  if [ "$pod" = host ]; then
    bash -c "$cmd"
  else
    k exec -n "$ns" "$pod" -- bash -c "$cmd"
  fi
}

# expect checks one connection: "open" wants the listener's reply, "closed" no
# reply within the connect timeout. usage: expect open|closed <ns> <pod> <ip> <port> <what>
expect() {
  local want=$1 ns=$2 pod=$3 ip=$4 port=$5 what=$6 reply got
  reply=$(connect "$ns" "$pod" "$ip" "$port" 2>/dev/null) || true
  if [ -n "$reply" ]; then got=open; else got=closed; fi
  if [ "$got" = "$want" ]; then
    log "ok   $what: $got${reply:+ ($reply)}"
  else
    log "FAIL $what: $got, want $want${reply:+ ($reply)}"
    failures=$((failures + 1))
  fi
}

ip_of() { k get pod -n "$1" "$2" -o jsonpath='{.status.podIP}'; }

# ready_pods waits until every Pod in the namespaces is Ready.
ready_pods() {
  local ns
  for ns in "$@"; do
    k wait -n "$ns" --for=condition=Ready pod --all --timeout=120s >/dev/null ||
      fail "Pods in $ns not Ready: $(k get pods -n "$ns" -o wide)"
  done
}

# without_policy: everything open.
without_policy() {
  log "without a NetworkPolicy"
  expect open netpol-a a "$B1" 8080 "a -> b1:8080"
  expect open netpol-a a "$SVC" 80 "a -> Service b:80"
  expect open netpol-c c "$B1" 8080 "c -> b1:8080"
}

with_policy() {
  log "with NetworkPolicy netpol-b/isolate"
  expect closed netpol-a a "$B1" 8080 "a (node-role) -> b1:8080"
  expect closed netpol-a a "$B1" 9090 "a (node-role) -> b1:9090"
  expect closed netpol-a a "$SVC" 80 "a (node-role) -> Service b:80"
  expect closed netpol-a a "$SVC" 90 "a (node-role) -> Service b:90"
  expect open netpol-b b2 "$B1" 8080 "b2 -> b1:8080"
  expect open netpol-b b2 "$B1" 9090 "b2 -> b1:9090"
  expect open netpol-b b2 "$SVC" 80 "b2 -> Service b:80"
  expect open netpol-b b1 "$SVC" 90 "b1 -> Service b:90"
  expect open netpol-c c "$B1" 9090 "c (no node-role) -> b1:9090"
  expect closed netpol-c c "$B1" 8080 "c (no node-role) -> b1:8080"
  expect open netpol-c c "$SVC" 90 "c (no node-role) -> Service b:90"
  expect closed netpol-c c "$SVC" 80 "c (no node-role) -> Service b:80"
  expect open netpol-b b1 "$A" 8080 "b1 -> a:8080 (A has no policy)"
  host_to_b
}

# host_to_b: root on a node is exempt from the policies of its own node's Pods
# only (the kubelet's probes): on one node it reaches b1 and the Service; with
# extra nodes it reaches b2 on its node, not b1 on another (as any remote
# host). The Service is left out there: its endpoints are on both.
host_to_b() {
  if [ -z "${EXTRA_ZONES:-}" ]; then
    expect open "" host "$B1" 8080 "host (root) -> b1:8080"
    expect open "" host "$SVC" 80 "host (root) -> Service b:80"
    return
  fi
  expect open "" host "$(ip_of netpol-b b2)" 8080 "host (root) -> b2:8080 on its node"
  expect closed "" host "$B1" 8080 "host (root) -> b1:8080 on another node"
}

# probes_pass: a Pod created under the policy becomes Ready (HTTP readiness,
# exec startup), and no probe of B's Pods failed since the policy came.
probes_pass() {
  pod netpol-b b3 "{app: netpol-b, $role: worker}" "$probes" | k apply -f - >/dev/null
  ready_pods netpol-b
  sleep 6 # three more probe periods of b1 and b2
  local unhealthy restarts
  unhealthy=$(k get events -n netpol-b --field-selector reason=Unhealthy -o name)
  restarts=$(k get pods -n netpol-b -o jsonpath='{.items[*].status.containerStatuses[*].restartCount}')
  if [ -z "$unhealthy" ] && [ "$restarts" = "0 0 0" ]; then
    log "ok   probes: b1, b2 and the new b3 Ready, no Unhealthy events, restarts $restarts"
  else
    log "FAIL probes: Unhealthy events '$unhealthy', restarts '$restarts'"
    failures=$((failures + 1))
  fi
}

# verdicts prints the agent's packet counters (verdicts by protocol).
verdicts() {
  curl -sS --max-time 5 "http://127.0.0.1:$((PORT_BASE + 258))/metrics" | grep -E '^kube_network_policies_packet_count' >&2 ||
    log "no packet counters on the metrics port"
}

check() {
  image
  workloads | k apply -f - >/dev/null
  ready_pods netpol-a netpol-b netpol-c
  A=$(ip_of netpol-a a) B1=$(ip_of netpol-b b1) SVC=$(k get svc -n netpol-b b -o jsonpath='{.spec.clusterIP}')
  log "a $A, b1 $B1, b2 $(ip_of netpol-b b2), c $(ip_of netpol-c c), Service b $SVC"
  k get pods -A -l 'app in (netpol-a,netpol-b,netpol-c)' -o wide >&2
  without_policy
  policy | k apply -f - >/dev/null
  sleep 2 # the agent's informer
  with_policy
  probes_pass
  verdicts
  k delete networkpolicy -n netpol-b isolate >/dev/null
  sleep 2
  expect open netpol-a a "$B1" 8080 "policy deleted: a -> b1:8080"
  k delete namespace netpol-a netpol-b netpol-c --wait=false >/dev/null
}

# footprint and our_processes: as in smoke.sh, what must be gone after down.
footprint() {
  ip -o link show | awk -F': ' '{print $2}' | cut -d@ -f1 | sort
  ip -o addr show | awk '{print $2, $4}' | sort
  findmnt -rn -o TARGET | sort
  iptables-save | { grep -v '^#' || true; } | sed 's/\[[0-9]*:[0-9]*\]//'
  cat /proc/net/netfilter/nfnetlink_queue
}

our_processes() {
  local d args
  for d in /proc/[0-9]*; do
    [ "${d#/proc/}" = $$ ] && continue
    mapfile -d '' args 2>/dev/null <"$d/cmdline" || continue
    [[ "${args[*]}" == *"$S/"* || "${args[*]}" == *kube-network-policies* ]] && echo "${d#/proc/} ${args[*]:0:6}"
  done
  return 0
}

main() {
  [ "$(id -u)" = 0 ] || fail "must run as root"
  local ours=0
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  if ! "$cluster" status >/dev/null 2>&1; then
    ours=1
    "$cluster" down >/dev/null 2>&1 || true
    footprint >"$tmp/before"
    "$cluster" up
  fi
  # shellcheck disable=SC1091
  source "$S/env"
  check
  if [ $ours = 1 ]; then
    "$cluster" down
    [ ! -e "$S" ] || fail "$S still exists"
    [ -z "$(our_processes)" ] || fail "processes left: $(our_processes)"
    footprint >"$tmp/after"
    diff -u "$tmp/before" "$tmp/after" || fail "the host differs from before up (diff above)"
    log "nothing left: no processes, CAPK-NETPOL chain or NFQUEUE reader; links, mounts, iptables as before"
  fi
  [ $failures = 0 ] || fail "$failures checks failed"
  log "PASS"
}

main "$@"
