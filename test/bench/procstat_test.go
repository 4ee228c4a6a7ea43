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
	"os"
	"testing"
	"time"
)

func TestParsePeakRSS(t *testing.T) {
	status := "Name:\tmanager\nVmPeak:\t 1300000 kB\nVmHWM:\t   81920 kB\nVmRSS:\t   70000 kB\n"
	got, err := ParsePeakRSS(status)
	if err != nil || got != 80*1024*1024 {
		t.Errorf("ParsePeakRSS = %d, %v; want 80 MiB", got, err)
	}
	if _, err := ParsePeakRSS("Name:\tmanager\n"); err == nil {
		t.Error("no error without a VmHWM line")
	}
}

func TestParseCPUTime(t *testing.T) {
	// The command name holds a space and a ')'; utime is 250 and stime 120 ticks.
	stat := "4242 (my (manager)) S 1 4242 4242 0 -1 4194560 1234 0 0 0 250 120 0 0 20 0 12 0 100 0 0"
	got, err := ParseCPUTime(stat)
	if err != nil || got != 3700*time.Millisecond {
		t.Errorf("ParseCPUTime = %s, %v; want 3.7s", got, err)
	}
	if _, err := ParseCPUTime("4242 (manager) S 1"); err == nil {
		t.Error("no error for a short stat")
	}
}

func TestReadProcessStatsOfThisProcess(t *testing.T) {
	stats, err := ReadProcessStats(os.Getpid())
	if err != nil {
		t.Skipf("no /proc here: %v", err)
	}
	if stats.PeakRSSBytes <= 0 || stats.FileRSSBytes <= 0 || stats.FileRSSBytes > stats.PeakRSSBytes {
		t.Errorf("peak RSS %d, of it file-backed %d: want 0 < file <= peak", stats.PeakRSSBytes, stats.FileRSSBytes)
	}
}

func TestParseMemTotal(t *testing.T) {
	got, err := ParseMemTotal("MemTotal:       24684032 kB\nMemFree:        1 kB\n")
	if err != nil || got != 24684032*1024 {
		t.Errorf("ParseMemTotal = %d, %v", got, err)
	}
}

func TestParseLoadAverage(t *testing.T) {
	got, err := ParseLoadAverage("1.67 1.88 1.42 1/354 12411\n")
	if err != nil || got != 1.67 {
		t.Errorf("ParseLoadAverage = %g, %v; want 1.67", got, err)
	}
	if _, err := ParseLoadAverage(""); err == nil {
		t.Error("no error for an empty load average")
	}
}

func TestParseCommandAndParent(t *testing.T) {
	command, parent, ok := ParseCommandAndParent("4242 (kube-apiserver) S 17 4242 17 0 -1 4194560 1 0 0 0 5 3 0 0 20 0")
	if !ok || command != "kube-apiserver" || parent != 17 {
		t.Fatalf("got %q, %d, %v; want kube-apiserver, 17, true", command, parent, ok)
	}
	command, parent, ok = ParseCommandAndParent("99 (a (b) c) R 1 99 99")
	if !ok || command != "a (b) c" || parent != 1 {
		t.Fatalf("got %q, %d, %v; want a command with parentheses, parent 1", command, parent, ok)
	}
	if _, _, ok := ParseCommandAndParent("garbage"); ok {
		t.Fatal("garbage parsed")
	}
}
