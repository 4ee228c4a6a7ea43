#!/bin/sh
# Runs in the cgroup v2 node's VM at boot (capk-node.service, from the node
# disk that node.sh writes): the node's address on the hosting bridge, the
# kernel settings a hosting node needs, and its programs as systemd units.
# It does not wait for them: the host watches the Node.
set -eu
root=/var/lib/capk
. "$root/node.env"

hostname "$NODE"
ip link set lo up
ip link set eth0 up
ip addr add "$IP/24" dev eth0
# No default route: nothing leaves the machine. Services are reached through
# kube-proxy's rules; the other nodes' Pod networks through podnet's routes.
ip route add "$SERVICE_CIDR" dev eth0 src "$IP"

for module in overlay br_netfilter vxlan nf_conntrack; do modprobe "$module" || true; done
sysctl -q -w net.ipv4.ip_forward=1 net.bridge.bridge-nf-call-iptables=1 \
  fs.inotify.max_user_instances=8192 fs.inotify.max_user_watches=524288

mkdir -p /etc/cni/net.d "$root/logs"
for unit in "$root"/units/*.service; do systemctl link "$unit" >/dev/null; done
systemctl start --no-block capk-containerd capk-kubelet capk-kube-proxy capk-podnet
echo "CAPK-VM-NODE $NODE $IP: containerd, kubelet, kube-proxy and podnet started" >/dev/ttyS0
