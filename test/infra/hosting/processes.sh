# shellcheck shell=bash
# Sourced by hosting-cluster.sh and vm/node.sh: the hosting cluster's
# processes, each with its PID file in $S/pids/<name>.pid and the state
# folder on its command line. The sourcing script defines log.

# pid_of prints the PID recorded for a component if that process still runs
# and is ours: every process `up` starts names the state folder on its command
# line, which guards against a recycled PID.
pid_of() {
  local pid
  pid=$(cat "$S/pids/$1.pid" 2>/dev/null) || return 1
  ours "$pid" && echo "$pid"
}

# ours reads the command line with builtins only: `down` calls it for every
# process of the machine, and forks are slow on a loaded two-core VM.
ours() {
  local args=()
  mapfile -d '' args 2>/dev/null <"/proc/$1/cmdline" || return 1
  [[ "${args[*]}" == *"$S/"* ]]
}

# stop_components sends SIGTERM to the given components at once, waits up to
# 20 s for all of them to exit, then SIGKILLs what is left.
stop_components() {
  local c pid pids=() i
  for c in "$@"; do
    if pid=$(pid_of "$c"); then
      log "stopping $c (pid $pid)"
      kill -TERM "$pid" 2>/dev/null && pids+=("$pid")
    fi
    rm -f "$S/pids/$c.pid"
  done
  for ((i = 0; i < 200; i++)); do
    alive "${pids[@]}" || return 0
    sleep 0.1
  done
  for pid in "${pids[@]}"; do
    kill -0 "$pid" 2>/dev/null && log "pid $pid did not stop in 20s; killing it" && kill -KILL "$pid" 2>/dev/null
  done
  return 0
}

# alive is true while any of the PIDs runs.
alive() {
  local pid
  for pid in "$@"; do kill -0 "$pid" 2>/dev/null && return 0; done
  return 1
}
