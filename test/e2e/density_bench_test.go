//go:build e2e

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

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
)

const (
	// densityAvailableWithin is how long each new cluster may take to become
	// Available before the hosting nodes count as full.
	densityAvailableWithin = 5 * time.Minute
	// densityIdle is how long the clusters idle before their node Pods are measured.
	densityIdle = time.Minute
)

// BenchmarkDensity (make bench-density) creates clusters of 1 control plane
// and 1 worker from the default template, one after another, until the next
// one is not Available within 5 minutes (or BENCH_DENSITY_MAX clusters are,
// 12 by default). Then, after a minute of idling, it reports each node Pod's
// working set and CPU (from their cgroups), the machine's
// available memory and load, and the time to Available of the first and the
// last cluster; out/bench-density/summary.json keeps the figures.
func BenchmarkDensity(b *testing.B) {
	g := NewWithT(b)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Minute)
	defer cancel()
	limit := 12
	if v, err := strconv.Atoi(os.Getenv("BENCH_DENSITY_MAX")); err == nil && v > 0 {
		limit = v
	}
	for range b.N {
		run := &densityRun{}
		run.fill(ctx, b, g, limit)
		g.Expect(run.available).NotTo(BeEmpty(), "no cluster became Available")
		// The one that did not become Available would keep the machine busy.
		deleteClusters(ctx, b, g, run.notAvailable...)
		time.Sleep(densityIdle)
		run.report(ctx, b, g)
		deleteClusters(ctx, b, g, run.available...)
	}
}

// densityRun is the clusters of one run and how long each took.
type densityRun struct {
	available, notAvailable []*workloadCluster
	toAvailable             []time.Duration
	lastFailure             string
}

// fill creates clusters until one is not Available in time or limit are.
func (d *densityRun) fill(ctx context.Context, b *testing.B, g Gomega, limit int) {
	for i := 1; i <= limit; i++ {
		namespace := newNamespace(ctx, b, g)
		installPodnet(ctx, g, namespace)
		w := createCluster(ctx, b, g, namespace, fmt.Sprintf("density-%d", i), 1, 1)
		took, failure := w.availableWithin(ctx, densityAvailableWithin)
		if failure != "" {
			b.Logf("cluster %d was not Available within %s: %s", i, densityAvailableWithin, failure)
			d.notAvailable, d.lastFailure = append(d.notAvailable, w), failure
			return
		}
		b.Logf("cluster %d Available in %s", i, took.Round(time.Second))
		d.available, d.toAvailable = append(d.available, w), append(d.toAvailable, took)
	}
}

// podUsage is one node Pod's idle figures.
type podUsage struct {
	Cluster    string  `json:"cluster"`
	Role       string  `json:"role"`
	WorkingSet float64 `json:"workingSetMiB"`
	CPU        float64 `json:"cpuMillicores"`
	cgroup     string  // its cpuacct cgroup
}

// report logs and writes the run's figures and reports them as metrics.
func (d *densityRun) report(ctx context.Context, b *testing.B, g Gomega) {
	usage := nodePodUsage(ctx, g, d.available)
	memAvailable, load := machineMemoryAndLoad(g)
	summary := map[string]any{
		"clustersAvailable": len(d.available), "stoppedBecause": d.lastFailure,
		"firstToAvailableSeconds": d.toAvailable[0].Seconds(),
		"lastToAvailableSeconds":  d.toAvailable[len(d.toAvailable)-1].Seconds(),
		"memAvailableMiB":         memAvailable, "loadAverage": load, "nodePods": usage,
	}
	lines := []string{fmt.Sprintf("%d clusters Available at once (1 control plane + 1 worker each); first Available in %.0f s, last in %.0f s",
		len(d.available), d.toAvailable[0].Seconds(), d.toAvailable[len(d.toAvailable)-1].Seconds())}
	if d.lastFailure != "" {
		lines = append(lines, "the next one was not Available within "+densityAvailableWithin.String()+": "+d.lastFailure)
	}
	for _, role := range []string{infrav1.NodeRoleControlPlane, infrav1.NodeRoleWorker} {
		ws, cpu := roleFigures(usage, role)
		lines = append(lines, fmt.Sprintf("idle %s node Pods: working set %s MiB, CPU %s millicores (min/mean/max)",
			role, ws, cpu))
	}
	lines = append(lines, fmt.Sprintf("machine: MemAvailable %.0f MiB, load average %s", memAvailable, load))
	b.Logf("density:\n%s", strings.Join(lines, "\n"))
	b.ReportMetric(float64(len(d.available)), "clusters")
	b.ReportMetric(memAvailable, "mem-available-MiB")
	out := filepath.Join("..", "..", "out", "bench-density")
	g.Expect(os.MkdirAll(out, 0o755)).To(Succeed())
	data, err := json.MarshalIndent(summary, "", "  ")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(os.WriteFile(filepath.Join(out, "summary.json"), append(data, '\n'), 0o644)).To(Succeed()) //nolint:gosec // a report
}

// roleFigures is min/mean/max of the working set and CPU of role's node Pods.
func roleFigures(usage []podUsage, role string) (workingSet, cpu string) {
	var ws, c []float64
	for _, u := range usage {
		if u.Role == role {
			ws, c = append(ws, u.WorkingSet), append(c, u.CPU)
		}
	}
	return minMeanMax(ws), minMeanMax(c)
}

func minMeanMax(values []float64) string {
	if len(values) == 0 {
		return "-"
	}
	var sum float64
	for _, v := range values {
		sum += v
	}
	return fmt.Sprintf("%.0f/%.0f/%.0f (%d Pods)", slices.Min(values), sum/float64(len(values)), slices.Max(values), len(values))
}

// nodePodUsage measures the clusters' node Pods from their cgroups: every
// hosting node runs on this machine, and the extra nodes' kubelets, whose
// cgroup roots are nested below the first node's, reported zeros for some
// Pods in their summary API. CPU is averaged over cpuSample.
func nodePodUsage(ctx context.Context, g Gomega, clusters []*workloadCluster) []podUsage {
	const cpuSample = 10 * time.Second
	var usage []podUsage
	var before []uint64
	for _, w := range clusters {
		for _, p := range w.nodePods(ctx, g) {
			memory, cpu := podCgroup(g, "memory", string(p.UID)), podCgroup(g, "cpuacct", string(p.UID))
			usage = append(usage, podUsage{Cluster: w.name, Role: p.Labels[infrav1.NodeRoleLabel],
				WorkingSet: workingSetMiB(g, memory), cgroup: cpu})
			before = append(before, readUint(g, filepath.Join(cpu, "cpuacct.usage")))
		}
	}
	time.Sleep(cpuSample)
	for i := range usage {
		used := readUint(g, filepath.Join(usage[i].cgroup, "cpuacct.usage")) - before[i]
		usage[i].CPU = float64(used) / float64(cpuSample.Nanoseconds()) * 1000
	}
	return usage
}

// podCgroup finds the cgroup of the Pod with uid in a cgroup v1 hierarchy.
func podCgroup(g Gomega, hierarchy, uid string) string {
	root := filepath.Join("/sys/fs/cgroup", hierarchy)
	var found string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		switch {
		case found != "":
			return filepath.SkipAll
		case err != nil || !d.IsDir():
			return nil // a cgroup's files, or one gone meanwhile
		case d.Name() == "pod"+uid:
			found = path
			return filepath.SkipDir
		case strings.HasPrefix(d.Name(), "pod") || strings.Count(path, "/") > 9:
			return filepath.SkipDir // another Pod's, or deeper than any Pod's
		}
		return nil
	})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(found).NotTo(BeEmpty(), "the %s cgroup of Pod %s", hierarchy, uid)
	return found
}

// workingSetMiB is the cgroup's memory usage less its inactive file pages,
// as the kubelet counts a working set.
func workingSetMiB(g Gomega, cgroup string) float64 {
	usage := readUint(g, filepath.Join(cgroup, "memory.usage_in_bytes"))
	stat, err := os.ReadFile(filepath.Join(cgroup, "memory.stat"))
	g.Expect(err).NotTo(HaveOccurred())
	var inactive uint64
	for _, line := range strings.Split(string(stat), "\n") {
		if value, ok := strings.CutPrefix(line, "total_inactive_file "); ok {
			inactive, err = strconv.ParseUint(value, 10, 64)
			g.Expect(err).NotTo(HaveOccurred())
		}
	}
	return float64(usage-min(inactive, usage)) / (1 << 20)
}

func readUint(g Gomega, path string) uint64 {
	data, err := os.ReadFile(path) //nolint:gosec // a cgroup file
	g.Expect(err).NotTo(HaveOccurred())
	value, err := strconv.ParseUint(strings.TrimSpace(string(data)), 10, 64)
	g.Expect(err).NotTo(HaveOccurred())
	return value
}

// machineMemoryAndLoad reads MemAvailable (MiB) and the load averages of the
// machine all hosting nodes share.
func machineMemoryAndLoad(g Gomega) (float64, string) {
	meminfo, err := os.ReadFile("/proc/meminfo")
	g.Expect(err).NotTo(HaveOccurred())
	var available float64
	for _, line := range strings.Split(string(meminfo), "\n") {
		if fields := strings.Fields(line); len(fields) >= 2 && fields[0] == "MemAvailable:" {
			kib, err := strconv.ParseFloat(fields[1], 64)
			g.Expect(err).NotTo(HaveOccurred())
			available = kib / 1024
		}
	}
	loadavg, err := os.ReadFile("/proc/loadavg")
	g.Expect(err).NotTo(HaveOccurred())
	return available, strings.Join(strings.Fields(string(loadavg))[:3], " ")
}
