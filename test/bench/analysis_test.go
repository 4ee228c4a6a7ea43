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
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// observations of 10 machines: provisioned in 10 s after raw creates at 100/s,
// with 4 writes per machine in the timed window and one more in the tail; the
// baseline makes its 5 writes per machine in 2 s.
func testObservations() *Observations {
	t0 := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	at := func(seconds float64) time.Time { return t0.Add(time.Duration(seconds * float64(time.Second))) }
	o := &Observations{
		Clusters: 2, MachinesPerCluster: 5, ManagerUser: "manager", BaselineUser: "baseline",
		RawPods: 1000, RawDuration: 10 * time.Second, RawAPIServerCPU: 2 * time.Second,
		APIServerCPU: 500 * time.Millisecond,
		Provisioning: Window{From: at(0), To: at(10)}, ProvisioningTail: Window{From: at(10), To: at(30)},
		Steady:   Window{From: at(30), To: at(90)},
		Deletion: Window{From: at(100), To: at(105)}, DeletionTail: Window{From: at(105), To: at(110)},
		ReconcilesBefore: 5, ReconcilesAfter: 35,
		CPUProvisioningStart: time.Second, CPUSteadyStart: 4 * time.Second, CPUSteadyEnd: 4100 * time.Millisecond, CPUEnd: 6 * time.Second,
		PeakRSSBytes: 100 << 20, FileRSSBytes: 40 << 20,
		Baseline: Window{From: at(120), To: at(122)}, BaselineMachines: 10, BaselineWorkers: 10, BaselineAPIServerCPU: time.Second,
	}
	for i := range 10 {
		o.Latencies = append(o.Latencies, time.Duration(i+1)*time.Second)
		for j, key := range []string{"create pods", "create secrets", "patch kubernetesmachines", "patch kubernetesmachines/status"} {
			o.Requests = append(o.Requests, Request{User: "manager", Verb: strings.Fields(key)[0], Resource: strings.Fields(key)[1], Received: at(float64(i) + float64(j)/10)})
		}
		o.Requests = append(o.Requests,
			Request{User: "manager", Verb: "create", Resource: "events", Received: at(20)},                 // tail: counted per machine, not in the rate
			Request{User: "manager", Verb: "delete", Resource: "pods", Received: at(101)},                  // deletion
			Request{User: "simulator", Verb: "create", Resource: "pods/binding", Received: at(float64(i))}, // another user
		)
		o.Requests = append(o.Requests, baselineRequests(at(120+float64(i)/10))...)
	}
	o.Requests = append(o.Requests,
		Request{User: "manager", Verb: "get", Resource: "secrets", Received: at(15), Code: 409},
		Request{User: "manager", Verb: "update", Resource: "leases", Received: at(40)},
		Request{User: "manager", Verb: "update", Resource: "leases", Received: at(60)},
		Request{User: "manager", Verb: "watch", Resource: "pods", Received: at(70)},
	)
	return o
}

// baselineRequests are the baseline's writes of one machine, from at on:
// the provider's five.
func baselineRequests(at time.Time) []Request {
	var requests []Request
	for i, key := range []string{"patch kubernetesmachines", "create secrets", "create pods", "patch kubernetesmachines/status", "patch kubernetesmachines/status"} {
		verb, resource, _ := strings.Cut(key, " ")
		requests = append(requests, Request{User: "baseline", Verb: verb, Resource: resource, Received: at.Add(time.Duration(i) * time.Millisecond)})
	}
	return requests
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestFiguresFromObservations(t *testing.T) {
	f := testObservations().Figures(Host{CPUs: 2})
	p := f.Provisioning
	checks := []struct {
		name      string
		got, want float64
	}{
		{"raw creates/s", f.RawPodCreatesPerSecond, 100},
		{"machines/s", p.MachinesPerSecond, 1},
		{"manager writes/s in the timed window", p.ManagerWritesPerSecond, 4},
		{"write rate ratio", p.WriteRateRatio, 0.04},
		{"writes per machine, tail included", p.WritesPerMachine, 5},
		{"reads per machine", p.ReadsPerMachine, 0.1},
		{"conflicts per machine", p.ConflictsPerMachine, 0.1},
		{"baseline machines/s", f.Baseline.MachinesPerSecond, 5},
		{"baseline writes per machine", f.Baseline.WritesPerMachine, 5},
		{"API server CPU per baseline machine (ms)", f.Baseline.APIServerCPUMillisPerMachine, 100},
		{"utilisation = machines/s / baseline machines/s", p.Utilisation, 0.2},
		{"ratio to raw Pod creates = machines/s x writes/machine / raw", p.RatioToRawPodCreates, 0.05},
		{"p50", p.LatencyP50Seconds, 5},
		{"p99", p.LatencyP99Seconds, 10},
		{"reconciles per machine", p.ReconcilesPerMachine, 3},
		{"provisioning CPU", p.ManagerCPUSeconds, 3},
		{"steady non-lease requests/min", f.SteadyState.RequestsPerMinute, 1},
		{"steady lease requests/min", f.SteadyState.LeaseRequestsPerMinute, 2},
		{"deleted/s", f.Deletion.MachinesPerSecond, 2},
		{"deletion writes per machine", f.Deletion.WritesPerMachine, 1},
		{"peak RSS MiB", f.Manager.PeakRSSMiB, 100},
		{"file RSS MiB", f.Manager.FileRSSMiB, 40},
		{"API server CPU per raw create (ms)", f.RawAPIServerCPUMillisPerCreate, 2},
		{"API server CPU per machine (ms)", p.APIServerCPUMillisPerMachine, 50},
		{"API server CPU per manager write (ms)", p.APIServerCPUMillisPerWrite, 10},
	}
	for _, c := range checks {
		if !near(c.got, c.want) {
			t.Errorf("%s = %g, want %g", c.name, c.got, c.want)
		}
	}
	if got := p.RequestsPerMachine["create events"]; !near(got, 1) {
		t.Errorf("create events per machine = %g, want 1", got)
	}
	if got := f.Baseline.RequestsPerMachine["patch kubernetesmachines/status"]; !near(got, 2) || f.Baseline.Workers != 10 {
		t.Errorf("baseline status patches per machine = %g with %d workers, want 2 with 10", got, f.Baseline.Workers)
	}
}

func TestBaselineIsNotTheManagersRequests(t *testing.T) {
	o := testObservations()
	o.Provisioning, o.ProvisioningTail = Window{From: o.Baseline.From, To: o.Baseline.To}, Window{}
	f := o.Figures(Host{})
	if got := f.Provisioning.WritesPerMachine; got != 0 {
		t.Errorf("the manager's writes per machine count the baseline's: %g", got)
	}
}

func TestTargets(t *testing.T) {
	f := testObservations().Figures(Host{})
	verdicts := map[string]bool{}
	for _, target := range f.Targets {
		verdicts[target.Name] = target.Pass
	}
	want := map[string]bool{
		"manager writes per machine":          true,  // 5 <= 5
		"manager peak RSS (MiB)":              true,  // 100 <= 100
		UtilisationTarget:                     false, // 0.2 < 0.8
		"steady-state non-lease requests/min": true,  // 1 <= 2
	}
	for name, pass := range want {
		if got, ok := verdicts[name]; !ok || got != pass {
			t.Errorf("target %q pass = %t (present %t), want %t", name, got, ok, pass)
		}
	}
	if s := f.Targets[2].String(); s != "MISS (>= 0.8)" {
		t.Errorf("utilisation target prints %q", s)
	}
}

func TestReportTableAndJSON(t *testing.T) {
	f := testObservations().Figures(Host{CPUs: 2, MemoryGiB: 23.5, OS: "linux", Arch: "amd64", GoVersion: "go1.26.8"})
	var out bytes.Buffer
	if err := f.PrintTable(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"2 clusters x 5 machines = 10 machines on 2 CPUs, 23.5 GiB RAM", "MISS (>= 0.8)", "create events", "update leases",
		"baseline machines/s (plain client, 10 workers)", "ratio to raw Pod creates", "reconciles per machine", "manager peak RSS (MiB)",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the table lacks %q:\n%s", want, out.String())
		}
	}
	path := filepath.Join(t.TempDir(), "out", "bench-results.json")
	if err := f.WriteJSON(path); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var decoded Figures
	if err := json.Unmarshal(data, &decoded); err != nil {
		t.Fatal(err)
	}
	if decoded.Machines != 10 || !near(decoded.Provisioning.WritesPerMachine, 5) || len(decoded.Targets) != 4 ||
		!near(decoded.Baseline.MachinesPerSecond, 5) || !near(decoded.Provisioning.RatioToRawPodCreates, 0.05) ||
		!near(decoded.Provisioning.ReconcilesPerMachine, 3) || !near(decoded.Manager.PeakRSSMiB, 100) {
		t.Errorf("the JSON does not round-trip: %s", data)
	}
}
