#!/bin/sh
# Runs in the VM once multi-user.target is reached (capk-vm-report.service):
# one line on the serial console that smoke.sh parses, with the file system
# type of /sys/fs/cgroup (cgroup2fs on a unified hierarchy), its controllers
# and the seconds since the kernel started.
set -u
fs=$(stat -fc %T /sys/fs/cgroup)
controllers=$(tr ' ' ',' </sys/fs/cgroup/cgroup.controllers)
uptime=$(cut -d' ' -f1 /proc/uptime)
echo "CAPK-VM-REPORT cgroupfs=$fs controllers=$controllers uptime=$uptime kernel=$(uname -r)" >/dev/ttyS0
