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
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	controlplanev1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
)

// expectKubernetesUpgrade rolls w from the previous Kubernetes minor to the
// environment's version the way docs/upgrade.md tells users to: new
// KubernetesMachineTemplates with the new node image, then the control plane
// (KubeadmControlPlane version and template), then the workers
// (MachineDeployment version and template). Meanwhile a client polls /readyz
// through the cluster's endpoint, the hosting cluster's Service. At the end
// every Node runs the new version and no old node Pod is left.
func expectKubernetesUpgrade(ctx context.Context, t *testing.T, g Gomega, w *workloadCluster) {
	version, image := env.settings["KUBERNETES_VERSION"], env.settings["KUBERNETES_NODE_IMAGE"]
	old := w.nodePods(ctx, g)
	g.Expect(old).To(HaveLen(2))
	probe := startAPIProbe(ctx, g, w.kubeconfig)
	defer probe.stop()

	start := time.Now()
	kcp := &controlplanev1.KubeadmControlPlane{}
	peak := roll(ctx, t, g, w, kcp, w.name+"-control-plane", client.HasLabels{clusterv1.MachineControlPlaneLabel}, version,
		func() {
			ref := &kcp.Spec.MachineTemplate.Spec.InfrastructureRef
			kcp.Spec.Version = version
			ref.Name = copyMachineTemplate(ctx, g, w, ref.Name, version, image)
		})
	md := &clusterv1.MachineDeployment{}
	workersPeak := roll(ctx, t, g, w, md, w.name+"-md-0", client.HasLabels{clusterv1.MachineDeploymentNameLabel}, version,
		func() {
			ref := &md.Spec.Template.Spec.InfrastructureRef
			md.Spec.Template.Spec.Version = version
			ref.Name = copyMachineTemplate(ctx, g, w, ref.Name, version, image)
		})
	probe.stop()

	expectOnlyNewNodes(ctx, g, w, old, version, image)
	g.Expect(max(peak, workersPeak)).To(BeNumerically("<=", 3), "machines are replaced one at a time (maxSurge 1)")
	report := probe.report()
	t.Logf("rollout %s -> %s took %s; workload API through the endpoint: %s",
		env.settings["KUBERNETES_PREVIOUS_VERSION"], version, time.Since(start).Round(time.Second), report)
	g.Expect(probe.probes()).To(BeNumerically(">", 10), "the /readyz client ran through the rollout")
	g.Expect(probe.longestOutage()).To(BeNumerically("<=", maxAPIOutage),
		"the workload API was unreachable through its endpoint for too long: %s", report)
}

// maxAPIOutage bounds the longest run of failed /readyz probes during a
// rollout of a one-machine control plane. The Service sends requests only to
// control-plane Pods whose API server is ready, and KCP adds the new member
// before it removes the old one: measured 0 to 1 s (one probe cut off as the
// old API server stopped); the bound leaves room for an etcd leader change on
// a busy machine.
const maxAPIOutage = 10 * time.Second

// roll reads obj (the KubeadmControlPlane or MachineDeployment name), patches
// it with what update changes, waits until the Machines of selector run
// version, and returns the most node Pods the cluster had at once meanwhile.
func roll(ctx context.Context, t *testing.T, g Gomega, w *workloadCluster, obj client.Object, name string,
	selector client.ListOption, version string, update func()) int {
	start := time.Now()
	g.Expect(w.management.Get(ctx, client.ObjectKey{Namespace: w.namespace, Name: name}, obj)).To(Succeed())
	patch := client.MergeFrom(obj.DeepCopyObject().(client.Object))
	update()
	g.Expect(w.management.Patch(ctx, obj, patch)).To(Succeed())
	peak := waitRolledOut(ctx, g, w, selector, version)
	t.Logf("%s rolled to %s in %s, at most %d node Pods at once", name, version, time.Since(start).Round(time.Second), peak)
	return peak
}

// copyMachineTemplate creates a copy of a KubernetesMachineTemplate for a
// Kubernetes version, with that version's node image (templates are
// immutable), and returns its name.
func copyMachineTemplate(ctx context.Context, g Gomega, w *workloadCluster, name, version, image string) string {
	old := &infrav1.KubernetesMachineTemplate{}
	g.Expect(w.management.Get(ctx, client.ObjectKey{Namespace: w.namespace, Name: name}, old)).To(Succeed())
	template := &infrav1.KubernetesMachineTemplate{
		ObjectMeta: metav1.ObjectMeta{Namespace: w.namespace, Name: name + "-" + strings.ReplaceAll(version, ".", "-")},
		Spec:       *old.Spec.DeepCopy(),
	}
	template.Spec.Template.Spec.Image = image
	g.Expect(w.management.Create(ctx, template)).To(Succeed())
	return template.Name
}

// waitRolledOut waits until the selected Machines all run version with Ready
// Nodes, and returns the most node Pods the cluster had at once meanwhile.
func waitRolledOut(ctx context.Context, g Gomega, w *workloadCluster, selector client.ListOption, version string) int {
	peak := 0
	g.Eventually(func(g Gomega) {
		peak = max(peak, len(w.nodePods(ctx, g)))
		machines := w.machines(ctx, g, selector)
		g.Expect(machines).To(HaveLen(1))
		for _, m := range machines {
			g.Expect(m.Spec.Version).To(Equal(version), "Machine %s", m.Name)
		}
		w.expectNodesReady(ctx, g, 2)
	}).WithTimeout(20 * time.Minute).WithPolling(3 * time.Second).Should(Succeed())
	return peak
}

// expectOnlyNewNodes checks that the workload cluster has two Nodes, both
// running version, and the hosting cluster two node Pods, both of image, and
// none of the old ones.
func expectOnlyNewNodes(ctx context.Context, g Gomega, w *workloadCluster, old []corev1.Pod, version, image string) {
	nodes, err := w.clients.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(nodes.Items).To(HaveLen(2))
	for _, node := range nodes.Items {
		g.Expect(node.Status.NodeInfo.KubeletVersion).To(Equal(version), "Node %s", node.Name)
	}
	g.Eventually(func(g Gomega) {
		pods := w.nodePods(ctx, g)
		g.Expect(pods).To(HaveLen(2))
		for _, p := range pods {
			g.Expect(p.Spec.Containers[0].Image).To(Equal(image), "node Pod %s", p.Name)
			for _, o := range old {
				g.Expect(p.Name).NotTo(Equal(o.Name), "old node Pod left on the hosting cluster")
			}
		}
	}).WithTimeout(2 * time.Minute).WithPolling(3 * time.Second).Should(Succeed())
}

// apiProbe polls /readyz of a workload cluster once a second through the
// endpoint of its kubeconfig and records every failure.
type apiProbe struct {
	interval time.Duration
	cancel   context.CancelFunc
	done     chan struct{}

	mu       sync.Mutex
	count    int
	failed   []string // "<seconds since start>s: <error>"
	run      int      // failures in a row, now
	longest  int      // most failures in a row
	started  time.Time
	stopOnce sync.Once
}

func startAPIProbe(ctx context.Context, g Gomega, kubeconfig []byte) *apiProbe {
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	g.Expect(err).NotTo(HaveOccurred())
	cfg.Timeout = 2 * time.Second
	clients, err := kubernetes.NewForConfig(cfg)
	g.Expect(err).NotTo(HaveOccurred())
	ctx, cancel := context.WithCancel(ctx)
	p := &apiProbe{interval: time.Second, cancel: cancel, done: make(chan struct{}), started: time.Now()}
	go p.loop(ctx, clients.Discovery().RESTClient())
	return p
}

func (p *apiProbe) loop(ctx context.Context, api rest.Interface) {
	defer close(p.done)
	ticker := time.NewTicker(p.interval)
	defer ticker.Stop()
	for {
		body, err := api.Get().AbsPath("/readyz").DoRaw(ctx)
		if ctx.Err() != nil {
			return
		}
		if err == nil && string(body) != "ok" {
			err = fmt.Errorf("answered %q", body)
		}
		p.record(err)
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

func (p *apiProbe) record(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.count++
	if err == nil {
		p.run = 0
		return
	}
	p.run++
	p.longest = max(p.longest, p.run)
	p.failed = append(p.failed, time.Since(p.started).Round(time.Second).String()+": "+err.Error())
}

func (p *apiProbe) stop() {
	p.stopOnce.Do(func() {
		p.cancel()
		<-p.done
	})
}

func (p *apiProbe) probes() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.count
}

// longestOutage is the longest run of failed probes, as time.
func (p *apiProbe) longestOutage() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return time.Duration(p.longest) * p.interval
}

// report summarises the probes: how many failed, the unavailable seconds
// (a failed probe stands for its interval) and the failures themselves.
func (p *apiProbe) report() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := fmt.Sprintf("%d probes of /readyz, %d failed: %s unavailable, longest outage %s",
		p.count, len(p.failed), time.Duration(len(p.failed))*p.interval, time.Duration(p.longest)*p.interval)
	for _, f := range p.failed {
		s += "\n  " + f
	}
	return s
}
