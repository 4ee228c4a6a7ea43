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

package nodepod

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
)

func TestMachineLabelsIdentifyClusterMachineAndRole(t *testing.T) {
	tests := []struct {
		name         string
		controlPlane bool
		wantRole     string
	}{
		{name: "control plane", controlPlane: true, wantRole: infrav1.NodeRoleControlPlane},
		{name: "worker", controlPlane: false, wantRole: infrav1.NodeRoleWorker},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(MachineLabels("mgmt-ns", "wl", "wl-md-0", tt.controlPlane)).To(Equal(map[string]string{
				clusterv1.ClusterNameLabel:    "wl",
				infrav1.ClusterNamespaceLabel: "mgmt-ns",
				infrav1.MachineNameLabel:      "wl-md-0",
				infrav1.NodeRoleLabel:         tt.wantRole,
				infrav1.ManagedByLabel:        infrav1.ManagedByValue,
			}))
		})
	}
}

func TestClusterLabelsLeaveOutMachineAndRole(t *testing.T) {
	g := NewWithT(t)
	g.Expect(ClusterLabels("mgmt-ns", "wl")).To(Equal(map[string]string{
		clusterv1.ClusterNameLabel:    "wl",
		infrav1.ClusterNamespaceLabel: "mgmt-ns",
		infrav1.ManagedByLabel:        infrav1.ManagedByValue,
	}))
}

func TestLabelValuesOfLongMachineNamesAreValidAndDeterministic(t *testing.T) {
	for _, machineName := range []string{strings.Repeat("m", 64), strings.Repeat("node.", 50), strings.Repeat("a", 62) + ".-b"} {
		t.Run(machineName[:10], func(t *testing.T) {
			g := NewWithT(t)
			got := MachineLabels("ns", "wl", machineName, false)[infrav1.MachineNameLabel]
			g.Expect(validation.IsValidLabelValue(got)).To(BeEmpty())
			g.Expect(MachineLabels("ns", "wl", machineName, false)[infrav1.MachineNameLabel]).To(Equal(got))
		})
	}
}

func TestControlPlaneSelectorMatchesOnlyThatClustersControlPlane(t *testing.T) {
	selector := labels.SelectorFromSet(ControlPlaneSelector("mgmt-ns", "wl"))
	tests := []struct {
		name      string
		labels    map[string]string
		wantMatch bool
	}{
		{name: "its control plane", labels: MachineLabels("mgmt-ns", "wl", "cp-0", true), wantMatch: true},
		{name: "its worker", labels: MachineLabels("mgmt-ns", "wl", "md-0", false), wantMatch: false},
		{name: "same name, other namespace", labels: MachineLabels("other-ns", "wl", "cp-0", true), wantMatch: false},
		{name: "other cluster", labels: MachineLabels("mgmt-ns", "wl2", "cp-0", true), wantMatch: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(selector.Matches(labels.Set(tt.labels))).To(Equal(tt.wantMatch))
		})
	}
}
