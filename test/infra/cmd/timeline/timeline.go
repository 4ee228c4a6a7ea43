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

package main

import (
	"slices"
	"time"
)

// The milestones of a machine, in the order a machine normally reaches them.
// Each is taken from an API object's timestamps or conditions, or from a line
// of the node Pod's console log (never from inside the node).
const (
	MachineCreated     = "machine created"      // Machine creationTimestamp
	BootstrapDataReady = "bootstrap data ready" // Machine BootstrapConfigReady=True
	PodCreated         = "pod created"          // node Pod creationTimestamp
	PodScheduled       = "pod scheduled"        // node Pod PodScheduled=True
	PodStarted         = "pod started"          // the node container's startedAt
	SystemdBooted      = "systemd booted"       // console: Reached target basic.target
	BootstrapBegan     = "bootstrap began"      // console: first "bootstrap: " line
	BootstrapEnded     = "bootstrap ended"      // console: "bootstrap: finished"
	NodeRegistered     = "node registered"      // Node creationTimestamp
	NodeReady          = "node ready"           // Node Ready=True
)

// The milestones of a cluster.
const (
	ClusterCreated          = "cluster created"           // Cluster creationTimestamp
	ControlPlaneInitialized = "control plane initialized" // Cluster ControlPlaneInitialized=True
	ClusterAvailable        = "cluster available"         // Cluster Available=True
)

// machineMilestones is the order of a machine's milestones.
var machineMilestones = []string{MachineCreated, BootstrapDataReady, PodCreated, PodScheduled, PodStarted,
	SystemdBooted, BootstrapBegan, BootstrapEnded, NodeRegistered, NodeReady}

// Phase is a named span between two milestones of a row: what the time went on.
type Phase struct {
	Name, From, To string
}

// machinePhases are the spans a machine's bar is made of. They may overlap
// (the Node registers while kubeadm still runs) or be missing when a
// milestone is.
var machinePhases = []Phase{
	{"waiting for bootstrap data", MachineCreated, BootstrapDataReady},
	{"pod scheduling and start", PodCreated, PodStarted},
	{"systemd boot", PodStarted, SystemdBooted},
	{"bootstrap (kubeadm)", BootstrapBegan, BootstrapEnded},
	{"node ready", NodeRegistered, NodeReady},
}

var clusterPhases = []Phase{
	{"control plane initialization", ClusterCreated, ControlPlaneInitialized},
	{"until available", ControlPlaneInitialized, ClusterAvailable},
}

// Event is one milestone of a row, at an offset from the timeline's start.
type Event struct {
	Milestone string        `json:"milestone"`
	Time      time.Time     `json:"time"`
	Offset    time.Duration `json:"offsetNanoseconds"`
}

// Span is a phase of a row that both its milestones bound.
type Span struct {
	Phase string        `json:"phase"`
	Start time.Duration `json:"startNanoseconds"`
	End   time.Duration `json:"endNanoseconds"`
}

// Row is a machine, or the cluster itself.
type Row struct {
	Name   string  `json:"name"`
	Role   string  `json:"role"` // control-plane, worker or cluster
	Events []Event `json:"events"`
	Spans  []Span  `json:"spans"`
}

// Timeline is a cluster's rows, all measured from the cluster's creation.
type Timeline struct {
	Namespace string    `json:"namespace"`
	Cluster   string    `json:"cluster"`
	Start     time.Time `json:"start"`
	Rows      []Row     `json:"rows"`
}

// Milestones are the times found for one row, by milestone; a milestone not
// reached (or not found) is absent.
type Milestones map[string]time.Time

// MachineInput is what was found of one machine.
type MachineInput struct {
	Name, Role string
	Milestones Milestones
	node       string // its Node's name, once it has one
}

// buildTimeline orders the rows (the cluster, then control-plane machines,
// then workers, each by creation) and measures every milestone from the
// cluster's creation.
func buildTimeline(namespace, cluster string, clusterMilestones Milestones, machines []MachineInput) Timeline {
	start := clusterMilestones[ClusterCreated]
	t := Timeline{Namespace: namespace, Cluster: cluster, Start: start}
	t.Rows = append(t.Rows, row(cluster, "cluster", clusterMilestones,
		[]string{ClusterCreated, ControlPlaneInitialized, ClusterAvailable}, clusterPhases, start))
	sorted := slices.Clone(machines)
	slices.SortStableFunc(sorted, func(a, b MachineInput) int {
		if a.Role != b.Role {
			return roleOrder(a.Role) - roleOrder(b.Role)
		}
		return a.Milestones[MachineCreated].Compare(b.Milestones[MachineCreated])
	})
	for _, m := range sorted {
		t.Rows = append(t.Rows, row(m.Name, m.Role, m.Milestones, machineMilestones, machinePhases, start))
	}
	return t
}

func roleOrder(role string) int {
	if role == "control-plane" {
		return 0
	}
	return 1
}

func row(name, role string, found Milestones, order []string, phases []Phase, start time.Time) Row {
	r := Row{Name: name, Role: role}
	for _, m := range order {
		if at, ok := found[m]; ok {
			r.Events = append(r.Events, Event{Milestone: m, Time: at, Offset: at.Sub(start)})
		}
	}
	for _, p := range phases {
		from, okFrom := found[p.From]
		to, okTo := found[p.To]
		if okFrom && okTo && !to.Before(from) {
			r.Spans = append(r.Spans, Span{Phase: p.Name, Start: from.Sub(start), End: to.Sub(start)})
		}
	}
	return r
}

// end is the latest offset of any event: the length of the timeline.
func (t Timeline) end() time.Duration {
	var last time.Duration
	for _, r := range t.Rows {
		for _, e := range r.Events {
			last = max(last, e.Offset)
		}
	}
	return last
}
