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
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// floorMachines reads the machines of a floor run (make bench-nodes): node
// Pods started by hand, with the provider's labels but no Cluster API
// objects, so a machine is its Pod, with what the Pod and its console log
// show, and its Node is named as the Pod's host.
func (m *management) floorMachines(ctx context.Context) ([]MachineInput, error) {
	pods, err := m.core.CoreV1().Pods(m.namespace).List(ctx,
		metav1.ListOptions{LabelSelector: clusterNameLabel + "=" + m.cluster + "," + machineNameLabel})
	if err != nil {
		return nil, fmt.Errorf("listing the floor's node Pods: %w", err)
	}
	machines := make([]MachineInput, 0, len(pods.Items))
	for i := range pods.Items {
		pod := &pods.Items[i]
		found := Milestones{}
		addPod(found, pod)
		if err := m.addConsole(ctx, found, pod.Name); err != nil {
			return nil, err
		}
		machines = append(machines, MachineInput{Name: pod.Labels[machineNameLabel], Role: pod.Labels[nodeRoleLabel],
			Milestones: found, node: pod.Spec.Hostname})
	}
	return machines, nil
}

// floorMilestones are a floor run's cluster milestones: it starts when its
// first node Pod was created, its control plane is initialized when kubeadm
// init ended, and it is available, as far as a floor can be, when every
// Node is Ready.
func floorMilestones(machines []MachineInput) Milestones {
	found := Milestones{}
	var lastReady time.Time
	allReady := len(machines) > 0
	for _, m := range machines {
		if created, ok := m.Milestones[PodCreated]; ok {
			if first, seen := found[ClusterCreated]; !seen || created.Before(first) {
				found[ClusterCreated] = created
			}
		}
		if ended, ok := m.Milestones[BootstrapEnded]; ok && m.Role == "control-plane" {
			found[ControlPlaneInitialized] = ended
		}
		ready, ok := m.Milestones[NodeReady]
		allReady = allReady && ok
		if ready.After(lastReady) {
			lastReady = ready
		}
	}
	if allReady {
		found[ClusterAvailable] = lastReady
	}
	return found
}

// collectFloor is collect for a floor run.
func (m *management) collectFloor(ctx context.Context) (Timeline, error) {
	machines, err := m.floorMachines(ctx)
	if err != nil {
		return Timeline{}, err
	}
	if len(machines) == 0 {
		return Timeline{}, fmt.Errorf("no node Pods of %s/%s", m.namespace, m.cluster)
	}
	if err := m.addNodes(ctx, machines); err != nil {
		return Timeline{}, err
	}
	return buildTimeline(m.namespace, m.cluster, floorMilestones(machines), machines), nil
}
