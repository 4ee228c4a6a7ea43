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
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// describeMachines puts each Machine on a line: its phase, Node, and every
// condition that is not True with its reason and message, shortened.
func describeMachines(cluster string, machines []clusterv1.Machine) string {
	var b strings.Builder
	fmt.Fprintf(&b, "         Cluster %s: %d Machines\n", cluster, len(machines))
	for _, m := range machines {
		var notTrue []string
		for _, c := range m.Status.Conditions {
			if c.Status != metav1.ConditionTrue {
				notTrue = append(notTrue, fmt.Sprintf("%s=%s %s: %s", c.Type, c.Status, c.Reason, c.Message))
			}
		}
		node := m.Status.NodeRef.Name
		if node == "" {
			node = "none"
		}
		fmt.Fprintf(&b, "           %s: phase %s, Node %s; %s\n", m.Name, m.Status.Phase, node,
			shorten(strings.Join(notTrue, "; "), 300))
	}
	return b.String()
}

// shorten puts message on one line of at most n bytes.
func shorten(message string, n int) string {
	message = strings.Join(strings.Fields(message), " ")
	if len(message) > n {
		return message[:n] + "..."
	}
	return message
}
