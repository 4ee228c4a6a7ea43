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
	"time"
)

// Observations are what one run measured; Figures derives the results.
type Observations struct {
	Clusters, MachinesPerCluster int
	ManagerUser                  string
	BaselineUser                 string
	ManagerArgs                  []string
	ManagerBuild                 string
	Notes                        []string

	RawPods     int
	RawDuration time.Duration
	// RawAPIServerCPU is what kube-apiserver used while the raw Pods were created.
	RawAPIServerCPU time.Duration

	// Staging runs from the first machine created to every machine reported
	// waiting for its cluster's infrastructure.
	Staging Window
	// Provisioning runs from the release of the clusters (their
	// infrastructure provisioned: every machine's bootstrap data is ready) to
	// the last machine seen provisioned; ProvisioningTail then runs to the
	// steady state, for the requests and reconciles provisioning still caused.
	Provisioning, ProvisioningTail Window
	Latencies                      []time.Duration
	// APIServerCPU and EtcdCPU are what those processes used in Provisioning.
	APIServerCPU, EtcdCPU time.Duration
	// Reconciles are the manager's KubernetesMachine reconciles, counted at
	// the start of Provisioning and at the end of ProvisioningTail.
	ReconcilesBefore, ReconcilesAfter float64

	Steady Window

	// Baseline runs from the baseline's first write to its last answer;
	// BaselineAPIServerCPU is what kube-apiserver used in it.
	Baseline                          Window
	BaselineMachines, BaselineWorkers int
	BaselineAPIServerCPU              time.Duration

	// Deletion runs from the first delete to the last KubernetesMachine gone;
	// DeletionTail adds the seconds after it.
	Deletion, DeletionTail                        Window
	LeftoverPods, LeftoverSecrets, LeftoverClaims int

	// ManagerCPU is the manager's CPU time at the start of provisioning, at
	// the start and end of the steady state, and at the end of the run.
	CPUProvisioningStart, CPUSteadyStart, CPUSteadyEnd, CPUEnd time.Duration
	PeakRSSBytes, FileRSSBytes                                 int64

	Requests []Request
}

// Machines is the number of machines of the run.
func (o *Observations) Machines() int { return o.Clusters * o.MachinesPerCluster }

// Figures computes the results and evaluates the targets.
func (o *Observations) Figures(host Host) Figures {
	f := Figures{
		Host: host, Clusters: o.Clusters, MachinesPerCluster: o.MachinesPerCluster, Machines: o.Machines(),
		ManagerArgs: o.ManagerArgs, ManagerBuild: o.ManagerBuild, Notes: o.Notes,
		RawPodCreatesPerSecond:         PerSecond(float64(o.RawPods), o.RawDuration),
		RawAPIServerCPUMillisPerCreate: Ratio(millis(o.RawAPIServerCPU), float64(o.RawPods)),
		Baseline:                       o.baseline(),
		Provisioning:                   o.provisioning(),
		SteadyState:                    o.steadyState(),
		Deletion:                       o.deletion(),
		Manager: ManagerUsage{
			PeakRSSMiB: float64(o.PeakRSSBytes) / (1 << 20),
			FileRSSMiB: float64(o.FileRSSBytes) / (1 << 20),
			CPUSeconds: o.CPUEnd.Seconds(),
		},
	}
	p := &f.Provisioning
	p.WriteRateRatio = Ratio(p.ManagerWritesPerSecond, f.RawPodCreatesPerSecond)
	p.Utilisation = Ratio(p.MachinesPerSecond, f.Baseline.MachinesPerSecond)
	p.RatioToRawPodCreates = Ratio(p.MachinesPerSecond*p.WritesPerMachine, f.RawPodCreatesPerSecond)
	p.APIServerCPUMillisPerWrite = Ratio(p.APIServerCPUMillisPerMachine, p.WritesPerMachine)
	f.EvaluateTargets()
	return f
}

func (o *Observations) provisioning() Provisioning {
	n := o.Machines()
	timed := CountRequests(o.Requests, o.ManagerUser, o.Provisioning)
	all := Window{From: o.Provisioning.From, To: o.ProvisioningTail.To}
	tally := CountRequests(o.Requests, o.ManagerUser, all)
	return Provisioning{
		Seconds:                      o.Provisioning.Duration().Seconds(),
		MachinesPerSecond:            PerSecond(float64(n), o.Provisioning.Duration()),
		ManagerWritesPerSecond:       PerSecond(float64(timed.Class(ClassWrite)), o.Provisioning.Duration()),
		LatencyP50Seconds:            Percentile(o.Latencies, 50).Seconds(),
		LatencyP99Seconds:            Percentile(o.Latencies, 99).Seconds(),
		LatencyMaxSeconds:            Percentile(o.Latencies, 100).Seconds(),
		WritesPerMachine:             Ratio(float64(tally.Class(ClassWrite)), float64(n)),
		ReadsPerMachine:              Ratio(float64(tally.Class(ClassRead)), float64(n)),
		ConflictsPerMachine:          Ratio(float64(CountConflicts(o.Requests, o.ManagerUser, all)), float64(n)),
		StagingWritesPerMachine:      Ratio(float64(CountRequests(o.Requests, o.ManagerUser, o.Staging).Class(ClassWrite)), float64(n)),
		RequestsPerMachine:           PerMachine(tally, n),
		ReconcilesPerMachine:         Ratio(o.ReconcilesAfter-o.ReconcilesBefore, float64(n)),
		ManagerCPUSeconds:            (o.CPUSteadyStart - o.CPUProvisioningStart).Seconds(),
		APIServerCPUSeconds:          o.APIServerCPU.Seconds(),
		EtcdCPUSeconds:               o.EtcdCPU.Seconds(),
		APIServerCPUMillisPerMachine: Ratio(millis(o.APIServerCPU), float64(n)),
	}
}

func (o *Observations) baseline() Baseline {
	n := o.BaselineMachines
	tally := CountRequests(o.Requests, o.BaselineUser, o.Baseline)
	return Baseline{
		Machines:                     n,
		Workers:                      o.BaselineWorkers,
		Seconds:                      o.Baseline.Duration().Seconds(),
		MachinesPerSecond:            PerSecond(float64(n), o.Baseline.Duration()),
		WritesPerMachine:             Ratio(float64(tally.Class(ClassWrite)), float64(n)),
		RequestsPerMachine:           PerMachine(tally, n),
		APIServerCPUSeconds:          o.BaselineAPIServerCPU.Seconds(),
		APIServerCPUMillisPerMachine: Ratio(millis(o.BaselineAPIServerCPU), float64(n)),
	}
}

// millis is d in milliseconds.
func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func (o *Observations) steadyState() SteadyState {
	tally := CountRequests(o.Requests, o.ManagerUser, o.Steady)
	minutes := o.Steady.Duration().Minutes()
	nonLease := tally.Total() - tally.Class(ClassLease)
	return SteadyState{
		Seconds:                o.Steady.Duration().Seconds(),
		RequestsPerMinute:      Ratio(float64(nonLease), minutes),
		LeaseRequestsPerMinute: Ratio(float64(tally.Class(ClassLease)), minutes),
		Requests:               tally,
		ManagerCPUSeconds:      (o.CPUSteadyEnd - o.CPUSteadyStart).Seconds(),
	}
}

func (o *Observations) deletion() Deletion {
	n := o.Machines()
	tally := CountRequests(o.Requests, o.ManagerUser, Window{From: o.Deletion.From, To: o.DeletionTail.To})
	return Deletion{
		Seconds:            o.Deletion.Duration().Seconds(),
		MachinesPerSecond:  PerSecond(float64(n), o.Deletion.Duration()),
		WritesPerMachine:   Ratio(float64(tally.Class(ClassWrite)), float64(n)),
		RequestsPerMachine: PerMachine(tally, n),
		LeftoverPods:       o.LeftoverPods,
		LeftoverSecrets:    o.LeftoverSecrets,
		LeftoverClaims:     o.LeftoverClaims,
	}
}
