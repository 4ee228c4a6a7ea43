#!/usr/bin/env bash
# Where a node Pod's CPU and memory go, by program: every process of the Pod
# (found by its UID in /proc/*/cgroup on this machine, which runs all the
# hosting nodes), its CPU over an interval in millicores and its resident set,
# summed by command name. It reads /proc only: nothing runs in the node.
#
# usage: test/infra/node-pod-top.sh <namespace> <node Pod> [seconds, 60]
# Environment: KUBECONFIG and KUBECTL as in the e2e environment's e2e.env.
set -euo pipefail

namespace=${1:?usage: $0 <namespace> <node Pod> [seconds]}
pod=${2:?usage: $0 <namespace> <node Pod> [seconds]}
seconds=${3:-60}
uid=$("${KUBECTL:-kubectl}" -n "$namespace" get pod "$pod" -o jsonpath='{.metadata.uid}')
ticks=$(getconf CLK_TCK)

# sample prints "pid cpu-ticks command rss-KiB" for every process of the Pod.
sample() {
  local p stat rss
  for p in $(grep -l "pod$uid" /proc/[0-9]*/cgroup 2>/dev/null | cut -d/ -f3); do
    stat=$(sed 's/^.*) //' "/proc/$p/stat" 2>/dev/null) || continue
    rss=$(awk '/^VmRSS/ {print $2}' "/proc/$p/status" 2>/dev/null) || continue
    # shellcheck disable=SC2086 # the fields of stat after the command
    set -- $stat
    echo "$p $((${12} + ${13})) $(tr -d '\0 ' <"/proc/$p/comm") ${rss:-0}"
  done | sort
}

before=$(sample)
sleep "$seconds"
after=$(sample)
printf '%-20s %10s %10s\n' program millicores "RSS MiB"
join <(echo "$before") <(echo "$after") | awk -v s="$seconds" -v t="$ticks" '
  { cpu[$6] += ($5 - $2) * 1000 / t / s; rss[$6] += $7; total += ($5 - $2) * 1000 / t / s; mem += $7 }
  END {
    for (c in cpu) printf "%-20s %10.1f %10.1f\n", c, cpu[c], rss[c] / 1024 | "sort -k2 -nr"
    close("sort -k2 -nr")
    printf "%-20s %10.1f %10.1f\n", "total", total, mem / 1024
  }'
