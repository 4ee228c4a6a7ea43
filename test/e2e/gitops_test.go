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
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
)

// fleetPath is the folder of the repository the Kustomization applies.
const fleetPath = "clusters"

// TestGitOpsWithFlux runs two clusters the GitOps way with the real Flux
// controllers: the manifests `clusterctl generate cluster` makes (the
// default flavor and the ClusterClass flavor) are committed to a Git
// repository, and a Kustomization with the settings of docs/gitops.md
// applies them. It checks what a GitOps user relies on: Ready means the
// clusters are usable, nothing drifts, an immutable template edited in place
// is refused with the webhook's message and changes nothing, a new template
// rolls the workers, a failing bootstrap keeps Ready away, and removing the
// manifests deletes everything.
func TestGitOpsWithFlux(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
	defer cancel()
	g := NewWithT(t)
	namespace := newNamespace(ctx, t, g)
	installPodnet(ctx, g, namespace)
	f := startFlux(ctx, t, g, namespace)
	dev := &workloadCluster{namespace: namespace, name: "flux-dev"}
	cc := &workloadCluster{namespace: namespace, name: "flux-cc"}
	t.Cleanup(func() {
		if t.Failed() {
			dumpDiagnostics(context.Background(), t, dev)
			dumpDiagnostics(context.Background(), t, cc)
		}
	})
	fleet := map[string][]*unstructured.Unstructured{
		"dev.yaml": generateCluster(ctx, t, g, namespace, dev.name, "", 1, 1),
		"cc.yaml":  generateCluster(ctx, t, g, namespace, cc.name, "topology", 1, 0),
		// keeps the folder, and so the Kustomization, when the clusters go
		"marker.yaml": {configMap(namespace, "fleet-marker")},
	}
	commitFleet(t, g, f, "two clusters", fleet)
	start := time.Now()
	f.createSource(ctx, g, "./"+fleetPath, kustomizationSpec(g))

	t.Run("Ready only once every Cluster is Available", func(t *testing.T) {
		expectReadyAfterAvailable(ctx, t, NewWithT(t), f, start, dev, cc)
	})
	t.Run("three more reconciliations apply nothing and change nothing", func(t *testing.T) {
		expectNoDrift(ctx, t, NewWithT(t), f)
	})
	t.Run("an immutable template edited in place is refused and changes nothing", func(t *testing.T) {
		expectImmutableEditRefused(ctx, t, NewWithT(t), f, fleet, dev)
	})
	t.Run("a new template and its reference roll the workers", func(t *testing.T) {
		expectTemplateRollout(ctx, t, NewWithT(t), f, fleet, dev)
	})
	t.Run("not Ready while a bootstrap fails", func(t *testing.T) {
		expectNotReadyWhileBootstrapFails(ctx, t, NewWithT(t), f, fleet, dev)
	})
	t.Run("removing the manifests deletes the clusters, leaving nothing on the hosting cluster", func(t *testing.T) {
		g := NewWithT(t)
		start := time.Now()
		revision := f.commit(t, g, "remove the clusters", map[string][]byte{
			fleetPath + "/dev.yaml": nil, fleetPath + "/cc.yaml": nil})
		waitClustersGone(ctx, t, g, start, dev, cc)
		g.Eventually(func(g Gomega) {
			status := readFluxStatus(g, f.kustomization(ctx, g))
			g.Expect(status.LastAppliedRevision).To(Equal(revision))
			g.Expect(status.Ready.Status).To(Equal(metav1.ConditionTrue), status.Ready.Message)
			g.Expect(status.Inventory).To(ConsistOf(namespace + "_fleet-marker__ConfigMap"))
		}).WithTimeout(5 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
		t.Logf("pruned: both clusters and their hosting objects gone %s after the commit",
			time.Since(start).Round(time.Second))
	})
}

func configMap(namespace, name string) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"data": map[string]any{"purpose": "keeps the folder"}}}
	obj.SetNamespace(namespace)
	obj.SetName(name)
	return obj
}

// commitFleet commits every file of the fleet.
func commitFleet(t *testing.T, g Gomega, f *flux, message string, fleet map[string][]*unstructured.Unstructured) string {
	files := map[string][]byte{}
	for name, objects := range fleet {
		files[fleetPath+"/"+name] = manifest(g, objects)
	}
	return f.commit(t, g, message, files)
}

// kustomizationSpec is the Kustomization of docs/gitops.md: its wait and
// healthCheckExprs are read from the page, so that the test checks what
// users are told. The intervals are the test's.
func kustomizationSpec(g Gomega) map[string]any {
	page, err := os.ReadFile("../../docs/gitops.md")
	g.Expect(err).NotTo(HaveOccurred())
	blocks := regexp.MustCompile("(?s)```yaml\n(apiVersion: kustomize.toolkit.fluxcd.io/v1\n.*?)```").FindAllSubmatch(page, -1)
	g.Expect(blocks).To(HaveLen(1), "docs/gitops.md shows one Flux Kustomization")
	var documented struct {
		Spec map[string]any `json:"spec"`
	}
	g.Expect(yaml.Unmarshal(blocks[0][1], &documented)).To(Succeed())
	g.Expect(documented.Spec).To(HaveKeyWithValue("wait", true))
	g.Expect(documented.Spec).To(HaveKey("healthCheckExprs"))
	return map[string]any{
		"wait":             true,
		"healthCheckExprs": documented.Spec["healthCheckExprs"],
		"prune":            true,
		"interval":         "10m",
		"retryInterval":    "10s",
		"timeout":          "10m",
	}
}

// expectReadyAfterAvailable waits for the Kustomization's Ready and checks,
// at every poll, that it is never True while a Cluster is not Available.
func expectReadyAfterAvailable(ctx context.Context, t *testing.T, g Gomega, f *flux, start time.Time, clusters ...*workloadCluster) {
	var status fluxStatus
	var early []string // Clusters not Available while the Kustomization was Ready
	g.Eventually(func(g Gomega) {
		status = readFluxStatus(g, f.kustomization(ctx, g))
		if status.Ready.Status == metav1.ConditionTrue {
			early = append(early, clustersNotAvailable(ctx, g, clusters)...)
		}
		g.Expect(status.Ready.Status).To(Equal(metav1.ConditionTrue), "Kustomization: %s", status.Ready.Message)
	}).WithTimeout(15 * time.Minute).WithPolling(time.Second).Should(Succeed())
	g.Expect(early).To(BeEmpty(), "the Kustomization was Ready while these Clusters were not Available")
	for _, w := range clusters {
		available := clusterAvailableSince(ctx, g, w)
		g.Expect(status.Ready.LastTransitionTime.Time).NotTo(BeTemporally("<", available),
			"Kustomization Ready before Cluster %s was Available", w.name)
		t.Logf("Cluster %s Available %s after the Kustomization was created; the Kustomization Ready %s after that",
			w.name, available.Sub(start).Round(time.Second), status.Ready.LastTransitionTime.Sub(available).Round(time.Second))
	}
}

// clustersNotAvailable names the clusters whose Available condition is not True.
func clustersNotAvailable(ctx context.Context, g Gomega, clusters []*workloadCluster) []string {
	var names []string
	for _, w := range clusters {
		cluster := &clusterv1.Cluster{}
		g.Expect(client.IgnoreNotFound(env.client.Get(ctx, client.ObjectKey{Namespace: w.namespace, Name: w.name}, cluster))).To(Succeed())
		if !meta.IsStatusConditionTrue(cluster.Status.Conditions, clusterv1.AvailableCondition) {
			names = append(names, w.name)
		}
	}
	return names
}

// clusterAvailableSince is when the Cluster last became Available.
func clusterAvailableSince(ctx context.Context, g Gomega, w *workloadCluster) time.Time {
	cluster := &clusterv1.Cluster{}
	g.Expect(env.client.Get(ctx, client.ObjectKey{Namespace: w.namespace, Name: w.name}, cluster)).To(Succeed())
	available := meta.FindStatusCondition(cluster.Status.Conditions, clusterv1.AvailableCondition)
	g.Expect(available).NotTo(BeNil())
	g.Expect(available.Status).To(Equal(metav1.ConditionTrue))
	return available.LastTransitionTime.Time
}

// expectNoDrift has kustomize-controller reconcile three times: each server-side
// apply it logs finds every object unchanged, it records no change event,
// its inventory stays, and no object it applies gets a newer apply from it;
// the provider's objects keep their resourceVersions.
func expectNoDrift(ctx context.Context, t *testing.T, g Gomega, f *flux) {
	since := time.Now()
	before := readFluxStatus(g, f.kustomization(ctx, g))
	versions := inventoryVersions(ctx, g, before.Inventory)
	for range 3 {
		after := f.reconcileNow(ctx, g)
		g.Expect(after.Ready.Status).To(Equal(metav1.ConditionTrue), after.Ready.Message)
		g.Expect(after.Inventory).To(Equal(before.Inventory))
	}
	outputs := f.applyOutputs(g, since)
	g.Expect(len(outputs)).To(BeNumerically(">=", 3), "server-side applies logged by kustomize-controller")
	for _, output := range outputs {
		for object, action := range output {
			g.Expect(action).To(Equal("unchanged"), "kustomize-controller applied %s", object)
		}
	}
	g.Expect(changeEvents(ctx, g, f, since)).To(BeEmpty(), "kustomize-controller's change events")
	g.Expect(inventoryVersions(ctx, g, before.Inventory)).To(Equal(versions))
	t.Logf("%d reconciliations, %d objects each, all unchanged; the provider's objects kept their resourceVersions",
		len(outputs), len(before.Inventory))
}

// inventoryVersions reads, for each object of the inventory, its last apply
// by kustomize-controller, and for the provider's objects also their
// resourceVersion.
func inventoryVersions(ctx context.Context, g Gomega, inventory []string) map[string]string {
	versions := map[string]string{}
	for _, id := range inventory {
		obj := inventoryObject(ctx, g, id)
		for _, entry := range obj.GetManagedFields() {
			if entry.Manager == fluxFieldManager && entry.Operation == metav1.ManagedFieldsOperationApply {
				versions[id+" applied"] = entry.Time.String()
			}
		}
		if obj.GroupVersionKind().Group == infrav1.GroupVersion.Group {
			versions[id+" resourceVersion"] = obj.GetResourceVersion()
		}
	}
	return versions
}

// inventoryObject reads an object named by a Flux inventory ID
// (<namespace>_<name>_<group>_<kind>).
func inventoryObject(ctx context.Context, g Gomega, id string) *unstructured.Unstructured {
	parts := strings.Split(id, "_")
	g.Expect(parts).To(HaveLen(4), "inventory ID %s", id)
	mapping, err := env.client.RESTMapper().RESTMapping(schema.GroupKind{Group: parts[2], Kind: parts[3]})
	g.Expect(err).NotTo(HaveOccurred())
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(mapping.GroupVersionKind)
	g.Expect(env.client.Get(ctx, client.ObjectKey{Namespace: parts[0], Name: parts[1]}, obj)).To(Succeed())
	return obj
}

// changeEvents lists the Kustomization's events since the time whose message
// names an object kustomize-controller created, configured or deleted.
func changeEvents(ctx context.Context, g Gomega, f *flux, since time.Time) []string {
	events, err := env.clients.CoreV1().Events(f.namespace).List(ctx, metav1.ListOptions{
		FieldSelector: "involvedObject.kind=Kustomization,involvedObject.name=" + fluxName})
	g.Expect(err).NotTo(HaveOccurred())
	var changes []string
	for _, e := range events.Items {
		last := slices.MaxFunc([]time.Time{e.FirstTimestamp.Time, e.LastTimestamp.Time, e.EventTime.Time}, time.Time.Compare)
		if last.Before(since.Truncate(time.Second)) {
			continue
		}
		for _, line := range strings.Split(e.Message, "\n") {
			if strings.HasSuffix(line, " created") || strings.HasSuffix(line, " configured") || strings.HasSuffix(line, " deleted") {
				changes = append(changes, line)
			}
		}
	}
	return changes
}

// fleetObject finds an object of the fleet by kind and name.
func fleetObject(g Gomega, fleet map[string][]*unstructured.Unstructured, file, kind, name string) *unstructured.Unstructured {
	i := slices.IndexFunc(fleet[file], func(obj *unstructured.Unstructured) bool {
		return obj.GetKind() == kind && obj.GetName() == name
	})
	g.Expect(i).NotTo(Equal(-1), "%s %s in %s", kind, name, file)
	return fleet[file][i]
}
