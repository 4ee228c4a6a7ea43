//go:build bench

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

package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/test/envtest"
)

// leaseName is the manager's default leader election lease.
const leaseName = "controller-leader-election-capk"

// scaleRun is one run of the scale benchmark, phase by phase.
type scaleRun struct {
	settings Settings
	dir      string
	logf     func(format string, args ...any)

	env      *environment
	manager  *managerProcess
	sim      *simulator
	tracker  *machineTracker
	clusters []benchCluster
	machines []benchMachine
	token    string
	obs      Observations
	// loadAtStart is the machine's load average before the run.
	loadAtStart float64
}

func newScaleRun(settings Settings, dir string, logf func(string, ...any)) *scaleRun {
	clusters, machines := layout(settings, providerNamespacePrefix)
	return &scaleRun{
		settings: settings, dir: dir, logf: logf, clusters: clusters, machines: machines,
		obs: Observations{
			Clusters: settings.Clusters, MachinesPerCluster: settings.MachinesPerCluster,
			ManagerUser: managerUser, BaselineUser: baselineUser, ManagerArgs: settings.ManagerArgs, ManagerBuild: sourceVersion(envtest.RepositoryRoot()),
		},
	}
}

// start starts the API server and the manager and waits until the manager
// serves and leads.
func (r *scaleRun) start(ctx context.Context) error {
	var err error
	if r.loadAtStart, err = ReadLoadAverage(); err != nil {
		return err
	}
	if _, err := os.Stat(r.settings.Manager); err != nil {
		return fmt.Errorf("the manager binary: %w (make bench builds it)", err)
	}
	if r.env, err = startEnvironment(r.dir, r.settings.EtcdNoFsync); err != nil {
		return err
	}
	kubeconfig := filepath.Join(r.dir, "manager.kubeconfig")
	if err := r.env.writeKubeconfig(managerUser, kubeconfig); err != nil {
		return err
	}
	r.manager, err = startManager(managerOptions{
		binary: r.settings.Manager, kubeconfig: kubeconfig, logPath: filepath.Join(r.dir, "manager.log"),
		webhook: r.env.webhook(), extraArgs: r.settings.ManagerArgs, profile: r.settings.ProfileSeconds > 0,
	})
	if err != nil {
		return err
	}
	if r.manager.note != "" {
		r.obs.Notes = append(r.obs.Notes, r.manager.note)
	}
	r.logf("manager log: %s", r.manager.logPath)
	if err := r.manager.waitReady(ctx, 2*time.Minute); err != nil {
		return err
	}
	if err := r.waitForLeader(ctx); err != nil {
		return err
	}
	r.token, err = r.env.metricsToken(ctx)
	return err
}

// waitForLeader waits until the manager holds its lease, unless leader
// election is off.
func (r *scaleRun) waitForLeader(ctx context.Context) error {
	if strings.Contains(r.manager.note, "leader election off") {
		return nil
	}
	key := client.ObjectKey{Namespace: systemNamespace, Name: leaseName}
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := r.manager.running(); err != nil {
			return false, err
		}
		lease := &coordinationv1.Lease{}
		if err := r.env.client.Get(ctx, key, lease); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return lease.Spec.HolderIdentity != nil && *lease.Spec.HolderIdentity != "", nil
	})
	if err != nil {
		return fmt.Errorf("waiting for the manager to hold lease %s: %w", key, err)
	}
	return nil
}

// measureRawRate measures the raw Pod create rate.
func (r *scaleRun) measureRawRate(ctx context.Context) error {
	creator, err := newRawCreator(ctx, r.env.config(rawUser))
	if err != nil {
		return err
	}
	apiServerStart, _ := r.serverCPU()
	elapsed, err := creator.create(ctx, r.settings.RawPods, r.settings.RawWorkers)
	if err != nil {
		return err
	}
	apiServerEnd, _ := r.serverCPU()
	r.obs.RawPods, r.obs.RawDuration, r.obs.RawAPIServerCPU = r.settings.RawPods, elapsed, apiServerEnd-apiServerStart
	r.logf("raw: %d Pods created in %s (%.1f/s)", r.settings.RawPods, elapsed.Round(time.Millisecond), PerSecond(float64(r.settings.RawPods), elapsed))
	return creator.deleteAll(ctx)
}

// setUp creates the clusters and starts the node simulator and the tracker.
func (r *scaleRun) setUp(ctx context.Context) error {
	if err := setUpClusters(ctx, r.env.client, r.settings, r.clusters); err != nil {
		return err
	}
	var err error
	if r.sim, err = newSimulator(r.env.config(simulatorUser), r.settings.SimulatorWorkers); err != nil {
		return err
	}
	if err := r.sim.start(ctx); err != nil {
		return err
	}
	r.tracker, err = startMachineTracker(ctx, r.env.admin, r.env.scheme)
	return err
}

// check fails a wait early on a correctness problem.
func (r *scaleRun) check() error {
	if err := r.manager.running(); err != nil {
		return err
	}
	if duplicates := r.sim.duplicates(); len(duplicates) > 0 {
		return fmt.Errorf("machines with more than one node Pod: %s", strings.Join(duplicates, ", "))
	}
	return nil
}

// reconciles reads the manager's count of KubernetesMachine reconciles.
func (r *scaleRun) reconciles(ctx context.Context) (float64, error) {
	metrics, err := r.manager.scrapeMetrics(ctx, r.token)
	if err != nil {
		return 0, err
	}
	return SumCounter(metrics, "controller_runtime_reconcile_total", map[string]string{"controller": "kubernetesmachine"})
}

// cpu reads the manager's CPU time so far.
func (r *scaleRun) cpu() (time.Duration, error) {
	stats, err := r.manager.stats()
	return stats.CPU, err
}

// provision creates every machine while its Cluster's infrastructure is not
// provisioned yet (the provider only notes that each waits), then releases
// every cluster at once, as Cluster API does when a cluster's infrastructure
// is ready, and waits until all machines are provisioned. The timed window
// starts at the release, so the benchmark's own creates do not share it.
func (r *scaleRun) provision(ctx context.Context) error {
	staged := time.Now()
	err := parallel(len(r.machines), r.settings.CreateWorkers, func(i int) error {
		return createMachine(ctx, r.env.client, r.machines[i])
	})
	if err != nil {
		return err
	}
	if err := waitAllWaiting(ctx, r.env.client, len(r.machines), r.settings.ProvisionTimeout); err != nil {
		return err
	}
	r.obs.Staging = Window{From: staged, To: time.Now()}
	r.logf("staged %d machines (all waiting for their cluster) in %s", len(r.machines), r.obs.Staging.Duration().Round(time.Millisecond))
	apiServerStart, etcdStart := r.serverCPU()
	profiles, err := r.startProfiles(ctx)
	if err != nil {
		return err
	}
	if err := r.release(ctx); err != nil {
		return err
	}
	last, err := r.tracker.waitProvisioned(ctx, len(r.machines), r.settings.ProvisionTimeout, r.check)
	if err != nil {
		count, _ := r.tracker.provisionedCount()
		return fmt.Errorf("%d of %d machines provisioned, missing e.g. %s: %w\n%s", count, len(r.machines),
			strings.Join(r.tracker.notProvisioned(r.machines), ", "), err, r.sim.errorSummary())
	}
	if err := profiles.wait(); err != nil {
		return err
	}
	r.obs.Provisioning.To = last
	r.obs.APIServerCPU, r.obs.EtcdCPU = r.serverCPU()
	r.obs.APIServerCPU -= apiServerStart
	r.obs.EtcdCPU -= etcdStart
	r.obs.Latencies = r.tracker.latencies()
	r.logf("provisioned %d machines in %s", len(r.machines), r.obs.Provisioning.Duration().Round(time.Millisecond))
	if err := r.heapProfile(ctx); err != nil {
		return err
	}
	return r.checkOnePodPerMachine(ctx)
}

// startProfiles starts the CPU profiles of provisioning when they are asked for.
func (r *scaleRun) startProfiles(ctx context.Context) (*cpuProfiles, error) {
	if r.settings.ProfileSeconds == 0 {
		return nil, nil
	}
	dir := r.profileDir()
	r.logf("profiling kube-apiserver and the manager for %d s into %s", r.settings.ProfileSeconds, dir)
	return startCPUProfiles(ctx, r.env.admin, r.manager.profilerAddress, dir, time.Duration(r.settings.ProfileSeconds)*time.Second)
}

// profileDir is where the profiles go: next to the JSON figures.
func (r *scaleRun) profileDir() string { return filepath.Dir(r.settings.Output) }

// heapProfile writes the manager's heap profile once every machine is
// provisioned (its caches then hold them all), when profiles are asked for:
// what its peak memory is made of. It comes after the provisioning's figures
// are read: the profile makes the manager collect its garbage first.
func (r *scaleRun) heapProfile(ctx context.Context) error {
	if r.settings.ProfileSeconds == 0 {
		return nil
	}
	path := filepath.Join(r.profileDir(), "bench-heap-manager.pprof")
	r.logf("writing the manager's heap profile to %s", path)
	return managerProfile(r.manager.profilerAddress, "/debug/pprof/heap?gc=1").fetch(ctx, path)
}

// serverCPU reads the CPU time kube-apiserver and etcd used so far (zero for
// one that cannot be read: the figure is then missing, not wrong).
func (r *scaleRun) serverCPU() (apiServer, etcd time.Duration) {
	read := func(name string) time.Duration {
		pid, err := ChildProcess(name)
		if err != nil {
			r.logf("%v", err)
			return 0
		}
		stats, err := ReadProcessStats(pid)
		if err != nil {
			r.logf("%v", err)
			return 0
		}
		return stats.CPU
	}
	return read("kube-apiserver"), read("etcd")
}

// release marks every Cluster's infrastructure provisioned; a machine's
// bootstrap data is ready from its Cluster's release on.
func (r *scaleRun) release(ctx context.Context) error {
	var err error
	if r.obs.ReconcilesBefore, err = r.reconciles(ctx); err != nil {
		return err
	}
	if r.obs.CPUProvisioningStart, err = r.cpu(); err != nil {
		return err
	}
	machinesOf := map[benchCluster][]benchMachine{}
	for _, m := range r.machines {
		machinesOf[m.cluster] = append(machinesOf[m.cluster], m)
	}
	r.obs.Provisioning.From = time.Now()
	return parallel(len(r.clusters), r.settings.CreateWorkers, func(i int) error {
		if err := markInfrastructureProvisioned(ctx, r.env.client, r.clusters[i]); err != nil {
			return err
		}
		for _, m := range machinesOf[r.clusters[i]] {
			r.tracker.markCreated(m.key())
		}
		return nil
	})
}

// checkOnePodPerMachine fails unless there is exactly one node Pod per machine.
func (r *scaleRun) checkOnePodPerMachine(ctx context.Context) error {
	if err := r.check(); err != nil {
		return err
	}
	pods := &corev1.PodList{}
	if err := r.env.client.List(ctx, pods, client.MatchingLabels{infrav1.ManagedByLabel: infrav1.ManagedByValue}); err != nil {
		return fmt.Errorf("listing the node Pods: %w", err)
	}
	if len(pods.Items) != len(r.machines) {
		return fmt.Errorf("%d node Pods for %d machines", len(pods.Items), len(r.machines))
	}
	return nil
}

// steady waits for the settle period, then watches the steady state window.
func (r *scaleRun) steady(ctx context.Context) error {
	if err := sleep(ctx, r.settings.Settle); err != nil {
		return err
	}
	var err error
	// Scraped before the window: the scrape's token and access reviews are the
	// manager's requests too.
	if r.obs.ReconcilesAfter, err = r.reconciles(ctx); err != nil {
		return err
	}
	if r.obs.CPUSteadyStart, err = r.cpu(); err != nil {
		return err
	}
	r.obs.ProvisioningTail = Window{From: r.obs.Provisioning.To, To: time.Now()}
	r.obs.Steady.From = r.obs.ProvisioningTail.To
	if err := sleep(ctx, r.settings.Steady); err != nil {
		return err
	}
	r.obs.Steady.To = time.Now()
	if r.obs.CPUSteadyEnd, err = r.cpu(); err != nil {
		return err
	}
	return r.check()
}

// deleteAll deletes every machine, waits until every KubernetesMachine is
// gone and counts what the provider left behind.
func (r *scaleRun) deleteAll(ctx context.Context) error {
	r.obs.Deletion.From = time.Now()
	err := parallel(len(r.machines), r.settings.CreateWorkers, func(i int) error {
		return deleteMachine(ctx, r.env.client, r.machines[i])
	})
	if err != nil {
		return err
	}
	if r.obs.Deletion.To, err = r.tracker.waitGone(ctx, r.settings.DeleteTimeout, r.manager.running); err != nil {
		return fmt.Errorf("%w\n%s", err, r.sim.errorSummary())
	}
	r.logf("deleted %d machines in %s", len(r.machines), r.obs.Deletion.Duration().Round(time.Millisecond))
	r.obs.LeftoverPods, r.obs.LeftoverSecrets, r.obs.LeftoverClaims, err = leftovers(ctx, r.env.client)
	if err != nil {
		return err
	}
	// The requests deletion still causes (the KubernetesClusters see their
	// machines go) land in the next seconds.
	if err := sleep(ctx, min(r.settings.Settle, 5*time.Second)); err != nil {
		return err
	}
	r.obs.DeletionTail = Window{From: r.obs.Deletion.To, To: time.Now()}
	return nil
}

// recordManagerTotals reads the manager's peak RSS and CPU time at the end of
// its part of the run: the baseline's KubernetesMachines, which it watches
// but skips, must not count.
func (r *scaleRun) recordManagerTotals() error {
	stats, err := r.manager.stats()
	if err != nil {
		return err
	}
	r.obs.PeakRSSBytes, r.obs.FileRSSBytes, r.obs.CPUEnd = stats.PeakRSSBytes, stats.FileRSSBytes, stats.CPU
	return nil
}

// measureBaseline measures the machine rate a plain client reaches making the
// provider's writes (baseline.go), on objects of its own, then removes them.
func (r *scaleRun) measureBaseline(ctx context.Context) error {
	_, machines := layout(r.settings, baselineNamespacePrefix)
	namespaces := make([]string, r.settings.Namespaces)
	for i := range namespaces {
		namespaces[i] = namespaceName(baselineNamespacePrefix, i)
	}
	b, err := newBaseline(r.env.config(baselineUser), r.env.scheme, namespaces, machines)
	if err != nil {
		return err
	}
	if err := b.stage(ctx, r.settings.CreateWorkers); err != nil {
		return err
	}
	workers := r.settings.BaselineWorkers
	apiServerStart, _ := r.serverCPU()
	r.obs.Baseline.From = time.Now()
	if err := b.provisionAll(ctx, workers); err != nil {
		return err
	}
	r.obs.Baseline.To = time.Now()
	apiServerEnd, _ := r.serverCPU()
	r.obs.BaselineMachines, r.obs.BaselineWorkers, r.obs.BaselineAPIServerCPU = len(machines), workers, apiServerEnd-apiServerStart
	r.logf("baseline: %d machines' writes made in %s by %d workers (%.1f machines/s)", len(machines),
		r.obs.Baseline.Duration().Round(time.Millisecond), workers, PerSecond(float64(len(machines)), r.obs.Baseline.Duration()))
	return b.cleanUp(ctx, r.settings.CreateWorkers)
}

// finish reads the audit log and returns the figures.
func (r *scaleRun) finish() (Figures, error) {
	var err error
	if r.obs.Requests, err = ReadAuditLogFile(r.env.auditLog); err != nil {
		return Figures{}, err
	}
	host, err := hostInfo()
	if err != nil {
		return Figures{}, err
	}
	host.LoadAtStart = r.loadAtStart
	return r.obs.Figures(host), nil
}

// correctness fails on what the provider left behind after deletion.
func (r *scaleRun) correctness() error {
	if n := r.obs.LeftoverPods + r.obs.LeftoverSecrets + r.obs.LeftoverClaims; n > 0 {
		return fmt.Errorf("the provider left %d node Pods, %d bootstrap Secrets and %d claims after deleting every machine",
			r.obs.LeftoverPods, r.obs.LeftoverSecrets, r.obs.LeftoverClaims)
	}
	return nil
}

// stop stops the manager, then the API server.
func (r *scaleRun) stop() error {
	var errs []error
	if r.manager != nil {
		errs = append(errs, r.manager.stop())
	}
	if r.env != nil {
		errs = append(errs, r.env.stop())
	}
	return errors.Join(errs...)
}

// hostInfo describes the machine the benchmark runs on.
func hostInfo() (Host, error) {
	meminfo, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return Host{}, fmt.Errorf("reading the memory size: %w", err)
	}
	memory, err := ParseMemTotal(string(meminfo))
	if err != nil {
		return Host{}, err
	}
	load, err := ReadLoadAverage()
	if err != nil {
		return Host{}, err
	}
	return Host{
		CPUs: runtime.NumCPU(), MemoryGiB: float64(memory) / (1 << 30),
		OS: runtime.GOOS, Arch: runtime.GOARCH, GoVersion: runtime.Version(), LoadAtEnd: load,
	}, nil
}

// sourceVersion names the source tree make bench built the manager from: the
// commit, and whether the provider's code had uncommitted changes.
func sourceVersion(root string) string {
	head, err := exec.Command("git", "-C", root, "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "unknown (not a git checkout)"
	}
	version := strings.TrimSpace(string(head))
	status, err := exec.Command("git", "-C", root, "status", "--porcelain", "--", "cmd", "internal", "api").Output()
	if err != nil || len(strings.TrimSpace(string(status))) > 0 {
		version += " with uncommitted changes in cmd/, internal/ or api/"
	}
	return version
}

// sleep waits for d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}
