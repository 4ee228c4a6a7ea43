#!/usr/bin/env bash
# Boots the cgroup v2 hosting node's VM (build.sh) once, with no network, and
# checks what the console reports once multi-user.target is reached: the
# unified cgroup hierarchy (cgroup2fs) with the controllers a kubelet needs.
# Prints the seconds to that report, as the host and the guest count them.
# The disk is used read-only (-snapshot): every boot starts from the build.
#
# usage: test/infra/hosting/vm/smoke.sh
#
# Environment:
#   CAPK_VM_BOOT_TIMEOUT  seconds to wait for the report [900]
#   CAPK_VM_MEMORY        the VM's memory [2G]
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
timeout=${CAPK_VM_BOOT_TIMEOUT:-900}

log() { printf '[%s] vm smoke: %s\n' "$(date +%T)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

vm=$("$here/build.sh")
work=$(mktemp -d)
console=$work/console.log
qemu_pid=""
cleanup() {
  [ -n "$qemu_pid" ] && kill "$qemu_pid" 2>/dev/null && wait "$qemu_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

# qemu's software CPU: this machine's /dev/kvm is a hypervisor that stock
# kernels do not boot under. One host thread for both virtual CPUs: with a
# thread each (thread=multi), the guest kernel panicked once in two boots
# ("Oops: int3" in sched_clock_cpu on the second CPU, while the kernel was
# patching its own code). No network device: nothing leaves the VM.
start=$SECONDS
qemu-system-x86_64 -machine q35 -accel tcg,thread=single -cpu max -smp 2 -m "${CAPK_VM_MEMORY:-2G}" \
  -kernel "$vm/vmlinuz" -initrd "$vm/initrd.img" \
  -append "root=/dev/vda rw console=ttyS0 systemd.unified_cgroup_hierarchy=1 quiet" \
  -drive "file=$vm/disk.img,if=virtio,format=raw" -snapshot \
  -nic none -display none -monitor none -serial "file:$console" &
qemu_pid=$!
log "booting $vm (qemu PID $qemu_pid, console $console)"

report=""
while [ $((SECONDS - start)) -lt "$timeout" ]; do
  report=$(grep -a -o -m1 'CAPK-VM-REPORT .*' "$console" 2>/dev/null | tr -d '\r' || true)
  [ -n "$report" ] && break
  kill -0 "$qemu_pid" 2>/dev/null || { tail -40 "$console" >&2; die "qemu exited before the report"; }
  if grep -a -q 'Kernel panic' "$console" 2>/dev/null; then
    grep -a -A25 -m1 'Oops\|BUG:\|Kernel panic' "$console" >&2
    die "the guest kernel panicked"
  fi
  sleep 2
done
[ -n "$report" ] || { tail -40 "$console" >&2; die "no report within ${timeout}s"; }
elapsed=$((SECONDS - start))
log "console: $report"

field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$report"; }
[ "$(field cgroupfs)" = cgroup2fs ] || die "/sys/fs/cgroup is $(field cgroupfs), not cgroup2fs"
for controller in cpu memory pids io cpuset; do
  [[ ",$(field controllers)," == *",$controller,"* ]] || die "cgroup v2 controller $controller is missing: $(field controllers)"
done
echo "cgroup v2 VM (kernel $(field kernel)): multi-user in ${elapsed}s from qemu's start, $(field uptime)s of the guest's uptime; controllers $(field controllers)"
