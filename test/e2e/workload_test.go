//go:build e2e

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

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/test/envtest"
)

// workloadCluster is a cluster the test created from the default template
// in a namespace of the environment's management cluster (env.client), which
// also holds its node Pods.
type workloadCluster struct {
	namespace, name string
	kubeconfig      []byte               // the workload cluster's admin kubeconfig
	clients         kubernetes.Interface // the workload cluster's API
}

// createCluster generates a cluster with clusterctl from the provider's
// default template (generateCluster) and creates it on the management cluster.
func createCluster(ctx context.Context, t testing.TB, g Gomega, namespace, name string, controlPlanes, workers int) *workloadCluster {
	t.Helper()
	createAll(ctx, g, env.client, generateCluster(ctx, t, g, namespace, name, "", controlPlanes, workers))
	return &workloadCluster{namespace: namespace, name: name}
}

// generateCluster is `clusterctl generate cluster` of a flavor ("" is the
// default) at the environment's Kubernetes version and node image, with the
// Cluster labelled for podnet.
func generateCluster(ctx context.Context, t testing.TB, g Gomega, namespace, name, flavor string,
	controlPlanes, workers int) []*unstructured.Unstructured {
	t.Helper()
	args := []string{"generate", "cluster", name, "--config", env.settings["CLUSTERCTL_CONFIG"],
		"--infrastructure", "kubernetes", "--target-namespace", namespace,
		"--kubernetes-version", env.settings["KUBERNETES_VERSION"],
		"--control-plane-machine-count", strconv.Itoa(controlPlanes), "--worker-machine-count", strconv.Itoa(workers)}
	if flavor != "" {
		args = append(args, "--flavor", flavor)
	}
	// The hosting node has 2 cores, and Cluster API's controllers request some:
	// small CPU requests let both clusters' node Pods and a replacement fit
	// (they are requests, not limits).
	variables := []string{"KUBERNETES_NODE_IMAGE=" + env.settings["KUBERNETES_NODE_IMAGE"], "CAPK_NODE_CPU=100m"}
	manifest, err := env.command(ctx, t, variables, "CLUSTERCTL", args...)
	g.Expect(err).NotTo(HaveOccurred())
	objects, err := envtest.DecodeObjects([]byte(manifest))
	g.Expect(err).NotTo(HaveOccurred())
	for _, obj := range objects {
		if obj.GetKind() == "Cluster" {
			labels := obj.GetLabels()
			if labels == nil {
				labels = map[string]string{}
			}
			labels["cni"] = "podnet"
			obj.SetLabels(labels)
		}
	}
	return objects
}

// waitAvailable waits for the Cluster's Available condition and connects to
// the workload API with the kubeconfig Cluster API wrote.
func (w *workloadCluster) waitAvailable(ctx context.Context, t testing.TB, g Gomega, timeout time.Duration) {
	t.Helper()
	start := time.Now()
	_, why := w.availableWithin(ctx, timeout)
	g.Expect(why).To(BeEmpty(), "Cluster %s/%s not Available within %s", w.namespace, w.name, timeout)
	t.Logf("cluster %s/%s Available after %s", w.namespace, w.name, time.Since(start).Round(time.Second))

	secret := &corev1.Secret{}
	g.Expect(env.client.Get(ctx, client.ObjectKey{Namespace: w.namespace, Name: w.name + "-kubeconfig"}, secret)).To(Succeed())
	w.kubeconfig = secret.Data["value"]
	cfg, err := clientcmd.RESTConfigFromKubeConfig(w.kubeconfig)
	g.Expect(err).NotTo(HaveOccurred())
	w.clients, err = kubernetes.NewForConfig(cfg)
	g.Expect(err).NotTo(HaveOccurred())
}

// availableWithin polls the Cluster every 5 s until its Available condition
// is True and returns how long that took from the Cluster's creation; or,
// when timeout passes first, why it is not Available (its conditions, or the
// error reading it).
func (w *workloadCluster) availableWithin(ctx context.Context, timeout time.Duration) (time.Duration, string) {
	var why string
	cluster := &clusterv1.Cluster{}
	deadline := time.After(timeout)
	for {
		err := env.client.Get(ctx, client.ObjectKey{Namespace: w.namespace, Name: w.name}, cluster)
		switch available := meta.FindStatusCondition(cluster.Status.Conditions, clusterv1.AvailableCondition); {
		case err != nil:
			why = err.Error()
		case available != nil && available.Status == metav1.ConditionTrue:
			return available.LastTransitionTime.Sub(cluster.CreationTimestamp.Time), ""
		default:
			why = "Cluster conditions: " + conditionSummary(cluster.Status.Conditions)
		}
		select {
		case <-ctx.Done():
			return 0, why + " (" + ctx.Err().Error() + ")"
		case <-deadline:
			return 0, why
		case <-time.After(5 * time.Second):
		}
	}
}

// machines lists the cluster's Machines.
func (w *workloadCluster) machines(ctx context.Context, g Gomega, extra ...client.ListOption) []clusterv1.Machine {
	list := &clusterv1.MachineList{}
	opts := append([]client.ListOption{client.InNamespace(w.namespace),
		client.MatchingLabels{clusterv1.ClusterNameLabel: w.name}}, extra...)
	g.Expect(env.client.List(ctx, list, opts...)).To(Succeed())
	return list.Items
}

// kindContainerd is the container runtime of kind v0.33.0's node image, which
// the environment builds from kind's recipe: the Nodes must be on it, not on
// an image of the project's own.
const kindContainerd = "containerd://2.3."

// expectNodesReady checks that every Machine is Running with a Ready Node
// whose providerID is the Machine's, on kind's containerd, and that there are
// want Machines.
func (w *workloadCluster) expectNodesReady(ctx context.Context, g Gomega, want int) {
	machines := w.machines(ctx, g)
	g.Expect(machines).To(HaveLen(want))
	for _, m := range machines {
		g.Expect(m.Status.Phase).To(Equal(string(clusterv1.MachinePhaseRunning)), "Machine %s", m.Name)
		g.Expect(m.Status.NodeRef.IsDefined()).To(BeTrue(), "Machine %s has no node", m.Name)
		node, err := w.clients.CoreV1().Nodes().Get(ctx, m.Status.NodeRef.Name, metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(node.Spec.ProviderID).To(Equal(m.Spec.ProviderID), "Node %s", node.Name)
		g.Expect(nodeReady(node)).To(BeTrue(), "Node %s is not Ready", node.Name)
		g.Expect(node.Status.NodeInfo.ContainerRuntimeVersion).To(HavePrefix(kindContainerd), "Node %s", node.Name)
	}
}

// expectTimeline runs the timeline program on the cluster, keeps its JSON and
// SVG chart under out/e2e/, and checks that it found every machine's node Pod
// boot and Node Ready, after its Machine was created.
func (w *workloadCluster) expectTimeline(ctx context.Context, t *testing.T, g Gomega, machines int) {
	timeline, table := runTimeline(ctx, t, g, filepath.Join("..", "..", "out", "e2e"), w.name, w.namespace, w.name, false)
	var found int
	for _, row := range timeline.Rows {
		if row.Role == "cluster" {
			continue
		}
		found++
		var milestones []string
		for _, e := range row.Events {
			milestones = append(milestones, e.Milestone)
		}
		g.Expect(milestones).To(ContainElements("machine created", "pod started", "systemd booted",
			"bootstrap began", "bootstrap ended", "node ready"), "a machine's timeline: %s", table)
	}
	g.Expect(found).To(Equal(machines), "machines in the timeline: %s", table)
}

// runTimeline runs the environment's timeline program
// (test/infra/cmd/timeline) on a cluster, or with floor on a floor run of
// make bench-nodes, logs its table, keeps its JSON and SVG chart as
// <out>/<file>-timeline.json and .svg, and returns the JSON read back and the table.
func runTimeline(ctx context.Context, t testing.TB, g Gomega, out, file, namespace, cluster string, floor bool) (timelineReport, string) {
	g.Expect(os.MkdirAll(out, 0o755)).To(Succeed())
	jsonPath := filepath.Join(out, file+"-timeline.json")
	args := []string{"-kubeconfig", env.settings["KUBECONFIG"], "-namespace", namespace, "-cluster", cluster,
		"-json", jsonPath, "-svg", filepath.Join(out, file+"-timeline.svg")}
	if floor {
		args = append(args, "-floor")
	}
	table, err := exec.CommandContext(ctx, env.settings["TIMELINE"], args...).CombinedOutput() //nolint:gosec // the environment's own program
	g.Expect(err).NotTo(HaveOccurred(), "timeline: %s", table)
	t.Logf("where the time went (%s/%s):\n%s", namespace, cluster, table)
	data, err := os.ReadFile(jsonPath) //nolint:gosec // written just above
	g.Expect(err).NotTo(HaveOccurred())
	var report timelineReport
	g.Expect(json.Unmarshal(data, &report)).To(Succeed())
	return report, string(table)
}

// timelineReport is the part of the timeline program's JSON the tests read.
type timelineReport struct {
	Rows []struct {
		Role   string `json:"role"`
		Events []struct {
			Milestone string        `json:"milestone"`
			Offset    time.Duration `json:"offsetNanoseconds"`
		} `json:"events"`
		Spans []struct {
			Phase string        `json:"phase"`
			Start time.Duration `json:"startNanoseconds"`
			End   time.Duration `json:"endNanoseconds"`
		} `json:"spans"`
	} `json:"rows"`
}

// hostingObjects counts the node Pods and bootstrap Secrets of the cluster on
// the hosting cluster.
func (w *workloadCluster) hostingObjects(ctx context.Context, g Gomega) (pods, secrets int) {
	return len(w.nodePods(ctx, g)), len(hostingList(ctx, g, w, &corev1.SecretList{}).Items)
}

// nodePods lists the cluster's node Pods on the hosting cluster.
func (w *workloadCluster) nodePods(ctx context.Context, g Gomega) []corev1.Pod {
	return hostingList(ctx, g, w, &corev1.PodList{}).Items
}

// hostingList lists the cluster's objects of one kind on the hosting cluster by the
// labels the provider puts on them.
func hostingList[T client.ObjectList](ctx context.Context, g Gomega, w *workloadCluster, list T) T {
	g.Expect(env.client.List(ctx, list, client.InNamespace(w.namespace),
		client.MatchingLabels{clusterv1.ClusterNameLabel: w.name, infrav1.ManagedByLabel: infrav1.ManagedByValue})).To(Succeed())
	return list
}

func nodeReady(node *corev1.Node) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func conditionSummary(conditions []metav1.Condition) string {
	s := ""
	for _, c := range conditions {
		s += fmt.Sprintf("\n  %s=%s %s: %s", c.Type, c.Status, c.Reason, c.Message)
	}
	return s
}
