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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
)

func TestOwnerOwnsOnlyObjectsWhoseLabelsNameIt(t *testing.T) {
	longMachine := "wl-" + strings.Repeat("m", 80)
	machine := testMachine(false)
	tenant := Owner{Namespace: "mgmt-ns", Cluster: "wl"}
	withLabels := func(labels map[string]string) metav1.Object {
		return &metav1.ObjectMeta{Labels: labels}
	}
	tests := []struct {
		name  string
		owner Owner
		obj   metav1.Object
		want  bool
	}{
		{"the machine's own Pod", machine.Owner(), NewPod(machine), true},
		{"its bootstrap Secret", machine.Owner(), NewBootstrapSecret(machine, nil), true},
		{"a machine with an 80 character name", Owner{Namespace: "mgmt-ns", Cluster: "wl", Machine: longMachine},
			withLabels(MachineLabels("mgmt-ns", "wl", longMachine, false)), true},
		{"the same machine name in another namespace", Owner{Namespace: "other-ns", Cluster: "wl", Machine: machine.Name}, NewPod(machine), false},
		{"the same machine name in another cluster", Owner{Namespace: "mgmt-ns", Cluster: "twin", Machine: machine.Name}, NewPod(machine), false},
		{"another machine of the cluster", Owner{Namespace: "mgmt-ns", Cluster: "wl", Machine: "wl-md-0"}, NewPod(machine), false},
		{"the cluster's Service", tenant, NewService(Workload{Namespace: "mgmt-ns", Name: "wl", HostingNamespace: "hosting-ns"}, infrav1.ControlPlaneService{}), true},
		{"a twin cluster's Service", Owner{Namespace: "other-ns", Cluster: "wl"}, NewService(Workload{Namespace: "mgmt-ns", Name: "wl", HostingNamespace: "hosting-ns"}, infrav1.ControlPlaneService{}), false},
		{"a machine's object is not the cluster's", tenant, NewPod(machine), false},
		{"not managed by the provider", tenant, withLabels(map[string]string{
			clusterv1.ClusterNameLabel: "wl", infrav1.ClusterNamespaceLabel: "mgmt-ns",
		}), false},
		{"no labels at all", tenant, withLabels(nil), false},
		{"the same owner ID", Owner{Namespace: "mgmt-ns", Cluster: "wl", ID: "a1"},
			clusterObject(Workload{Namespace: "mgmt-ns", Name: "wl", OwnerID: "a1"}), true},
		{"a twin of the same names on another management cluster", Owner{Namespace: "mgmt-ns", Cluster: "wl", ID: "a1"},
			clusterObject(Workload{Namespace: "mgmt-ns", Name: "wl", OwnerID: "b2"}), false},
		{"an object of an earlier release, without owner ID", Owner{Namespace: "mgmt-ns", Cluster: "wl", ID: "a1"},
			clusterObject(Workload{Namespace: "mgmt-ns", Name: "wl"}), true},
		{"an owner without ID never owns an object with one", tenant,
			clusterObject(Workload{Namespace: "mgmt-ns", Name: "wl", OwnerID: "b2"}), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			NewWithT(t).Expect(tt.owner.Owns(tt.obj)).To(Equal(tt.want))
		})
	}
}

// clusterObject is the metadata of one of the cluster's objects.
func clusterObject(c Workload) metav1.Object {
	meta := c.ObjectMeta(NetworkPolicyName(c.Name))
	return &meta
}

func TestOwnerOfGivesFullNamesFromAnnotationsOrLabels(t *testing.T) {
	g := NewWithT(t)
	long := testMachine(false)
	long.Name, long.ClusterName = "wl-"+strings.Repeat("m", 80), "c"+strings.Repeat("c", 70)
	pod := NewPod(long)
	g.Expect(pod.Labels[infrav1.MachineNameLabel]).To(HaveLen(maxLabelLength), "the label holds the name shortened")
	g.Expect(OwnerOf(pod)).To(Equal(long.Owner()), "the annotations hold it whole")

	legacy := &metav1.ObjectMeta{Labels: MachineLabels("mgmt-ns", "wl", "wl-md-0", false)} // written before the annotations
	g.Expect(OwnerOf(legacy)).To(Equal(Owner{Namespace: "mgmt-ns", Cluster: "wl", Machine: "wl-md-0"}))
	g.Expect(OwnerOf(NewService(Workload{Namespace: "mgmt-ns", Name: "wl", HostingNamespace: "hosting-ns"}, infrav1.ControlPlaneService{}))).
		To(Equal(Owner{Namespace: "mgmt-ns", Cluster: "wl"}))
}
