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
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// Figures are the results of one run, as printed and as written to JSON.
type Figures struct {
	Host               Host     `json:"host"`
	Clusters           int      `json:"clusters"`
	MachinesPerCluster int      `json:"machinesPerCluster"`
	Machines           int      `json:"machines"`
	ManagerArgs        []string `json:"managerArgs"`
	// ManagerBuild is the commit of the source tree the manager was built from.
	ManagerBuild string `json:"managerBuild"`
	// Notes say how the run differed from a production install.
	Notes []string `json:"notes,omitempty"`
	// RawPodCreatesPerSecond is the rate a plain client creates simple Pods at:
	// what the API server allows, the limit the controller can approach.
	RawPodCreatesPerSecond float64 `json:"rawPodCreatesPerSecond"`
	// RawAPIServerCPUMillisPerCreate is kube-apiserver's CPU time per raw create.
	RawAPIServerCPUMillisPerCreate float64 `json:"rawAPIServerCPUMillisPerCreate"`
	// Baseline is a plain client making the provider's writes of provisioning:
	// the machine rate the manager's is measured against (utilisation).
	Baseline     Baseline     `json:"baseline"`
	Provisioning Provisioning `json:"provisioning"`
	SteadyState  SteadyState  `json:"steadyState"`
	Deletion     Deletion     `json:"deletion"`
	Manager      ManagerUsage `json:"manager"`
	Targets      []Target     `json:"targets"`
}

// Host is the machine the benchmark ran on.
type Host struct {
	CPUs      int     `json:"cpus"`
	MemoryGiB float64 `json:"memoryGiB"`
	OS        string  `json:"os"`
	Arch      string  `json:"arch"`
	GoVersion string  `json:"goVersion"`
	// LoadAtStart and LoadAtEnd are the 1-minute load averages when the run
	// started and ended: other work on the machine skews every figure.
	LoadAtStart float64 `json:"loadAtStart"`
	LoadAtEnd   float64 `json:"loadAtEnd"`
}

// Provisioning covers the machines from the first created to the last
// provisioned (rates), and to the start of the steady state (per machine).
type Provisioning struct {
	Seconds           float64 `json:"seconds"`
	MachinesPerSecond float64 `json:"machinesPerSecond"`
	// ManagerWritesPerSecond are the manager's writes in the timed window.
	ManagerWritesPerSecond float64 `json:"managerWritesPerSecond"`
	// WriteRateRatio is ManagerWritesPerSecond over the raw Pod create rate.
	WriteRateRatio float64 `json:"writeRateRatio"`
	// Utilisation is MachinesPerSecond over the baseline's machines per
	// second: how close the manager comes to the same writes made by a plain
	// client that does nothing else.
	Utilisation float64 `json:"utilisation"`
	// RatioToRawPodCreates is machines/s × writes/machine over the raw Pod
	// create rate (what utilisation meant before the baseline): it compares
	// the provider's writes with the cheapest write there is.
	RatioToRawPodCreates float64 `json:"ratioToRawPodCreates"`
	LatencyP50Seconds    float64 `json:"latencyP50Seconds"`
	LatencyP99Seconds    float64 `json:"latencyP99Seconds"`
	LatencyMaxSeconds    float64 `json:"latencyMaxSeconds"`
	// WritesPerMachine are the manager's writes from a machine's bootstrap
	// data ready to provisioned; StagingWritesPerMachine those before, while
	// the machine waited for its cluster's infrastructure.
	WritesPerMachine        float64 `json:"writesPerMachine"`
	StagingWritesPerMachine float64 `json:"stagingWritesPerMachine"`
	ReadsPerMachine         float64 `json:"readsPerMachine"`
	// ConflictsPerMachine are the manager's requests answered 409 Conflict.
	ConflictsPerMachine float64 `json:"conflictsPerMachine"`
	// RequestsPerMachine are the manager's requests by "verb resource".
	RequestsPerMachine   map[string]float64 `json:"requestsPerMachine"`
	ReconcilesPerMachine float64            `json:"reconcilesPerMachine"`
	ManagerCPUSeconds    float64            `json:"managerCPUSeconds"`
	// APIServerCPUSeconds and EtcdCPUSeconds are what kube-apiserver and etcd
	// used from the release to the last machine provisioned.
	APIServerCPUSeconds float64 `json:"apiServerCPUSeconds"`
	EtcdCPUSeconds      float64 `json:"etcdCPUSeconds"`
	// APIServerCPUMillisPerMachine is kube-apiserver's CPU time in that window
	// per machine (the manager's writes, the simulator's, the watch events and
	// webhook calls they cause); APIServerCPUMillisPerWrite divides it by the
	// manager's writes per machine, to compare with a raw create.
	APIServerCPUMillisPerMachine float64 `json:"apiServerCPUMillisPerMachine"`
	APIServerCPUMillisPerWrite   float64 `json:"apiServerCPUMillisPerWrite"`
}

// Baseline is what a plain client without a client-side rate limit achieves
// making, per machine, the writes the provider makes while it provisions one:
// a patch of the KubernetesMachine (finalizer and provider ID, through the
// admission webhooks), the bootstrap Secret and the node Pod created, two
// status patches. Its KubernetesMachines, namespaces and objects are its own.
type Baseline struct {
	Machines int `json:"machines"`
	// Workers make the writes concurrently: the manager's --concurrency.
	Workers           int     `json:"workers"`
	Seconds           float64 `json:"seconds"`
	MachinesPerSecond float64 `json:"machinesPerSecond"`
	// WritesPerMachine and RequestsPerMachine are the baseline's requests in
	// the audit log: the check that it made what the provider makes.
	WritesPerMachine   float64            `json:"writesPerMachine"`
	RequestsPerMachine map[string]float64 `json:"requestsPerMachine"`
	// APIServerCPUSeconds is what kube-apiserver used while the baseline ran;
	// per machine, it compares with the provider's.
	APIServerCPUSeconds          float64 `json:"apiServerCPUSeconds"`
	APIServerCPUMillisPerMachine float64 `json:"apiServerCPUMillisPerMachine"`
}

// SteadyState is a window after provisioning in which nothing changes.
type SteadyState struct {
	Seconds float64 `json:"seconds"`
	// RequestsPerMinute are the manager's requests other than leases.
	RequestsPerMinute      float64        `json:"requestsPerMinute"`
	LeaseRequestsPerMinute float64        `json:"leaseRequestsPerMinute"`
	Requests               map[string]int `json:"requests"`
	ManagerCPUSeconds      float64        `json:"managerCPUSeconds"`
}

// Deletion covers deleting every machine until the last KubernetesMachine is gone.
type Deletion struct {
	Seconds            float64            `json:"seconds"`
	MachinesPerSecond  float64            `json:"machinesPerSecond"`
	WritesPerMachine   float64            `json:"writesPerMachine"`
	RequestsPerMachine map[string]float64 `json:"requestsPerMachine"`
	LeftoverPods       int                `json:"leftoverPods"`
	LeftoverSecrets    int                `json:"leftoverSecrets"`
	LeftoverClaims     int                `json:"leftoverClaims"`
}

// ManagerUsage is what the manager process used over its part of the run,
// up to the end of the deletion (the baseline comes after).
type ManagerUsage struct {
	PeakRSSMiB float64 `json:"peakRSSMiB"`
	// FileRSSMiB is the part of the resident set, at the end, that maps the
	// binary (RssFile): it does not grow with the machines.
	FileRSSMiB float64 `json:"fileRSSMiB"`
	CPUSeconds float64 `json:"cpuSeconds"`
}

// Target is a performance goal: reported, never failing the benchmark.
type Target struct {
	Name   string  `json:"name"`
	Value  float64 `json:"value"`
	Limit  float64 `json:"limit"`
	AtMost bool    `json:"atMost"` // the value must not exceed the limit; else reach it
	Pass   bool    `json:"pass"`
}

// Performance targets.
const (
	MaxWritesPerMachine = 5
	// MaxPeakRSSMiB is for the default run of 1,000 machines.
	MaxPeakRSSMiB = 100
	// MinUtilisation is the share of the baseline's machine rate the manager
	// should reach.
	MinUtilisation = 0.8
	// MaxSteadyRequestsPerMinute is "near zero": informers re-open each watch
	// every 5 to 10 minutes, so a minute may hold a watch or two.
	MaxSteadyRequestsPerMinute = 2
)

// UtilisationTarget names the utilisation target in the table and the JSON.
const UtilisationTarget = "utilisation: machines/s / baseline machines/s"

// EvaluateTargets sets f.Targets from the other figures.
func (f *Figures) EvaluateTargets() {
	f.Targets = []Target{
		newTarget("manager writes per machine", f.Provisioning.WritesPerMachine, MaxWritesPerMachine, true),
		newTarget("manager peak RSS (MiB)", f.Manager.PeakRSSMiB, MaxPeakRSSMiB, true),
		newTarget(UtilisationTarget, f.Provisioning.Utilisation, MinUtilisation, false),
		newTarget("steady-state non-lease requests/min", f.SteadyState.RequestsPerMinute, MaxSteadyRequestsPerMinute, true),
	}
}

func newTarget(name string, value, limit float64, atMost bool) Target {
	pass := value >= limit
	if atMost {
		pass = value <= limit
	}
	return Target{Name: name, Value: value, Limit: limit, AtMost: atMost, Pass: pass}
}

// String is the target as a table cell: PASS or MISS and the goal.
func (t Target) String() string {
	verdict, relation := "MISS", ">="
	if t.Pass {
		verdict = "PASS"
	}
	if t.AtMost {
		relation = "<="
	}
	return fmt.Sprintf("%s (%s %g)", verdict, relation, t.Limit)
}

// WriteJSON writes the figures to path, creating its folder.
func (f *Figures) WriteJSON(path string) error {
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("creating the folder of %s: %w", path, err)
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil { //nolint:gosec // results, not secrets
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
