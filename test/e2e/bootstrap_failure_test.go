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
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/internal/bootstrap"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/internal/nodepod"
)

// failureMarker is what the failing bootstrap data prints before it fails.
const failureMarker = "capk-e2e-bootstrap-fails-on-purpose"

// expectBootstrapFailureReported gives a Machine bootstrap data whose command
// fails: under real systemd the node stops with exit code 42, the
// KubernetesMachine shows the failure with the script's last lines, and
// deleting the Machine removes the node Pod and its Secret.
func expectBootstrapFailureReported(ctx context.Context, t *testing.T, g Gomega, w *workloadCluster) {
	name := w.name + "-failing"
	objects := []client.Object{
		&corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: w.namespace, Name: name + "-data",
				Labels: map[string]string{clusterv1.ClusterNameLabel: w.name}},
			Type: clusterv1.ClusterSecretType,
			StringData: map[string]string{"format": "cloud-config",
				"value": "#cloud-config\nruncmd:\n- echo '" + failureMarker + "'\n- exit 3\n"},
		},
		&infrav1.KubernetesMachine{
			ObjectMeta: metav1.ObjectMeta{Namespace: w.namespace, Name: name},
			Spec:       infrav1.KubernetesMachineSpec{Image: env.settings["KUBERNETES_NODE_IMAGE"]},
		},
		&clusterv1.Machine{
			ObjectMeta: metav1.ObjectMeta{Namespace: w.namespace, Name: name},
			Spec: clusterv1.MachineSpec{
				ClusterName: w.name,
				Version:     env.settings["KUBERNETES_VERSION"],
				Bootstrap:   clusterv1.Bootstrap{DataSecretName: ptr.To(name + "-data")},
				InfrastructureRef: clusterv1.ContractVersionedObjectReference{
					APIGroup: infrav1.GroupVersion.Group, Kind: "KubernetesMachine", Name: name},
			},
		},
	}
	for _, obj := range objects {
		g.Expect(env.client.Create(ctx, obj)).To(Succeed())
	}
	// Should a check fail, the Machine must still go: the later steps count Machines.
	t.Cleanup(func() {
		if err := env.client.Delete(context.Background(), objects[2]); client.IgnoreNotFound(err) != nil {
			t.Errorf("deleting Machine %s: %v", name, err)
		}
	})

	g.Eventually(func(g Gomega) {
		km := &infrav1.KubernetesMachine{}
		g.Expect(env.client.Get(ctx, client.ObjectKey{Namespace: w.namespace, Name: name}, km)).To(Succeed())
		c := meta.FindStatusCondition(km.Status.Conditions, infrav1.KubernetesMachineBootstrapSucceededCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Reason).To(Equal(infrav1.KubernetesMachineBootstrapFailedReason))
		g.Expect(c.Message).To(ContainSubstring(failureMarker))
		t.Logf("BootstrapSucceeded=%s %s:\n%s", c.Status, c.Reason, c.Message)
	}).WithTimeout(3 * time.Minute).WithPolling(3 * time.Second).Should(Succeed())
	pod := &corev1.Pod{}
	g.Expect(env.client.Get(ctx, client.ObjectKey{Namespace: w.namespace, Name: nodepod.PodName(name)}, pod)).To(Succeed())
	g.Expect(pod.Status.ContainerStatuses).To(HaveLen(1))
	g.Expect(pod.Status.ContainerStatuses[0].State.Terminated).NotTo(BeNil())
	g.Expect(pod.Status.ContainerStatuses[0].State.Terminated.ExitCode).To(BeEquivalentTo(bootstrap.FailedExitCode))

	g.Expect(env.client.Delete(ctx, objects[2])).To(Succeed())
	g.Eventually(func(g Gomega) {
		err := env.client.Get(ctx, client.ObjectKeyFromObject(objects[1]), &infrav1.KubernetesMachine{})
		g.Expect(err).To(HaveOccurred())
		g.Expect(client.IgnoreNotFound(err)).To(Succeed())
		podName := nodepod.PodName(name)
		for _, obj := range []client.Object{
			&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: w.namespace, Name: podName}},
			&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: w.namespace, Name: nodepod.BootstrapSecretName(podName)}},
		} {
			err := env.client.Get(ctx, client.ObjectKeyFromObject(obj), obj)
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%T %s is left on the hosting cluster", obj, obj.GetName())
		}
	}).WithTimeout(3 * time.Minute).WithPolling(3 * time.Second).Should(Succeed())
}
