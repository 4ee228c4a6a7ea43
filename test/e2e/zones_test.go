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
	"maps"
	"net/http"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/internal/nodepod"
)

// TestHostingZones runs a cluster of three control-plane machines and two
// workers on the environment's hosting cluster of three nodes in zones a, b
// and c (test/infra/hosting/nodes.sh): the KubernetesCluster's failure
// domains are the zones, Cluster API places one control-plane machine in
// each and its node Pod runs on that zone's node. Then an operator drains
// the hosting nodes one after the other (expectRollingDrain), while a probe
// measures the workload API's unavailability through its endpoint.
func TestHostingZones(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Minute)
	defer cancel()
	g := NewWithT(t)
	zones := hostingZones(ctx, g)
	g.Expect(slices.Compact(slices.Sorted(maps.Values(zones)))).To(Equal([]string{"a", "b", "c"}),
		"the hosting cluster must have nodes in zones a, b and c (test/infra/env.sh up makes them; CAPK_HOSTING_EXTRA_NODES=2)")
	w := startCluster(ctx, t, g, "zones", 3, 2)
	w.waitAvailable(ctx, t, g, 15*time.Minute)
	g.Eventually(func(g Gomega) { w.expectNodesReady(ctx, g, 5) }).
		WithTimeout(15 * time.Minute).WithPolling(5 * time.Second).Should(Succeed())

	t.Run("the failure domains are the hosting zones, one control-plane node Pod in each", func(t *testing.T) {
		expectControlPlaneSpread(ctx, t, NewWithT(t), w, zones)
	})
	t.Run("draining hosting nodes stays within the quorum budget and ends with every Machine Ready", func(t *testing.T) {
		expectRollingDrain(ctx, t, NewWithT(t), w, zones)
	})
	t.Run("delete the cluster, leaving nothing on the hosting cluster", func(t *testing.T) {
		deleteClusters(ctx, t, NewWithT(t), w)
	})
}

// hostingZones maps each hosting Node in a zone to its
// topology.kubernetes.io/zone. A Node in none is no failure domain and is
// left out, as the provider leaves it out: the cgroup v2 VM node, which
// .ci/run joins while this test runs.
func hostingZones(ctx context.Context, g Gomega) map[string]string {
	nodes := &corev1.NodeList{}
	g.Expect(env.client.List(ctx, nodes)).To(Succeed())
	zones := map[string]string{}
	for _, n := range nodes.Items {
		if zone := n.Labels[corev1.LabelTopologyZone]; zone != "" {
			zones[n.Name] = zone
		}
	}
	return zones
}

// expectControlPlaneSpread checks the failure domains the provider reports and
// that each control-plane Machine's node Pod runs in the Machine's zone, one
// zone each.
func expectControlPlaneSpread(ctx context.Context, t *testing.T, g Gomega, w *workloadCluster, zones map[string]string) {
	kc := &infrav1.KubernetesCluster{}
	g.Expect(env.client.Get(ctx, client.ObjectKey{Namespace: w.namespace, Name: w.name}, kc)).To(Succeed())
	var domains []string
	for _, fd := range kc.Status.FailureDomains {
		g.Expect(fd.ControlPlane).To(HaveValue(BeTrue()), "failure domain %s", fd.Name)
		domains = append(domains, fd.Name)
	}
	g.Expect(domains).To(ConsistOf("a", "b", "c"))

	var placed []string
	for _, m := range w.machines(ctx, g, client.HasLabels{clusterv1.MachineControlPlaneLabel}) {
		pod := &corev1.Pod{}
		g.Expect(env.client.Get(ctx, client.ObjectKey{Namespace: w.namespace,
			Name: nodepod.PodName(m.Spec.InfrastructureRef.Name)}, pod)).To(Succeed())
		zone := zones[pod.Spec.NodeName]
		g.Expect(m.Spec.FailureDomain).To(Equal(zone), "Machine %s's node Pod runs on %s", m.Name, pod.Spec.NodeName)
		t.Logf("control-plane Machine %s: failure domain %s, node Pod on %s", m.Name, m.Spec.FailureDomain, pod.Spec.NodeName)
		placed = append(placed, zone)
	}
	g.Expect(placed).To(ConsistOf("a", "b", "c"))
}

// expectRollingDrain drains every hosting node in turn, in drainOrder (only
// the first unless CAPK_E2E_ROLLING_DRAIN=1: each drain costs minutes of CI),
// as an operator maintaining the hosting cluster would: kubectl drain (every
// Pod on it), then the node back (uncordon) once the evicted workers run
// elsewhere, then wait until every Machine is Running with a Ready Node
// before the next node. Each drain evicts that zone's control-plane node Pod
// (with three healthy, the provider's budget allows one) and the workers
// there. The provider deletes their Nodes from the workload cluster, so the
// MachineHealthChecks find them gone at once: the MachineDeployment replaces
// the workers on the schedulable nodes, KubeadmControlPlane the control-plane
// machine in its zone once the node is back. The workload API is probed
// through its endpoint all the while.
func expectRollingDrain(ctx context.Context, t *testing.T, g Gomega, w *workloadCluster, zones map[string]string) {
	order := drainOrder(ctx, g, w, zones)
	if os.Getenv("CAPK_E2E_ROLLING_DRAIN") != "1" {
		t.Logf("draining %s only; CAPK_E2E_ROLLING_DRAIN=1 (make test-e2e-rolling-drain) drains %v", order[0], order)
		order = order[:1]
	}
	machines := len(w.machines(ctx, g))
	probe := startAPIProbe(ctx, t, g, w)
	t.Cleanup(func() { probe.stop() })
	start := time.Now()
	for _, node := range order {
		before, _ := probe.counts()
		drainHostingNode(ctx, t, g, w, node, machines)
		failed, _ := probe.counts()
		t.Logf("workload API through its endpoint: %d probes (1 s apart) failed from the drain of %s to every Machine Ready", failed-before, node)
		g.Expect(failed-before).To(BeNumerically("<=", maxDrainOutage), "the API's unavailability during the drain of %s", node)
	}
	failed, total := probe.stop()
	t.Logf("rolling drain of %d hosting nodes: %s; %d of %d probes failed", len(order), time.Since(start).Round(time.Second), failed, total)
}

// drainOrder puts first a hosting node with a worker's node Pod and without
// Cluster API's controller, so that a single drain evicts a worker while the
// controllers keep running, and that controller's node last but for the
// nodes of other clusters' control-plane node Pods: their budgets would hold
// the drain up (.ci/run runs the cgroup v2 node's test, its one control
// plane on these nodes, beside this one).
func drainOrder(ctx context.Context, g Gomega, w *workloadCluster, zones map[string]string) []string {
	controllers := &corev1.PodList{}
	g.Expect(env.client.List(ctx, controllers, client.InNamespace("capi-system"))).To(Succeed())
	g.Expect(controllers.Items).NotTo(BeEmpty(), "Cluster API's controller runs in capi-system")
	management := controllers.Items[0].Spec.NodeName
	var withWorkers []string
	for _, p := range w.nodePods(ctx, g) {
		if p.Labels[infrav1.NodeRoleLabel] != infrav1.NodeRoleControlPlane && p.Spec.NodeName != management {
			withWorkers = append(withWorkers, p.Spec.NodeName)
		}
	}
	others := otherControlPlaneNodes(ctx, g, w)
	order := slices.Sorted(maps.Keys(zones))
	slices.SortStableFunc(order, func(a, b string) int {
		rank := func(node string) int {
			switch {
			case slices.Contains(others, node):
				return 3
			case node == management:
				return 2
			case slices.Contains(withWorkers, node):
				return 0
			}
			return 1
		}
		return rank(a) - rank(b)
	})
	return order
}

// otherControlPlaneNodes names the hosting nodes that run control-plane node
// Pods of clusters other than w.
func otherControlPlaneNodes(ctx context.Context, g Gomega, w *workloadCluster) []string {
	pods := &corev1.PodList{}
	g.Expect(env.client.List(ctx, pods, client.MatchingLabels{
		infrav1.ManagedByLabel: infrav1.ManagedByValue, infrav1.NodeRoleLabel: infrav1.NodeRoleControlPlane,
	})).To(Succeed())
	var nodes []string
	for _, p := range pods.Items {
		if p.Namespace != w.namespace && p.Spec.NodeName != "" {
			nodes = append(nodes, p.Spec.NodeName)
		}
	}
	return nodes
}

// drainHostingNode drains one hosting node, checks that the evicted workers
// are replaced on the other nodes, uncordons it and waits until the cluster
// has its machines again, each Running with a Ready Node.
func drainHostingNode(ctx context.Context, t *testing.T, g Gomega, w *workloadCluster, node string, machines int) {
	t.Cleanup(func() {
		_, _ = env.command(context.Background(), t, nil, "KUBECTL", "uncordon", node)
	})
	victims, workers := machinesOn(ctx, g, w, node)
	start := time.Now()
	out, err := env.commandWithInput(ctx, t, nil, nil, "KUBECTL", "drain", node, "--ignore-daemonsets",
		"--delete-emptydir-data", "--force", "--timeout", "5m").CombinedOutput()
	t.Logf("kubectl drain %s (%s):\n%s", node, time.Since(start).Round(time.Second), out)
	g.Expect(err).NotTo(HaveOccurred(), "the drain must finish: one control-plane eviction is within the budget")
	for _, p := range w.nodePods(ctx, g) {
		g.Expect(p.Spec.NodeName).NotTo(Equal(node), "node Pod %s is still on the drained node", p.Name)
	}
	t.Logf("the drain of %s evicted the node Pods of Machines %v", node, victims)

	g.Eventually(func(g Gomega) {
		now := w.machines(ctx, g, client.HasLabels{clusterv1.MachineDeploymentNameLabel})
		g.Expect(now).To(HaveLen(workers))
		for _, m := range now {
			g.Expect(victims).NotTo(ContainElement(m.Name), "worker Machine %s was on the drained node", m.Name)
			g.Expect(m.Status.Phase).To(Equal(string(clusterv1.MachinePhaseRunning)), "worker Machine %s", m.Name)
			n, err := w.clients.CoreV1().Nodes().Get(ctx, m.Status.NodeRef.Name, metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(nodeReady(n)).To(BeTrue(), "Node %s", n.Name)
		}
	}).WithTimeout(10 * time.Minute).WithPolling(5 * time.Second).Should(Succeed())
	t.Logf("the workers evicted from %s were replaced on the other nodes and Ready %s after the drain began", node, time.Since(start).Round(time.Second))

	_, err = env.command(ctx, t, nil, "KUBECTL", "uncordon", node)
	g.Expect(err).NotTo(HaveOccurred())
	g.Eventually(func(g Gomega) {
		for _, m := range w.machines(ctx, g) {
			g.Expect(victims).NotTo(ContainElement(m.Name), "Machine %s was on the drained node", m.Name)
		}
		w.expectNodesReady(ctx, g, machines)
	}).WithTimeout(15 * time.Minute).WithPolling(5 * time.Second).Should(Succeed())
	t.Logf("every Machine Running with a Ready Node %s after the drain of %s began", time.Since(start).Round(time.Second), node)
}

// machinesOn names the Machines whose node Pods run on a hosting node, and
// counts the cluster's workers.
func machinesOn(ctx context.Context, g Gomega, w *workloadCluster, node string) (onNode []string, workers int) {
	var pods []string
	for _, p := range w.nodePods(ctx, g) {
		if p.Spec.NodeName == node {
			pods = append(pods, p.Name)
		}
	}
	for _, m := range w.machines(ctx, g) {
		if slices.Contains(pods, nodepod.PodName(m.Spec.InfrastructureRef.Name)) {
			onNode = append(onNode, m.Name)
		}
		if _, ok := m.Labels[clusterv1.MachineDeploymentNameLabel]; ok {
			workers++
		}
	}
	return onNode, workers
}

// maxDrainOutage bounds the failed probes of one drain: one of three API
// servers goes, the control-plane Service drops it from its endpoints, and
// KubeadmControlPlane removes its etcd member and joins a new one. That is
// the bound of a control-plane rollout's outage (test/capi-e2e: a removed
// etcd member cost up to 15 failed probes there, docs/performance.md).
const maxDrainOutage = 30

// apiProbe asks the workload API's /readyz once a second on a new connection
// each time, through the endpoint users have in their kubeconfig.
type apiProbe struct {
	done           chan struct{}
	once           sync.Once
	wg             sync.WaitGroup
	mu             sync.Mutex
	failed, probes int
}

func startAPIProbe(ctx context.Context, t *testing.T, g Gomega, w *workloadCluster) *apiProbe {
	cfg, err := clientcmd.RESTConfigFromKubeConfig(w.kubeconfig)
	g.Expect(err).NotTo(HaveOccurred())
	tlsConfig, err := rest.TLSConfigFor(cfg)
	g.Expect(err).NotTo(HaveOccurred())
	httpClient := &http.Client{Timeout: 2 * time.Second,
		Transport: &http.Transport{TLSClientConfig: tlsConfig, DisableKeepAlives: true}}
	p := &apiProbe{done: make(chan struct{})}
	p.wg.Go(func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-p.done:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			ok := readyz(ctx, httpClient, cfg.Host)
			p.mu.Lock()
			p.probes++
			if !ok {
				p.failed++
				t.Logf("%s: the workload API's /readyz failed", time.Now().Format(time.TimeOnly))
			}
			p.mu.Unlock()
		}
	})
	return p
}

func readyz(ctx context.Context, c *http.Client, host string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, host+"/readyz", nil)
	if err != nil {
		return false
	}
	resp, err := c.Do(req)
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// counts returns the failed and all probes so far.
func (p *apiProbe) counts() (failed, probes int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.failed, p.probes
}

// stop ends the probe (the first call) and returns the failed and all probes.
func (p *apiProbe) stop() (failed, probes int) {
	p.once.Do(func() { close(p.done) })
	p.wg.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.failed, p.probes
}
