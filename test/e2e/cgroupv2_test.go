//go:build e2e && cgroupv2

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
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
)

// The cgroup v2 hosting node (test/infra/hosting/vm/node.sh): a VM under
// qemu's software CPU, labelled and tainted so that only Pods asking for it
// run there.
const (
	cgroupV2Label = "capk.test/cgroup"
	cgroupV2Value = "v2"
)

// kindCgroupV2Line is what kind's entrypoint prints on the node's console,
// the node Pod's log, when it finds the unified hierarchy.
const kindCgroupV2Line = "INFO: detected cgroup v2"

// TestCgroupV2HostingNode runs a workload cluster whose worker node Pod is on
// the cgroup v2 hosting node, with kind's node image and the default
// template, its control plane on this machine's cgroup v1 nodes (with
// CAPK_E2E_CGROUPV2_CONTROL_PLANE=1 on the cgroup v2 node too): the worker
// boots kind's entrypoint on the unified hierarchy, joins, and its Node is
// Ready on kind's containerd. Each step's time is logged (the timeline
// program's table). It joins the VM node first when it is not there.
func TestCgroupV2HostingNode(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 75*time.Minute)
	defer cancel()
	g := NewWithT(t)
	hostingNode := cgroupV2Node(ctx, t, g)

	start := time.Now()
	namespace := newNamespace(ctx, t, g)
	installPodnet(ctx, g, namespace)
	objects := generateCluster(ctx, t, g, namespace, "cgroupv2", "", 1, 1)
	placed := []string{"cgroupv2-md-0"}
	if os.Getenv("CAPK_E2E_CGROUPV2_CONTROL_PLANE") == "1" {
		placed = append(placed, "cgroupv2-control-plane")
		objects = inCgroupV2Zone(ctx, t, g, hostingNode, objects)
	}
	objects = forSoftwareCPU(g, placed, onCgroupV2Node(g, placed, objects))
	createAll(ctx, g, env.client, objects)
	w := &workloadCluster{namespace: namespace, name: "cgroupv2"}
	t.Cleanup(func() {
		if t.Failed() {
			dumpDiagnostics(context.Background(), t, w)
		}
	})

	w.waitAvailable(ctx, t, g, 60*time.Minute)
	t.Logf("cluster Available %s after it was created, its worker on %s", time.Since(start).Round(time.Second), hostingNode)
	w.expectNodesReady(ctx, g, 2)
	w.expectTimeline(ctx, t, g, 2)

	t.Run("the node Pods placed there ran on the cgroup v2 node and kind's entrypoint found the unified hierarchy", func(t *testing.T) {
		expectOnCgroupV2(ctx, NewWithT(t), w, hostingNode, len(placed) == 2)
	})
	t.Run("delete the cluster, leaving nothing on the hosting cluster", func(t *testing.T) {
		deleteClusters(ctx, t, NewWithT(t), w)
	})
}

// cgroupV2Node returns the name of the Ready cgroup v2 hosting node, joining
// it with `env.sh vm-node` first when the environment has none, and then
// stopping it when the test ends (unless CAPK_E2E_KEEP=1): under the software
// CPU even an idle VM keeps most of a host core busy, which the tests run
// after or beside this one (.ci/run: make test-e2e's, then Cluster API's
// specs) would miss.
func cgroupV2Node(ctx context.Context, t *testing.T, g Gomega) string {
	nodes := &corev1.NodeList{}
	g.Expect(env.client.List(ctx, nodes, client.MatchingLabels{cgroupV2Label: cgroupV2Value})).To(Succeed())
	if len(nodes.Items) == 0 {
		start := time.Now()
		if os.Getenv("CAPK_E2E_KEEP") != "1" {
			t.Cleanup(func() {
				g.Expect(envScript("vm-node", "down")).To(Succeed(), "stopping the cgroup v2 node (test/infra/env.sh vm-node down)")
			})
		}
		g.Expect(envScript("vm-node")).To(Succeed(), "joining the cgroup v2 node (test/infra/env.sh vm-node)")
		t.Logf("cgroup v2 hosting node joined and Ready after %s", time.Since(start).Round(time.Second))
		g.Expect(env.client.List(ctx, nodes, client.MatchingLabels{cgroupV2Label: cgroupV2Value})).To(Succeed())
	}
	g.Expect(nodes.Items).To(HaveLen(1), "the cgroup v2 hosting nodes")
	node := nodes.Items[0]
	g.Expect(nodeReady(&node)).To(BeTrue(), "hosting node %s is not Ready", node.Name)
	t.Logf("cgroup v2 hosting node %s: kernel %s, %s", node.Name,
		node.Status.NodeInfo.KernelVersion, node.Status.NodeInfo.ContainerRuntimeVersion)
	return node.Name
}

// onCgroupV2Node places the node Pods of the named KubernetesMachineTemplates
// on the cgroup v2 node, by the templates' own nodeSelector and tolerations,
// as a user would pick a pool of hosting nodes.
func onCgroupV2Node(g Gomega, templates []string, objects []*unstructured.Unstructured) []*unstructured.Unstructured {
	var placed int
	for _, obj := range objects {
		if obj.GetKind() != "KubernetesMachineTemplate" || !slices.Contains(templates, obj.GetName()) {
			continue
		}
		g.Expect(unstructured.SetNestedStringMap(obj.Object, map[string]string{cgroupV2Label: cgroupV2Value},
			"spec", "template", "spec", "nodeSelector")).To(Succeed())
		g.Expect(unstructured.SetNestedSlice(obj.Object, []any{map[string]any{
			"key": cgroupV2Label, "operator": "Equal", "value": cgroupV2Value, "effect": "NoSchedule",
		}}, "spec", "template", "spec", "tolerations")).To(Succeed())
		placed++
	}
	g.Expect(placed).To(Equal(len(templates)), "KubernetesMachineTemplates %v in the generated cluster", templates)
	return objects
}

// cgroupV2Zone is the zone the test gives the cgroup v2 node while its control
// plane runs there.
const cgroupV2Zone = "cgroup-v2"

// inCgroupV2Zone puts the cgroup v2 node in a zone of its own until the test
// ends, and makes that zone the KubernetesCluster's only failure domain, as a
// user would name the zones of a pool of hosting nodes: discovered, the
// failure domains are the zones a, b and c of the other nodes, and the
// control-plane machine placed in one of them could not run on the VM.
func inCgroupV2Zone(ctx context.Context, t *testing.T, g Gomega, hostingNode string,
	objects []*unstructured.Unstructured) []*unstructured.Unstructured {
	setZone := func(zone any) error {
		patch := map[string]any{"metadata": map[string]any{"labels": map[string]any{corev1.LabelTopologyZone: zone}}}
		data, err := json.Marshal(patch)
		if err != nil {
			return err
		}
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: hostingNode}}
		return env.client.Patch(ctx, node, client.RawPatch(types.MergePatchType, data))
	}
	g.Expect(setZone(cgroupV2Zone)).To(Succeed())
	t.Cleanup(func() { g.Expect(setZone(nil)).To(Succeed(), "the cgroup v2 node's zone label removed") })
	var found bool
	for _, obj := range objects {
		if obj.GetKind() == "KubernetesCluster" {
			g.Expect(unstructured.SetNestedSlice(obj.Object, []any{map[string]any{"name": cgroupV2Zone, "controlPlane": true}},
				"spec", "failureDomains")).To(Succeed())
			found = true
		}
	}
	g.Expect(found).To(BeTrue(), "no KubernetesCluster in the generated cluster")
	return objects
}

// softwareCPURuntimeTimeout replaces the kubelet's 2-minute limit on a CRI call:
// under qemu's software CPU, a node's containerd unpacking an image for its
// first containers (kube-proxy, podnet) took longer, and the kubelet then
// cancelled and began again, over and over.
const softwareCPURuntimeTimeout = "runtimeRequestTimeout: 15m"

// softwareCPUBootstrapTimeout replaces the machines' 15-minute bootstrap
// timeout, softwareCPUHealthCheckSeconds kubeadm's 4 minutes for the control
// plane's static Pods to be healthy and its minute for an API call (kubeadm
// init's first calls, while the API server was still starting, ran out).
const (
	softwareCPUBootstrapTimeout   = "45m"
	softwareCPUHealthCheckSeconds = int64(1800)
)

// forSoftwareCPU gives the kubelets of the placed templates
// softwareCPURuntimeTimeout, their machines softwareCPUBootstrapTimeout and,
// for the control plane, kubeadm softwareCPUHealthCheckSeconds, and drops the
// MachineHealthChecks, whose
// 5 minutes NotReady replaced a worker before it could be Ready under the
// software CPU. Nothing else of the default template changes; all of it is
// about the VM's speed, not cgroup v2.
func forSoftwareCPU(g Gomega, placed []string, objects []*unstructured.Unstructured) []*unstructured.Unstructured {
	var kept []*unstructured.Unstructured
	var patched int
	for _, obj := range objects {
		if obj.GetKind() == "MachineHealthCheck" {
			continue
		}
		kept = append(kept, obj)
		if !slices.Contains(placed, obj.GetName()) { // the templates share their names
			continue
		}
		switch obj.GetKind() {
		case "KubernetesMachineTemplate":
			g.Expect(unstructured.SetNestedField(obj.Object, softwareCPUBootstrapTimeout,
				"spec", "template", "spec", "bootstrapTimeout")).To(Succeed())
		case "KubeadmConfigTemplate":
			patched += withRuntimeTimeout(g, obj, "spec", "template", "spec", "files")
		case "KubeadmControlPlane":
			patched += withRuntimeTimeout(g, obj, "spec", "kubeadmConfigSpec", "files")
			for _, configuration := range []string{"initConfiguration", "joinConfiguration"} { // the same in both, or KCP refuses it
				for _, timeout := range []string{"controlPlaneComponentHealthCheckSeconds", "kubernetesAPICallSeconds"} {
					g.Expect(unstructured.SetNestedField(obj.Object, softwareCPUHealthCheckSeconds, "spec", "kubeadmConfigSpec",
						configuration, "timeouts", timeout)).To(Succeed())
				}
			}
		}
	}
	g.Expect(patched).To(Equal(len(placed)), "KubeletConfiguration patches in the bootstrap templates of %v", placed)
	return kept
}

// withRuntimeTimeout appends softwareCPURuntimeTimeout to the
// KubeletConfiguration patch among the files at path, and says how many it patched.
func withRuntimeTimeout(g Gomega, obj *unstructured.Unstructured, path ...string) int {
	files, _, err := unstructured.NestedSlice(obj.Object, path...)
	g.Expect(err).NotTo(HaveOccurred())
	var patched int
	for _, f := range files {
		file, _ := f.(map[string]any)
		if content, ok := file["content"].(string); ok && strings.Contains(content, "kind: KubeletConfiguration") {
			file["content"] = content + softwareCPURuntimeTimeout + "\n"
			patched++
		}
	}
	g.Expect(unstructured.SetNestedSlice(obj.Object, files, path...)).To(Succeed())
	return patched
}

// expectOnCgroupV2 checks that the worker's node Pod, and with controlPlane
// the control plane's, is on the cgroup v2 node and that its console shows
// kind's entrypoint on the unified hierarchy; a node Pod on this machine's
// cgroup v1 nodes shows none.
func expectOnCgroupV2(ctx context.Context, g Gomega, w *workloadCluster, hostingNode string, controlPlane bool) {
	pods := w.nodePods(ctx, g)
	g.Expect(pods).To(HaveLen(2))
	for _, pod := range pods {
		log := nodePodLog(ctx, g, pod)
		if controlPlane || pod.Labels[infrav1.NodeRoleLabel] == infrav1.NodeRoleWorker {
			g.Expect(pod.Spec.NodeName).To(Equal(hostingNode), "node Pod %s", pod.Name)
			g.Expect(log).To(ContainSubstring(kindCgroupV2Line), "node Pod %s's console", pod.Name)
			continue
		}
		g.Expect(pod.Spec.NodeName).NotTo(Equal(hostingNode), "node Pod %s", pod.Name)
		g.Expect(log).NotTo(ContainSubstring(kindCgroupV2Line), "node Pod %s's console", pod.Name)
	}
}

// nodePodLog is the console of a node Pod, read through the hosting API.
func nodePodLog(ctx context.Context, g Gomega, pod corev1.Pod) string {
	raw, err := env.clients.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, &corev1.PodLogOptions{}).DoRaw(ctx)
	g.Expect(err).NotTo(HaveOccurred(), "log of node Pod %s", pod.Name)
	return string(raw)
}
