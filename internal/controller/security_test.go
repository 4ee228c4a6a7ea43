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

package controller_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/internal/bootstrap"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/internal/nodepod"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/test/envtest"
)

// logBuffer collects the controllers' logs of the whole test run.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// TestNoSecretInLogsEventsOrConditions drives machines on a remote hosting
// cluster (reached through a kubeconfig Secret) through creation, a bootstrap
// that succeeds, one that fails, and deletion, then searches every log line
// the controllers wrote (up to verbosity 7: from 8 on client-go dumps request
// bodies, see envtest.Options.LogOutput), every event on both clusters and
// every condition for the bootstrap tokens, CA keys and kubeconfig credentials
// they handled. It also checks what a node Pod is given: no service-account
// token, its bootstrap Secret readable by root only, and that Secret deleted
// with the machine.
func TestNoSecretInLogsEventsOrConditions(t *testing.T) {
	g := NewWithT(t)
	tc, hostingNamespace := newRemoteTestCluster(t, g, "secrets", remote.Kubeconfig)
	tc.markInfrastructureProvisioned(g)
	worker := newTestMachine(g, tc, "secrets-md-0", machineOptions{})
	worker.giveBootstrapData(g, "worker-join.yaml")
	failing := newTestMachine(g, tc, "secrets-md-1", machineOptions{})
	failing.giveBootstrapData(g, "controlplane-join.yaml")
	controlPlane := newTestMachine(g, tc, "secrets-cp", machineOptions{controlPlane: true})
	controlPlane.giveBootstrapData(g, "controlplane-init.yaml")

	for _, tm := range []*testMachine{worker, controlPlane} {
		pod := eventuallyPod(g, remote.Client, client.ObjectKey{Namespace: hostingNamespace, Name: nodepod.PodName(tm.km.Name)})
		expectNoCredentialsGiven(g, pod)
		setPodRunning(g, remote.Client, pod, true, time.Now())
	}
	failPod(g, eventuallyPod(g, remote.Client, client.ObjectKey{Namespace: hostingNamespace, Name: nodepod.PodName(failing.km.Name)}))
	eventuallyKubernetesMachine(g, client.ObjectKeyFromObject(worker.km), func(g Gomega, km *infrav1.KubernetesMachine) {
		g.Expect(conditionOf(km.Status.Conditions, infrav1.KubernetesMachineBootstrapSucceededCondition).Status).To(Equal(metav1.ConditionTrue))
	})
	eventuallyKubernetesMachine(g, client.ObjectKeyFromObject(failing.km), func(g Gomega, km *infrav1.KubernetesMachine) {
		g.Expect(conditionOf(km.Status.Conditions, infrav1.KubernetesMachineBootstrapSucceededCondition).Reason).To(Equal(infrav1.KubernetesMachineBootstrapFailedReason))
	})
	messages := conditionMessages(g, tc.namespace)

	for _, tm := range []*testMachine{worker, failing, controlPlane} {
		g.Expect(env.Client.Delete(context.Background(), tm.km)).To(Succeed())
		secretKey := client.ObjectKey{Namespace: hostingNamespace, Name: nodepod.BootstrapSecretName(nodepod.PodName(tm.km.Name))}
		g.Eventually(func() bool {
			return apierrors.IsNotFound(remote.Client.Get(context.Background(), secretKey, &corev1.Secret{}))
		}, 20*time.Second).Should(BeTrue(), "the bootstrap Secret is deleted with its machine")
	}

	haystacks := map[string]string{"controller logs": testLogs.String(), "conditions": messages,
		"events": eventText(g, env.Client) + eventText(g, remote.Client)}
	g.Expect(haystacks["controller logs"]).To(ContainSubstring(failing.km.Name), "the logs were captured")
	for _, needle := range secretsHandled(t, g) {
		for where, text := range haystacks {
			g.Expect(strings.Contains(text, needle)).To(BeFalse(), "%s hold a secret (%.12s...)", where, needle)
		}
	}
}

// newRemoteTestCluster is a test cluster whose node Pods run on the remote
// hosting cluster, reached through a kubeconfig Secret named "hosting".
func newRemoteTestCluster(t *testing.T, g Gomega, name string, kubeconfig []byte) (*testCluster, string) {
	ctx := context.Background()
	ns := newNamespace(t)
	hostingNamespace := "remote-" + ns
	g.Expect(remote.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: hostingNamespace}})).To(Succeed())
	g.Expect(env.Client.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hosting"},
		Data:       map[string][]byte{"value": kubeconfig},
	})).To(Succeed())
	tc := newTestCluster(t, g, ns, name, infrav1.KubernetesClusterSpec{
		HostingCluster: &infrav1.HostingClusterReference{SecretName: "hosting", Namespace: hostingNamespace},
	})
	return tc, hostingNamespace
}

// expectNoCredentialsGiven checks that the node Pod gets no API credentials of
// the hosting cluster, and its bootstrap data readable by root only.
func expectNoCredentialsGiven(g Gomega, pod *corev1.Pod) {
	g.Expect(pod.Spec.AutomountServiceAccountToken).To(HaveValue(BeFalse()))
	for _, volume := range pod.Spec.Volumes {
		g.Expect(volume.Projected).To(BeNil(), "volume %s: no projected service-account token", volume.Name)
		if volume.Secret != nil {
			g.Expect(volume.Secret.SecretName).To(Equal(nodepod.BootstrapSecretName(pod.Name)), "the only Secret is the bootstrap data")
			g.Expect(volume.Secret.DefaultMode).To(HaveValue(Equal(int32(0o400))))
		}
	}
}

// failPod ends the node's container with the bootstrap's failure exit code.
func failPod(g Gomega, pod *corev1.Pod) {
	pod.Status = corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{{
		Name: pod.Spec.Containers[0].Name, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: bootstrap.FailedExitCode}},
	}}}
	g.Expect(remote.Client.Status().Update(context.Background(), pod)).To(Succeed())
}

// conditionMessages joins the condition messages of every KubernetesMachine in
// the namespace.
func conditionMessages(g Gomega, namespace string) string {
	machines := &infrav1.KubernetesMachineList{}
	g.Expect(env.Client.List(context.Background(), machines, client.InNamespace(namespace))).To(Succeed())
	var text strings.Builder
	for _, km := range machines.Items {
		for _, condition := range km.Status.Conditions {
			text.WriteString(condition.Message + "\n")
		}
	}
	return text.String()
}

// eventText joins the notes of every event on a cluster, in both event APIs.
func eventText(g Gomega, c client.Client) string {
	var text strings.Builder
	events := &eventsv1.EventList{}
	g.Expect(c.List(context.Background(), events)).To(Succeed())
	for _, event := range events.Items {
		text.WriteString(event.Reason + " " + event.Note + "\n")
	}
	legacy := &corev1.EventList{}
	g.Expect(c.List(context.Background(), legacy)).To(Succeed())
	for _, event := range legacy.Items {
		text.WriteString(event.Reason + " " + event.Message + "\n")
	}
	return text.String()
}

// secretsHandled are the credentials the test's machines and hosting cluster
// carry: the bootstrap tokens, a line of each private key in the bootstrap
// data, and the kubeconfig's client key.
func secretsHandled(t *testing.T, g Gomega) []string {
	t.Helper()
	needles := []string{"uvwxyz.9876543210fedcba", "abcdef.0123456789abcdef", "9876543210fedcba", "0123456789abcdef"}
	for _, fixture := range []string{"controlplane-init.yaml", "worker-join.yaml", "controlplane-join.yaml"} {
		data, err := os.ReadFile(filepath.Join(envtest.RepositoryRoot(), "internal", "bootstrap", "testdata", fixture))
		g.Expect(err).NotTo(HaveOccurred())
		needles = append(needles, privateKeyLines(string(data))...)
	}
	kubeconfig, err := clientcmd.Load(remote.Kubeconfig)
	g.Expect(err).NotTo(HaveOccurred())
	for _, user := range kubeconfig.AuthInfos {
		needles = append(needles, privateKeyLines(string(user.ClientKeyData))...)
		if len(user.ClientKeyData) > 0 {
			needles = append(needles, base64.StdEncoding.EncodeToString(user.ClientKeyData)[:40])
		}
		if user.Token != "" {
			needles = append(needles, user.Token)
		}
	}
	g.Expect(len(needles)).To(BeNumerically(">", 8), "the fixtures hold keys to look for")
	return needles
}

// privateKeyLines returns the first body line of every PEM private key in text.
func privateKeyLines(text string) []string {
	var lines []string
	all := strings.Split(text, "\n")
	for i, line := range all {
		if strings.Contains(line, "PRIVATE KEY-----") && strings.Contains(line, "BEGIN") && i+1 < len(all) {
			lines = append(lines, strings.TrimSpace(all[i+1]))
		}
	}
	return lines
}
