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
	"encoding/xml"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

var t0 = time.Date(2026, 12, 4, 16, 0, 0, 0, time.UTC)

func at(seconds float64) time.Time { return t0.Add(time.Duration(seconds * float64(time.Second))) }

// A console log as the API server serves it with timestamps: systemd's
// coloured status lines, the script's progress lines (behind a unit prefix
// on one), a second boot that must not count.
const console = "2026-12-04T16:00:20.000000000Z systemd 257 running in system mode\n" +
	"2026-12-04T16:00:31.500000000Z [\x1b[0;32m  OK  \x1b[0m] Reached target \x1b[0;1;39mbasic.target\x1b[0m - Basic System.\r\n" +
	"2026-12-04T16:00:32.000000000Z bootstrap: setting the kubelet providerID\n" +
	"2026-12-04T16:00:33.000000000Z capk-bootstrap.sh[90]: bootstrap: running runcmd 1/1\n" +
	"not a timestamp bootstrap: finished\n" +
	"2026-12-04T16:00:58.250000000Z bootstrap: finished\n" +
	"2026-12-04T16:00:58.300000000Z [  OK  ] Reached target multi-user.target - Multi-User System.\n" +
	"2026-12-04T16:02:00.000000000Z [  OK  ] Reached target basic.target - Basic System.\n"

func TestConsoleMilestonesTakesTheFirstBootsMarks(t *testing.T) {
	found, err := consoleMilestones(strings.NewReader(console))
	if err != nil {
		t.Fatal(err)
	}
	want := Milestones{SystemdBooted: at(31.5), BootstrapBegan: at(32), BootstrapEnded: at(58.25)}
	if len(found) != len(want) {
		t.Fatalf("found %v, want %v", found, want)
	}
	for m, w := range want {
		if !found[m].Equal(w) {
			t.Errorf("%s: found %v, want %v", m, found[m], w)
		}
	}
}

func TestConsoleMilestoneIgnoresTheFailureLine(t *testing.T) {
	for line, want := range map[string]string{
		"bootstrap: failed while running runcmd 1/1 (exit code 1)": "",
		"Reached target multi-user.target - Multi-User System.":    "",
		"bootstrap: writing /etc/kubernetes/pki/ca.crt":            BootstrapBegan,
		"bootstrap: finished": BootstrapEnded,
	} {
		if got := consoleMilestone(line); got != want {
			t.Errorf("%q: got %q, want %q", line, got, want)
		}
	}
}

func sampleTimeline() Timeline {
	worker := Milestones{MachineCreated: at(1), BootstrapDataReady: at(70), PodCreated: at(71), PodStarted: at(73),
		SystemdBooted: at(85), BootstrapBegan: at(86), BootstrapEnded: at(100), NodeRegistered: at(95), NodeReady: at(110)}
	cp := Milestones{MachineCreated: at(2), BootstrapDataReady: at(3), PodCreated: at(4), PodScheduled: at(4),
		PodStarted: at(6), SystemdBooted: at(20), BootstrapBegan: at(21), BootstrapEnded: at(60), NodeRegistered: at(40),
		NodeReady: at(65)}
	unreached := Milestones{MachineCreated: at(0.5)}
	return buildTimeline("ns", "dev", Milestones{ClusterCreated: t0, ControlPlaneInitialized: at(61), ClusterAvailable: at(112)},
		[]MachineInput{{Name: "dev-md-0-a", Role: "worker", Milestones: worker},
			{Name: "dev-md-0-b", Role: "worker", Milestones: unreached},
			{Name: "dev-cp-x", Role: "control-plane", Milestones: cp}})
}

func TestBuildTimelineOrdersRowsAndMeasuresFromTheClustersCreation(t *testing.T) {
	tl := sampleTimeline()
	var names []string
	for _, r := range tl.Rows {
		names = append(names, r.Name)
	}
	if got := strings.Join(names, " "); got != "dev dev-cp-x dev-md-0-b dev-md-0-a" {
		t.Fatalf("rows %q: want the cluster, the control plane, then workers by creation", got)
	}
	cp := tl.Rows[1]
	if len(cp.Spans) != len(machinePhases) {
		t.Fatalf("control plane spans %+v: want one per phase", cp.Spans)
	}
	kubeadm := cp.Spans[3]
	if kubeadm.Phase != "bootstrap (kubeadm)" || kubeadm.Start != 21*time.Second || kubeadm.End != 60*time.Second {
		t.Errorf("kubeadm span %+v", kubeadm)
	}
	if unreached := tl.Rows[2]; len(unreached.Spans) != 0 || len(unreached.Events) != 1 {
		t.Errorf("a machine with only its creation has one event and no span: %+v", unreached)
	}
	if tl.end() != 112*time.Second {
		t.Errorf("end %v, want the Cluster's Available at 112s", tl.end())
	}
}

func TestWriteTableShowsEveryMilestoneOrADash(t *testing.T) {
	var b strings.Builder
	if err := writeTable(&b, sampleTimeline()); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"dev-md-0-a", "110.0", "control plane initialized: 61.0", "cluster available: 112.0"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "dev-md-0-b") && strings.Count(line, " -") != len(machineMilestones)-1 {
			t.Errorf("an unreached machine shows a dash for all but its creation: %q", line)
		}
	}
}

func TestWriteSVGDrawsOneRectPerSpanAndLegendEntry(t *testing.T) {
	tl := sampleTimeline()
	var b strings.Builder
	if err := writeSVG(&b, tl); err != nil {
		t.Fatal(err)
	}
	spans := 0
	for _, r := range tl.Rows {
		spans += len(r.Spans)
	}
	rects, titles := 0, 0
	decoder := xml.NewDecoder(strings.NewReader(b.String()))
	for {
		token, err := decoder.Token()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatalf("not well-formed SVG: %v", err)
			}
			break
		}
		if start, ok := token.(xml.StartElement); ok {
			switch start.Name.Local {
			case "rect":
				rects++
			case "title":
				titles++
			}
		}
	}
	if rects != spans+len(legendOrder) || titles != spans {
		t.Errorf("%d rects and %d titles, want %d spans plus %d legend entries", rects, titles, spans, len(legendOrder))
	}
	for _, phase := range legendOrder {
		if phaseColors[phase] == "" {
			t.Errorf("phase %q has no colour", phase)
		}
	}
}

func TestAddPodAndNodeTakeTheirTimes(t *testing.T) {
	found := Milestones{}
	addPod(found, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(at(4))},
		Status: corev1.PodStatus{
			Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue,
				LastTransitionTime: metav1.NewTime(at(5))}},
			ContainerStatuses: []corev1.ContainerStatus{
				{Name: "other", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(at(99))}}},
				{Name: nodeContainerName, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(at(7))}}},
			},
		},
	})
	addNode(found, &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(at(40))},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
			{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(at(65))}}},
	})
	want := Milestones{PodCreated: at(4), PodScheduled: at(5), PodStarted: at(7), NodeRegistered: at(40), NodeReady: at(65)}
	for m, w := range want {
		if !found[m].Equal(w) {
			t.Errorf("%s: %v, want %v", m, found[m], w)
		}
	}
}

func TestAddConditionTakesOnlyATrueCondition(t *testing.T) {
	obj := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"conditions": []any{
		map[string]any{"type": "Available", "status": "False", "lastTransitionTime": "2026-12-04T16:00:09Z"},
		map[string]any{"type": "ControlPlaneInitialized", "status": "True", "lastTransitionTime": "2026-12-04T16:01:01Z"},
	}}}}
	found := Milestones{}
	addCondition(found, obj, "Available", ClusterAvailable)
	addCondition(found, obj, "ControlPlaneInitialized", ControlPlaneInitialized)
	if _, ok := found[ClusterAvailable]; ok {
		t.Errorf("a False condition counted: %v", found)
	}
	if !found[ControlPlaneInitialized].Equal(at(61)) {
		t.Errorf("ControlPlaneInitialized: %v", found[ControlPlaneInitialized])
	}
}

func TestFloorMilestonesSpanTheFirstPodToTheLastReadyNode(t *testing.T) {
	machines := []MachineInput{
		{Name: "floor-worker", Role: "worker", Milestones: Milestones{PodCreated: at(30), BootstrapEnded: at(40), NodeReady: at(70)}},
		{Name: "floor-control-plane", Role: "control-plane", Milestones: Milestones{PodCreated: at(0), BootstrapEnded: at(25), NodeReady: at(50)}},
	}
	found := floorMilestones(machines)
	want := Milestones{ClusterCreated: at(0), ControlPlaneInitialized: at(25), ClusterAvailable: at(70)}
	if len(found) != len(want) {
		t.Errorf("milestones %v, want %v", found, want)
	}
	for m, w := range want {
		if !found[m].Equal(w) {
			t.Errorf("%s: %v, want %v", m, found[m], w)
		}
	}

	delete(machines[0].Milestones, NodeReady)
	if at, ok := floorMilestones(machines)[ClusterAvailable]; ok {
		t.Errorf("available at %v while a Node is not Ready", at)
	}
}
