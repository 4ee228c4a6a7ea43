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
	"fmt"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/internal/nodepod"
)

// The workload image (WORKLOAD_IMAGE) is preloaded in the node image, as no
// registry is reachable. It is kind's node userland, which has no socat or
// netcat: systemd-socket-activate serves, bash's /dev/tcp connects.
const echoPort = 8080

// expectCrossNodeTraffic runs an echo server on two different workers and,
// from a Pod on the first worker, reaches the server Pod on the second
// worker by Pod IP and the Service by its DNS name.
func expectCrossNodeTraffic(ctx context.Context, t *testing.T, g Gomega, w *workloadCluster) {
	const ns = "default"
	apps := w.clients.AppsV1()
	_, err := apps.Deployments(ns).Create(ctx, echoDeployment(), metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	_, err = w.clients.CoreV1().Services(ns).Create(ctx, echoService(), metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())

	var pods []corev1.Pod
	g.Eventually(func(g Gomega) {
		list, err := w.clients.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=echo"})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(list.Items).To(HaveLen(2))
		for _, p := range list.Items {
			g.Expect(podReady(&p)).To(BeTrue(), "Pod %s on %s is not ready", p.Name, p.Spec.NodeName)
		}
		pods = list.Items
	}).WithTimeout(3 * time.Minute).WithPolling(3 * time.Second).Should(Succeed())
	g.Expect(pods[0].Spec.NodeName).NotTo(Equal(pods[1].Spec.NodeName), "anti-affinity spreads the echo Pods")

	server := pods[1]
	script := fmt.Sprintf(`set -eux
timeout 5 bash -c 'cat </dev/tcp/%s/%d' | grep -x %s
getent hosts echo.%s.svc.cluster.local
timeout 5 bash -c 'cat </dev/tcp/echo.%s.svc.cluster.local/%d' | grep '^echo-'
`, server.Status.PodIP, echoPort, server.Name, ns, ns, echoPort)
	job := probeJob(pods[0].Spec.NodeName, script)
	_, err = w.clients.BatchV1().Jobs(ns).Create(ctx, job, metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Eventually(func(g Gomega) {
		j, err := w.clients.BatchV1().Jobs(ns).Get(ctx, job.Name, metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(j.Status.Failed).To(BeZero(), "probe failed; its log:\n%s", jobLog(ctx, w, ns, job.Name))
		g.Expect(j.Status.Succeeded).To(BeEquivalentTo(1))
	}).WithTimeout(2 * time.Minute).WithPolling(3 * time.Second).Should(Succeed())
	t.Logf("from %s: Pod %s on %s by IP, Service by DNS:\n%s", pods[0].Spec.NodeName, server.Name,
		server.Spec.NodeName, jobLog(ctx, w, ns, job.Name))
}

func echoDeployment() *appsv1.Deployment {
	labels := map[string]string{"app": "echo"}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "echo"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
						RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
							LabelSelector: &metav1.LabelSelector{MatchLabels: labels},
							TopologyKey:   corev1.LabelHostname,
						}},
					}},
					Containers: []corev1.Container{{
						Name:            "echo",
						Image:           env.settings["WORKLOAD_IMAGE"],
						ImagePullPolicy: corev1.PullIfNotPresent,
						// answers every connection with the Pod's name
						Command: []string{"systemd-socket-activate", "--accept", "--inetd",
							fmt.Sprintf("--listen=0.0.0.0:%d", echoPort), "hostname"},
						ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{
							TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(echoPort)},
						}},
					}},
				},
			},
		},
	}
}

func echoService() *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "echo"},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": "echo"},
			Ports:    []corev1.ServicePort{{Port: echoPort, TargetPort: intstr.FromInt32(echoPort)}},
		},
	}
}

func probeJob(nodeName, script string) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "probe"},
		Spec: batchv1.JobSpec{
			BackoffLimit: ptr.To[int32](3),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				NodeName:      nodeName,
				RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{
					Name:            "probe",
					Image:           env.settings["WORKLOAD_IMAGE"],
					ImagePullPolicy: corev1.PullIfNotPresent,
					Command:         []string{"bash", "-c", script},
				}},
			}},
		},
	}
}

// jobLog is the log of the Job's last Pod, or why there is none.
func jobLog(ctx context.Context, w *workloadCluster, ns, job string) string {
	pods, err := w.clients.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "job-name=" + job})
	if err != nil || len(pods.Items) == 0 {
		return fmt.Sprintf("(no Pod: %v)", err)
	}
	last := pods.Items[len(pods.Items)-1]
	raw, err := w.clients.CoreV1().Pods(ns).GetLogs(last.Name, &corev1.PodLogOptions{}).DoRaw(ctx)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	return string(raw)
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// backendScript prints the node's iptables backend (what kind's entrypoint
// chose for the node's own iptables) and how many rules kube-proxy's
// KUBE-SERVICES chain has in each backend.
const backendScript = `iptables -V | sed -n 's/.*(\(legacy\|nf_tables\)).*/node \1/p'
for b in legacy nft; do echo "$b $(iptables-$b-save -t nat 2>/dev/null | grep -c '^-A KUBE-SERVICES ')"; done`

// expectOneIptablesBackend checks, in every node Pod of w, that kube-proxy
// wrote its Service rules to the backend the node uses and none to the other:
// the preloaded kube-proxy image must follow the node, as upstream's does.
func expectOneIptablesBackend(ctx context.Context, t *testing.T, g Gomega, w *workloadCluster) {
	for _, pod := range w.nodePods(ctx, g) {
		out, err := env.command(ctx, t, nil, "KUBECTL", "exec", "--namespace", pod.Namespace, pod.Name,
			"--container", nodepod.NodeContainerName, "--", "bash", "-c", backendScript)
		g.Expect(err).NotTo(HaveOccurred())
		t.Logf("node Pod %s, iptables backend and KUBE-SERVICES rules in each:\n%s", pod.Name, out)
		counts := map[string]string{}
		for line := range strings.Lines(out) {
			if key, value, ok := strings.Cut(strings.TrimSpace(line), " "); ok {
				counts[key] = value
			}
		}
		node := map[string]string{"legacy": "legacy", "nf_tables": "nft"}[counts["node"]]
		g.Expect(node).NotTo(BeEmpty(), "node Pod %s: no iptables backend in %q", pod.Name, out)
		other := map[string]string{"legacy": "nft", "nft": "legacy"}[node]
		g.Expect(counts[node]).NotTo(Or(BeEmpty(), Equal("0")),
			"node Pod %s uses %s, which has no KUBE-SERVICES rules: %q", pod.Name, node, out)
		g.Expect(counts[other]).To(Equal("0"), "node Pod %s: kube-proxy wrote rules to %s: %q", pod.Name, other, out)
	}
}
