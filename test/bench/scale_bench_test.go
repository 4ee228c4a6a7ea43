//go:build bench

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

	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/test/envtest"
)

// BenchmarkScale provisions and deletes BENCH_CLUSTERS x
// BENCH_MACHINES_PER_CLUSTER machines with the manager binary on a real API
// server (make bench). It fails on correctness problems and reports the
// performance targets.
func BenchmarkScale(b *testing.B) {
	settings, err := SettingsFromEnv(os.Getenv, envtest.RepositoryRoot())
	if err != nil {
		b.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "capk-bench-")
	if err != nil {
		b.Fatal(err)
	}
	run := newScaleRun(settings, dir, b.Logf)
	b.Cleanup(func() {
		if err := run.stop(); err != nil {
			b.Error(err)
		}
		if b.Failed() || os.Getenv("BENCH_KEEP") != "" {
			b.Logf("kept %s (manager.log, audit.log)", dir)
			if run.manager != nil && b.Failed() {
				b.Logf("last lines of %s:\n%s", run.manager.logPath, run.manager.tail(40))
			}
			return
		}
		_ = os.RemoveAll(dir)
	})
	ctx := b.Context()
	b.Logf("%d clusters x %d machines; files in %s", settings.Clusters, settings.MachinesPerCluster, dir)
	for _, phase := range []struct {
		name string
		run  func() error
	}{
		{"start", func() error { return run.start(ctx) }},
		{"raw create rate", func() error { return run.measureRawRate(ctx) }},
		{"set up clusters", func() error { return run.setUp(ctx) }},
		{"provisioning", func() error { return run.provision(ctx) }},
		{"steady state", func() error { return run.steady(ctx) }},
		{"deletion", func() error { return run.deleteAll(ctx) }},
		{"manager totals", run.recordManagerTotals},
		{"baseline", func() error { return run.measureBaseline(ctx) }},
	} {
		b.Logf("phase: %s", phase.name)
		if err := phase.run(); err != nil {
			b.Fatalf("%s: %v", phase.name, err)
		}
	}
	report(b, run, settings.Output)
	if err := run.correctness(); err != nil {
		b.Fatal(err)
	}
}

// report prints the figures, writes them as JSON and reports the main ones as
// benchmark metrics.
func report(b *testing.B, run *scaleRun, output string) {
	figures, err := run.finish()
	if err != nil {
		b.Fatal(err)
	}
	if err := figures.PrintTable(os.Stdout); err != nil {
		b.Fatal(err)
	}
	if err := figures.WriteJSON(output); err != nil {
		b.Fatal(err)
	}
	b.Logf("wrote %s", output)
	p := figures.Provisioning
	b.ReportMetric(figures.RawPodCreatesPerSecond, "raw-creates/s")
	b.ReportMetric(p.MachinesPerSecond, "machines/s")
	b.ReportMetric(p.WritesPerMachine, "writes/machine")
	b.ReportMetric(figures.Baseline.MachinesPerSecond, "baseline-machines/s")
	b.ReportMetric(p.Utilisation, "utilisation")
	b.ReportMetric(p.RatioToRawPodCreates, "ratio-to-raw-creates")
	b.ReportMetric(p.ReconcilesPerMachine, "reconciles/machine")
	b.ReportMetric(p.LatencyP50Seconds, "p50-s")
	b.ReportMetric(p.LatencyP99Seconds, "p99-s")
	b.ReportMetric(figures.Manager.PeakRSSMiB, "peak-RSS-MiB")
	b.ReportMetric(figures.SteadyState.RequestsPerMinute, "steady-req/min")
	b.ReportMetric(figures.Deletion.MachinesPerSecond, "deleted/s")
}
