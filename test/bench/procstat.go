/*
Copyright 2026 The cluster-api-provider-kubernetes Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package bench

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTicksPerSecond is USER_HZ, the unit of /proc/<pid>/stat times: 100 on
// every Linux architecture Go supports.
const clockTicksPerSecond = 100

// ProcessStats are what a process used so far.
type ProcessStats struct {
	// PeakRSSBytes is the peak resident set size (VmHWM).
	PeakRSSBytes int64
	// FileRSSBytes is the part of the resident set that maps files (RssFile):
	// for a static Go binary, its own code and read-only data, which every
	// page of the program's init and first requests touches.
	FileRSSBytes int64
	// CPU is the user and system CPU time (utime + stime).
	CPU time.Duration
}

// ReadProcessStats reads /proc/<pid>/status and /proc/<pid>/stat.
func ReadProcessStats(pid int) (ProcessStats, error) {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return ProcessStats{}, fmt.Errorf("reading the status of process %d: %w", pid, err)
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ProcessStats{}, fmt.Errorf("reading the stat of process %d: %w", pid, err)
	}
	peak, err := ParsePeakRSS(string(status))
	if err != nil {
		return ProcessStats{}, fmt.Errorf("process %d: %w", pid, err)
	}
	file, err := parseKiBField(string(status), "RssFile")
	if err != nil {
		return ProcessStats{}, fmt.Errorf("process %d: %w", pid, err)
	}
	cpu, err := ParseCPUTime(string(stat))
	if err != nil {
		return ProcessStats{}, fmt.Errorf("process %d: %w", pid, err)
	}
	return ProcessStats{PeakRSSBytes: peak, FileRSSBytes: file, CPU: cpu}, nil
}

// ParsePeakRSS reads VmHWM from the text of /proc/<pid>/status, in bytes.
func ParsePeakRSS(status string) (int64, error) {
	return parseKiBField(status, "VmHWM")
}

// ParseMemTotal reads MemTotal from the text of /proc/meminfo, in bytes.
func ParseMemTotal(meminfo string) (int64, error) {
	return parseKiBField(meminfo, "MemTotal")
}

// parseKiBField reads a "name:  1234 kB" line of a /proc file, in bytes.
func parseKiBField(text, name string) (int64, error) {
	for _, line := range strings.Split(text, "\n") {
		value, found := strings.CutPrefix(line, name+":")
		if !found {
			continue
		}
		fields := strings.Fields(value)
		if len(fields) != 2 || fields[1] != "kB" {
			return 0, fmt.Errorf("unexpected %s line %q", name, line)
		}
		kib, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("unexpected %s line %q: %w", name, line, err)
		}
		return kib * 1024, nil
	}
	return 0, fmt.Errorf("no %s line", name)
}

// ParseCPUTime adds utime and stime (fields 14 and 15) of /proc/<pid>/stat. The
// command name (field 2) is in parentheses and may hold spaces, so fields are
// counted from the last ')'.
func ParseCPUTime(stat string) (time.Duration, error) {
	end := strings.LastIndexByte(stat, ')')
	if end < 0 {
		return 0, fmt.Errorf("unexpected process stat %q", stat)
	}
	// After the name: field 3 (state) is index 0, so utime (14) is index 11.
	fields := strings.Fields(stat[end+1:])
	if len(fields) < 13 {
		return 0, fmt.Errorf("process stat has %d fields after the name, want at least 13", len(fields))
	}
	var ticks uint64
	for _, field := range fields[11:13] {
		n, err := strconv.ParseUint(field, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("unexpected CPU time %q in the process stat: %w", field, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicksPerSecond, nil
}

// ReadLoadAverage reads the 1-minute load average from /proc/loadavg.
func ReadLoadAverage() (float64, error) {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0, fmt.Errorf("reading the load average: %w", err)
	}
	return ParseLoadAverage(string(data))
}

// ParseLoadAverage reads the first field of /proc/loadavg.
func ParseLoadAverage(loadavg string) (float64, error) {
	fields := strings.Fields(loadavg)
	if len(fields) == 0 {
		return 0, fmt.Errorf("unexpected load average %q", loadavg)
	}
	load, err := strconv.ParseFloat(fields[0], 64)
	if err != nil {
		return 0, fmt.Errorf("unexpected load average %q: %w", loadavg, err)
	}
	return load, nil
}

// ChildProcess finds the process this one started whose command name is
// name (envtest starts etcd and kube-apiserver as its children).
func ChildProcess(name string) (int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	self := os.Getpid()
	for _, entry := range entries {
		pid, err := strconv.Atoi(entry.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		command, parent, ok := ParseCommandAndParent(string(stat))
		if ok && command == name && parent == self {
			return pid, nil
		}
	}
	return 0, fmt.Errorf("no child process %q of process %d", name, self)
}

// ParseCommandAndParent reads the command name and the parent's PID from the
// text of /proc/<pid>/stat: "pid (comm) state ppid ...".
func ParseCommandAndParent(stat string) (string, int, bool) {
	open, closing := strings.IndexByte(stat, '('), strings.LastIndexByte(stat, ')')
	if open < 0 || closing < open {
		return "", 0, false
	}
	fields := strings.Fields(stat[closing+1:])
	if len(fields) < 2 {
		return "", 0, false
	}
	parent, err := strconv.Atoi(fields[1])
	return stat[open+1 : closing], parent, err == nil
}
