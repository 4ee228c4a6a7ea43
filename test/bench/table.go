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
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
)

// row is one line of the printed table.
type row struct {
	figure, value, target string
}

// PrintTable writes the figures as aligned tables: the main figures with their
// targets, then the requests per machine of the manager and of the baseline.
func (f *Figures) PrintTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	out := &lineWriter{w: tw}
	out.printf("Scale benchmark: %d clusters x %d machines = %d machines on %d CPUs, %.1f GiB RAM (%s/%s, %s)\n",
		f.Clusters, f.MachinesPerCluster, f.Machines, f.Host.CPUs, f.Host.MemoryGiB, f.Host.OS, f.Host.Arch, f.Host.GoVersion)
	out.printf("1-minute load average: %.2f at the start, %.2f at the end\n", f.Host.LoadAtStart, f.Host.LoadAtEnd)
	out.printf("manager built from: %s\n", f.ManagerBuild)
	if len(f.ManagerArgs) > 0 {
		out.printf("manager flags: %s\n", strings.Join(f.ManagerArgs, " "))
	}
	for _, note := range f.Notes {
		out.printf("note: %s\n", note)
	}
	out.printf("FIGURE\tVALUE\tTARGET\n")
	for _, r := range f.rows() {
		out.printf("%s\t%s\t%s\n", r.figure, r.value, r.target)
	}
	provisioning, deletion, baseline := f.Provisioning.RequestsPerMachine, f.Deletion.RequestsPerMachine, f.Baseline.RequestsPerMachine
	out.printf("\nREQUESTS PER MACHINE\tMANAGER PROVISIONING\tMANAGER DELETION\tBASELINE\n")
	for _, key := range requestKeys(provisioning, deletion, baseline) {
		out.printf("%s\t%.2f\t%.2f\t%.2f\n", key, provisioning[key], deletion[key], baseline[key])
	}
	if len(f.SteadyState.Requests) > 0 {
		out.printf("\nMANAGER REQUESTS IN THE STEADY STATE (%.0f s)\tCOUNT\t\n", f.SteadyState.Seconds)
		for _, key := range Tally(f.SteadyState.Requests).Keys() {
			out.printf("%s\t%d\t\n", key, f.SteadyState.Requests[key])
		}
	}
	if out.err != nil {
		return out.err
	}
	return tw.Flush()
}

// lineWriter keeps the first write error, so a table is written without an
// error check per line.
type lineWriter struct {
	w   io.Writer
	err error
}

func (l *lineWriter) printf(format string, args ...any) {
	if l.err == nil {
		_, l.err = fmt.Fprintf(l.w, format, args...)
	}
}

// rows are the main figures, with the verdicts of their targets.
func (f *Figures) rows() []row {
	target := map[string]string{}
	for _, t := range f.Targets {
		target[t.Name] = t.String()
	}
	p, s, d, b := f.Provisioning, f.SteadyState, f.Deletion, f.Baseline
	return []row{
		{"raw Pod creates/s (plain client, 32 workers)", fmt.Sprintf("%.1f", f.RawPodCreatesPerSecond), ""},
		{fmt.Sprintf("baseline machines/s (plain client, %d workers)", b.Workers), fmt.Sprintf("%.2f", b.MachinesPerSecond), ""},
		{"  baseline writes per machine", fmt.Sprintf("%.2f", b.WritesPerMachine), ""},
		{"provisioning time (s)", fmt.Sprintf("%.1f", p.Seconds), ""},
		{"machines provisioned/s", fmt.Sprintf("%.2f", p.MachinesPerSecond), ""},
		{UtilisationTarget, fmt.Sprintf("%.2f", p.Utilisation), target[UtilisationTarget]},
		{"ratio to raw Pod creates (machines/s x writes/machine)", fmt.Sprintf("%.2f", p.RatioToRawPodCreates), ""},
		{"manager writes/s during provisioning", fmt.Sprintf("%.1f", p.ManagerWritesPerSecond), ""},
		{"  / raw Pod creates/s", fmt.Sprintf("%.2f", p.WriteRateRatio), ""},
		{"latency bootstrap ready -> provisioned p50 (s)", fmt.Sprintf("%.2f", p.LatencyP50Seconds), ""},
		{"latency bootstrap ready -> provisioned p99 (s)", fmt.Sprintf("%.2f", p.LatencyP99Seconds), ""},
		{"latency bootstrap ready -> provisioned max (s)", fmt.Sprintf("%.2f", p.LatencyMaxSeconds), ""},
		{"API server / etcd CPU while provisioning (s)", fmt.Sprintf("%.1f / %.1f", p.APIServerCPUSeconds, p.EtcdCPUSeconds), ""},
		{"API server CPU per machine (ms)", fmt.Sprintf("%.1f", p.APIServerCPUMillisPerMachine), ""},
		{"  per manager write (ms)", fmt.Sprintf("%.2f", p.APIServerCPUMillisPerWrite), ""},
		{"  per raw Pod create (ms)", fmt.Sprintf("%.2f", f.RawAPIServerCPUMillisPerCreate), ""},
		{"  per baseline machine (ms)", fmt.Sprintf("%.1f", b.APIServerCPUMillisPerMachine), ""},
		{"manager writes per machine", fmt.Sprintf("%.2f", p.WritesPerMachine), target["manager writes per machine"]},
		{"  before: while waiting for the cluster", fmt.Sprintf("%.2f", p.StagingWritesPerMachine), ""},
		{"manager reads per machine", fmt.Sprintf("%.2f", p.ReadsPerMachine), ""},
		{"manager 409 conflicts per machine", fmt.Sprintf("%.2f", p.ConflictsPerMachine), ""},
		{"reconciles per machine", fmt.Sprintf("%.2f", p.ReconcilesPerMachine), ""},
		{"manager CPU during provisioning (s)", fmt.Sprintf("%.1f", p.ManagerCPUSeconds), ""},
		{"steady-state non-lease requests/min", fmt.Sprintf("%.1f", s.RequestsPerMinute), target["steady-state non-lease requests/min"]},
		{"steady-state lease requests/min", fmt.Sprintf("%.1f", s.LeaseRequestsPerMinute), ""},
		{"steady-state manager CPU (s)", fmt.Sprintf("%.2f", s.ManagerCPUSeconds), ""},
		{"deletion time (s)", fmt.Sprintf("%.1f", d.Seconds), ""},
		{"machines deleted/s", fmt.Sprintf("%.2f", d.MachinesPerSecond), ""},
		{"manager writes per deleted machine", fmt.Sprintf("%.2f", d.WritesPerMachine), ""},
		{"leftover node Pods / bootstrap Secrets / claims", fmt.Sprintf("%d / %d / %d", d.LeftoverPods, d.LeftoverSecrets, d.LeftoverClaims), "0 / 0 / 0"},
		{"manager peak RSS (MiB)", fmt.Sprintf("%.1f", f.Manager.PeakRSSMiB), target["manager peak RSS (MiB)"]},
		{"of it, the binary mapped (RssFile, MiB)", fmt.Sprintf("%.1f", f.Manager.FileRSSMiB), ""},
		{"manager CPU, to the end of deletion (s)", fmt.Sprintf("%.1f", f.Manager.CPUSeconds), ""},
	}
}

// requestKeys are the keys of all the maps, grouped by class (writes first),
// then by name.
func requestKeys(tallies ...map[string]float64) []string {
	set := map[string]bool{}
	for _, tally := range tallies {
		for key := range tally {
			set[key] = true
		}
	}
	keys := slices.Collect(maps.Keys(set))
	order := map[string]int{ClassWrite: 0, ClassRead: 1, ClassLease: 2, ClassAuth: 3}
	slices.SortFunc(keys, func(x, y string) int {
		if cx, cy := order[ClassOf(x)], order[ClassOf(y)]; cx != cy {
			return cx - cy
		}
		return strings.Compare(x, y)
	})
	return keys
}

// PerMachine divides each count of the tally by machines.
func PerMachine(t Tally, machines int) map[string]float64 {
	perMachine := make(map[string]float64, len(t))
	for key, count := range t {
		perMachine[key] = Ratio(float64(count), float64(machines))
	}
	return perMachine
}
