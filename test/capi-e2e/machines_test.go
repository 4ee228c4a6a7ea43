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

package capie2e

import (
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

func TestDescribeMachinesNamesWhatIsNotTrue(t *testing.T) {
	g := NewWithT(t)
	joined := clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: "cp-a"}, Status: clusterv1.MachineStatus{
		Phase: "Running", NodeRef: clusterv1.MachineNodeReference{Name: "node-a"},
		Conditions: []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Ready"}},
	}}
	stuck := clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: "cp-b"}, Status: clusterv1.MachineStatus{
		Phase: "Provisioning",
		Conditions: []metav1.Condition{
			{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Ready"},
			{Type: "InfrastructureReady", Status: metav1.ConditionFalse, Reason: "NodePodPending",
				Message: "0/3 nodes are available:\n  1 node is cordoned"},
		},
	}}
	g.Expect(describeMachines("c1", []clusterv1.Machine{joined, stuck})).To(Equal(
		"         Cluster c1: 2 Machines\n" +
			"           cp-a: phase Running, Node node-a; \n" +
			"           cp-b: phase Provisioning, Node none; InfrastructureReady=False NodePodPending: 0/3 nodes are available: 1 node is cordoned\n"))
}
