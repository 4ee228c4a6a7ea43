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
	"io"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/retry"
)

// The labels and names the timeline finds objects by: Cluster API's, and the
// provider's (api/v1beta1/labels.go, internal/nodepod).
const (
	clusterNameLabel  = "cluster.x-k8s.io/cluster-name"
	controlPlaneLabel = "cluster.x-k8s.io/control-plane"
	machineNameLabel  = "infrastructure.cluster.x-k8s.io/kubernetes-machine"
	nodeRoleLabel     = "infrastructure.cluster.x-k8s.io/node-role"
	nodeContainerName = "node"
)

var (
	clusterResource = schema.GroupVersionResource{Group: "cluster.x-k8s.io", Version: "v1beta2", Resource: "clusters"}
	machineResource = schema.GroupVersionResource{Group: "cluster.x-k8s.io", Version: "v1beta2", Resource: "machines"}
)

// management reads one cluster's objects from the management cluster, which
// is also the hosting cluster of its node Pods.
type management struct {
	dynamic   dynamic.Interface
	core      kubernetes.Interface
	namespace string
	cluster   string
}

func (m *management) clusterMilestones(ctx context.Context) (Milestones, error) {
	c, err := m.dynamic.Resource(clusterResource).Namespace(m.namespace).Get(ctx, m.cluster, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading Cluster %s/%s: %w", m.namespace, m.cluster, err)
	}
	found := Milestones{ClusterCreated: c.GetCreationTimestamp().Time}
	addCondition(found, c, "ControlPlaneInitialized", ControlPlaneInitialized)
	addCondition(found, c, "Available", ClusterAvailable)
	return found, nil
}

// machines returns the cluster's machines, each named by its infrastructure
// machine (the KubernetesMachine, as its node Pod is labelled), with the
// milestones the Machine itself holds.
func (m *management) machines(ctx context.Context) ([]MachineInput, error) {
	list, err := m.dynamic.Resource(machineResource).Namespace(m.namespace).List(ctx,
		metav1.ListOptions{LabelSelector: clusterNameLabel + "=" + m.cluster})
	if err != nil {
		return nil, fmt.Errorf("listing the Machines of %s/%s: %w", m.namespace, m.cluster, err)
	}
	machines := make([]MachineInput, 0, len(list.Items))
	for i := range list.Items {
		machine := &list.Items[i]
		name, _, _ := unstructured.NestedString(machine.Object, "spec", "infrastructureRef", "name")
		if name == "" {
			name = machine.GetName()
		}
		role := "worker"
		if _, ok := machine.GetLabels()[controlPlaneLabel]; ok {
			role = "control-plane"
		}
		found := Milestones{MachineCreated: machine.GetCreationTimestamp().Time}
		addCondition(found, machine, "BootstrapConfigReady", BootstrapDataReady)
		nodeName, _, _ := unstructured.NestedString(machine.Object, "status", "nodeRef", "name")
		machines = append(machines, MachineInput{Name: name, Role: role, Milestones: found, node: nodeName})
	}
	return machines, nil
}

// addNodePods adds what each machine's node Pod and its console log show.
func (m *management) addNodePods(ctx context.Context, machines []MachineInput) error {
	pods, err := m.core.CoreV1().Pods(m.namespace).List(ctx,
		metav1.ListOptions{LabelSelector: clusterNameLabel + "=" + m.cluster + "," + machineNameLabel})
	if err != nil {
		return fmt.Errorf("listing the node Pods: %w", err)
	}
	byMachine := map[string]*corev1.Pod{}
	for i := range pods.Items {
		byMachine[pods.Items[i].Labels[machineNameLabel]] = &pods.Items[i]
	}
	for i := range machines {
		pod, ok := byMachine[machines[i].Name]
		if !ok {
			continue
		}
		addPod(machines[i].Milestones, pod)
		if err := m.addConsole(ctx, machines[i].Milestones, pod.Name); err != nil {
			return err
		}
	}
	return nil
}

// consoleBackoff is how often, and how far apart, opening a console log is
// tried: the API server reads it from the hosting node's kubelet, and a
// kubelet on a busy hosting node (the cgroup v2 VM beside Cluster API's
// specs) missed the API server's 10-second TLS handshake once.
var consoleBackoff = wait.Backoff{Steps: 5, Duration: 2 * time.Second, Factor: 2}

func (m *management) addConsole(ctx context.Context, found Milestones, pod string) error {
	var log io.ReadCloser
	err := retry.OnError(consoleBackoff, func(err error) bool { return !apierrors.IsNotFound(err) }, func() error {
		var err error
		log, err = m.core.CoreV1().Pods(m.namespace).GetLogs(pod,
			&corev1.PodLogOptions{Container: nodeContainerName, Timestamps: true}).Stream(ctx)
		return err
	})
	if err != nil {
		return fmt.Errorf("reading the console log of node Pod %s: %w", pod, err)
	}
	defer func() { _ = log.Close() }()
	console, err := consoleMilestones(log)
	if err != nil {
		return fmt.Errorf("reading the console log of node Pod %s: %w", pod, err)
	}
	for milestone, at := range console {
		found[milestone] = at
	}
	return nil
}

// addPod adds when the Pod was created, scheduled and its node container started.
func addPod(found Milestones, pod *corev1.Pod) {
	found[PodCreated] = pod.CreationTimestamp.Time
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionTrue {
			found[PodScheduled] = c.LastTransitionTime.Time
		}
	}
	for _, s := range pod.Status.ContainerStatuses {
		if s.Name == nodeContainerName && s.State.Running != nil {
			found[PodStarted] = s.State.Running.StartedAt.Time
		}
	}
}

// addNodes adds when each machine's Node registered and became Ready, read
// from the workload cluster through its kubeconfig Secret.
func (m *management) addNodes(ctx context.Context, machines []MachineInput) error {
	secret, err := m.core.CoreV1().Secrets(m.namespace).Get(ctx, m.cluster+"-kubeconfig", metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("reading the workload cluster's kubeconfig Secret: %w", err)
	}
	config, err := clientcmd.RESTConfigFromKubeConfig(secret.Data["value"])
	if err != nil {
		return fmt.Errorf("parsing the workload cluster's kubeconfig: %w", err)
	}
	workload, err := kubernetes.NewForConfig(config)
	if err != nil {
		return err
	}
	for i := range machines {
		if machines[i].node == "" {
			continue
		}
		node, err := workload.CoreV1().Nodes().Get(ctx, machines[i].node, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("reading Node %s: %w", machines[i].node, err)
		}
		addNode(machines[i].Milestones, node)
	}
	return nil
}

func addNode(found Milestones, node *corev1.Node) {
	found[NodeRegistered] = node.CreationTimestamp.Time
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
			found[NodeReady] = c.LastTransitionTime.Time
		}
	}
}

// addCondition adds the time a condition of status.conditions turned True.
func addCondition(found Milestones, obj *unstructured.Unstructured, condition, milestone string) {
	conditions, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conditions {
		fields, ok := c.(map[string]any)
		if !ok || fields["type"] != condition || fields["status"] != "True" {
			continue
		}
		if stamp, ok := fields["lastTransitionTime"].(string); ok {
			if at, err := time.Parse(time.RFC3339, stamp); err == nil {
				found[milestone] = at
			}
		}
	}
}
