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
	"slices"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
)

// The workers' CPU request in the generated manifests (createCluster's
// CAPK_NODE_CPU) and the one the test changes it to.
const (
	workerCPU        = "100m"
	changedWorkerCPU = "150m"
)

var templateCPUPath = []string{"spec", "template", "spec", "resources", "requests", "cpu"}

// expectImmutableEditRefused commits the workers' KubernetesMachineTemplate
// with another CPU request under the same name: the Kustomization fails with
// the webhook's message naming the field, and neither the template nor the
// Machines change. The fleet gets the template back as it was.
func expectImmutableEditRefused(ctx context.Context, t *testing.T, g Gomega, f *flux,
	fleet map[string][]*unstructured.Unstructured, dev *workloadCluster) {
	name := dev.name + "-md-0"
	stored := &infrav1.KubernetesMachineTemplate{}
	g.Expect(env.client.Get(ctx, client.ObjectKey{Namespace: dev.namespace, Name: name}, stored)).To(Succeed())
	machines := machineNames(dev.machines(ctx, g))
	template := fleetObject(g, fleet, "dev.yaml", "KubernetesMachineTemplate", name)
	g.Expect(unstructured.SetNestedField(template.Object, changedWorkerCPU, templateCPUPath...)).To(Succeed())
	start := time.Now()
	revision := commitFleet(t, g, f, "change the workers' CPU in place", fleet)
	g.Expect(unstructured.SetNestedField(template.Object, workerCPU, templateCPUPath...)).To(Succeed())

	var status fluxStatus
	g.Eventually(func(g Gomega) {
		status = readFluxStatus(g, f.kustomization(ctx, g))
		g.Expect(status.LastAttemptedRevision).To(Equal(revision))
		g.Expect(status.Ready.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(status.Ready.Message).To(ContainSubstring("spec.template.spec.resources.requests.cpu: %s -> %s",
			workerCPU, changedWorkerCPU))
	}).WithTimeout(3 * time.Minute).WithPolling(time.Second).Should(Succeed())
	g.Expect(status.LastAppliedRevision).NotTo(Equal(revision))
	after := &infrav1.KubernetesMachineTemplate{}
	g.Expect(env.client.Get(ctx, client.ObjectKeyFromObject(stored), after)).To(Succeed())
	g.Expect(after.ResourceVersion).To(Equal(stored.ResourceVersion), "the refused template changed")
	g.Expect(machineNames(dev.machines(ctx, g))).To(Equal(machines), "the Machines changed")
	t.Logf("refused %s after the commit, Ready=False %s: %s", time.Since(start).Round(time.Second),
		status.Ready.Reason, status.Ready.Message)
}

// expectTemplateRollout commits the documented way to change a machine
// template: a new template, and the MachineDeployment pointed at it. The
// worker is replaced by one from the new template, and the Kustomization is
// Ready at the commit with the Cluster Available.
func expectTemplateRollout(ctx context.Context, t *testing.T, g Gomega, f *flux,
	fleet map[string][]*unstructured.Unstructured, dev *workloadCluster) {
	oldName, newName := dev.name+"-md-0", dev.name+"-md-1"
	template := fleetObject(g, fleet, "dev.yaml", "KubernetesMachineTemplate", oldName).DeepCopy()
	template.SetName(newName)
	g.Expect(unstructured.SetNestedField(template.Object, changedWorkerCPU, templateCPUPath...)).To(Succeed())
	fleet["dev.yaml"] = append(fleet["dev.yaml"], template)
	deployment := fleetObject(g, fleet, "dev.yaml", "MachineDeployment", oldName)
	g.Expect(unstructured.SetNestedField(deployment.Object, newName,
		"spec", "template", "spec", "infrastructureRef", "name")).To(Succeed())
	workers := machineNames(dev.machines(ctx, g, client.MatchingLabels{clusterv1.MachineDeploymentNameLabel: oldName}))
	g.Expect(workers).To(HaveLen(1))
	start := time.Now()
	revision := commitFleet(t, g, f, "roll the workers to a new template", fleet)

	g.Eventually(func(g Gomega) {
		machines := dev.machines(ctx, g, client.MatchingLabels{clusterv1.MachineDeploymentNameLabel: oldName})
		g.Expect(machines).To(HaveLen(1))
		m := machines[0]
		g.Expect(workers).NotTo(ContainElement(m.Name), "the old worker is still there")
		g.Expect(meta.IsStatusConditionTrue(m.Status.Conditions, clusterv1.MachineReadyCondition)).To(BeTrue(),
			"Machine %s is not Ready", m.Name)
		km := &infrav1.KubernetesMachine{}
		g.Expect(env.client.Get(ctx, client.ObjectKey{Namespace: dev.namespace, Name: m.Spec.InfrastructureRef.Name}, km)).To(Succeed())
		g.Expect(km.Spec.Resources.Requests.Cpu().String()).To(Equal(changedWorkerCPU))
	}).WithTimeout(10 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
	rolled := time.Since(start)
	g.Eventually(func(g Gomega) {
		status := readFluxStatus(g, f.kustomization(ctx, g))
		g.Expect(status.LastAppliedRevision).To(Equal(revision))
		g.Expect(status.Ready.Status).To(Equal(metav1.ConditionTrue), status.Ready.Message)
	}).WithTimeout(5 * time.Minute).WithPolling(time.Second).Should(Succeed())
	g.Expect(clustersNotAvailable(ctx, g, []*workloadCluster{dev})).To(BeEmpty())
	t.Logf("the worker was replaced from %s and Ready %s after the commit", newName, rolled.Round(time.Second))
}

// failingBootstrap is what the failing workers print before they fail.
const failingBootstrap = "capk-e2e-flux-bootstrap-fails-on-purpose"

// expectNotReadyWhileBootstrapFails commits a second MachineDeployment whose
// bootstrap fails: from the commit until the failure is reported on its
// KubernetesMachine and for 20 s more, the Kustomization is never Ready.
// Removing it from Git then brings Ready back and deletes its Machine.
func expectNotReadyWhileBootstrapFails(ctx context.Context, t *testing.T, g Gomega, f *flux,
	fleet map[string][]*unstructured.Unstructured, dev *workloadCluster) {
	name := dev.name + "-md-failing"
	config := fleetObject(g, fleet, "dev.yaml", "KubeadmConfigTemplate", dev.name+"-md-0").DeepCopy()
	config.SetName(name)
	g.Expect(unstructured.SetNestedStringSlice(config.Object, []string{"echo " + failingBootstrap, "exit 3"},
		"spec", "template", "spec", "preKubeadmCommands")).To(Succeed())
	deployment := fleetObject(g, fleet, "dev.yaml", "MachineDeployment", dev.name+"-md-0").DeepCopy()
	deployment.SetName(name)
	g.Expect(unstructured.SetNestedField(deployment.Object, int64(1), "spec", "replicas")).To(Succeed())
	g.Expect(unstructured.SetNestedField(deployment.Object, name,
		"spec", "template", "spec", "bootstrap", "configRef", "name")).To(Succeed())
	fleet["failing.yaml"] = []*unstructured.Unstructured{config, deployment}
	start := time.Now()
	revision := commitFleet(t, g, f, "add workers whose bootstrap fails", fleet)

	var readyWhileFailing []string
	var reportedAt time.Time
	g.Eventually(func(g Gomega) {
		status := readFluxStatus(g, f.kustomization(ctx, g))
		if status.LastAttemptedRevision == revision && status.Ready.Status == metav1.ConditionTrue {
			readyWhileFailing = append(readyWhileFailing, time.Now().Format(time.TimeOnly))
		}
		if reportedAt.IsZero() && bootstrapFailureReported(ctx, g, dev, name) {
			reportedAt = time.Now()
			t.Logf("the bootstrap failure is reported %s after the commit; Kustomization Ready=%s %s: %s",
				reportedAt.Sub(start).Round(time.Second), status.Ready.Status, status.Ready.Reason, status.Ready.Message)
		}
		g.Expect(reportedAt).NotTo(BeZero(), "the bootstrap failure is not reported yet")
		g.Expect(time.Since(reportedAt)).To(BeNumerically(">=", 20*time.Second))
	}).WithTimeout(8 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
	g.Expect(readyWhileFailing).To(BeEmpty(), "the Kustomization was Ready while the bootstrap failed")

	delete(fleet, "failing.yaml")
	revision = f.commit(t, g, "remove the failing workers", map[string][]byte{fleetPath + "/failing.yaml": nil})
	g.Eventually(func(g Gomega) {
		status := readFluxStatus(g, f.kustomization(ctx, g))
		g.Expect(status.LastAppliedRevision).To(Equal(revision))
		g.Expect(status.Ready.Status).To(Equal(metav1.ConditionTrue), status.Ready.Message)
		g.Expect(dev.machines(ctx, g, client.MatchingLabels{clusterv1.MachineDeploymentNameLabel: name})).To(BeEmpty())
	}).WithTimeout(5 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
}

// bootstrapFailureReported tells whether a KubernetesMachine of the
// MachineDeployment reports the failing bootstrap with its output.
func bootstrapFailureReported(ctx context.Context, g Gomega, w *workloadCluster, deployment string) bool {
	for _, m := range w.machines(ctx, g, client.MatchingLabels{clusterv1.MachineDeploymentNameLabel: deployment}) {
		km := &infrav1.KubernetesMachine{}
		if env.client.Get(ctx, client.ObjectKey{Namespace: w.namespace, Name: m.Spec.InfrastructureRef.Name}, km) != nil {
			continue
		}
		c := meta.FindStatusCondition(km.Status.Conditions, infrav1.KubernetesMachineBootstrapSucceededCondition)
		if c != nil && c.Reason == infrav1.KubernetesMachineBootstrapFailedReason && strings.Contains(c.Message, failingBootstrap) {
			return true
		}
	}
	return false
}

func machineNames(machines []clusterv1.Machine) []string {
	names := make([]string, 0, len(machines))
	for _, m := range machines {
		names = append(names, m.Name)
	}
	slices.Sort(names)
	return names
}
