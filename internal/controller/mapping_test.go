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

package controller

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"
)

func TestNodeTopologyChangedPassesZonesAndAddressesOnly(t *testing.T) {
	g := NewWithT(t)
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "n", ResourceVersion: "1", Labels: map[string]string{corev1.LabelTopologyZone: "a"}},
		Status:     corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.1"}}},
	}
	changed := func(mutate func(*corev1.Node)) bool {
		updated := node.DeepCopy()
		mutate(updated)
		return nodeTopologyChanged().Update(event.UpdateEvent{ObjectOld: node, ObjectNew: updated})
	}
	g.Expect(changed(func(n *corev1.Node) { n.Labels[corev1.LabelTopologyZone] = "b" })).To(BeTrue())
	g.Expect(changed(func(n *corev1.Node) { delete(n.Labels, corev1.LabelTopologyZone) })).To(BeTrue())
	g.Expect(changed(func(n *corev1.Node) { n.Status.Addresses[0].Address = "10.0.0.2" })).To(BeTrue())
	g.Expect(changed(func(n *corev1.Node) {
		n.ResourceVersion = "2"
		n.Labels["other"] = "x"
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
	})).To(BeFalse(), "a heartbeat or another label")
	g.Expect(nodeTopologyChanged().Create(event.CreateEvent{Object: node})).To(BeTrue())
	g.Expect(nodeTopologyChanged().Delete(event.DeleteEvent{Object: node})).To(BeTrue())
}
