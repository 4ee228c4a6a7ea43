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
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/internal/controller"
)

// Settings are the benchmark's sizes and timings; every one has a BENCH_*
// environment variable.
type Settings struct {
	// Clusters is the number of workload clusters (BENCH_CLUSTERS).
	Clusters int
	// MachinesPerCluster is the number of machines of each cluster, one of them
	// a control-plane machine (BENCH_MACHINES_PER_CLUSTER).
	MachinesPerCluster int
	// Namespaces spread the clusters (BENCH_NAMESPACES).
	Namespaces int
	// RawPods is how many Pods the raw create rate is measured with (BENCH_RAW_PODS).
	RawPods int
	// RawWorkers create those Pods concurrently (BENCH_RAW_WORKERS).
	RawWorkers int
	// CreateWorkers create the machines' objects concurrently (BENCH_CREATE_WORKERS).
	CreateWorkers int
	// SimulatorWorkers bind and start node Pods concurrently (BENCH_SIMULATOR_WORKERS).
	SimulatorWorkers int
	// Settle is the pause between the last machine provisioned and the steady
	// state window (BENCH_SETTLE_SECONDS).
	Settle time.Duration
	// Steady is the steady state window (BENCH_STEADY_SECONDS).
	Steady time.Duration
	// ProvisionTimeout bounds provisioning; a machine not provisioned by then
	// fails the benchmark (BENCH_PROVISION_TIMEOUT_SECONDS).
	ProvisionTimeout time.Duration
	// DeleteTimeout bounds the deletion (BENCH_DELETE_TIMEOUT_SECONDS).
	DeleteTimeout time.Duration
	// Output is where the figures are written as JSON (BENCH_OUTPUT, a
	// relative path under the repository root).
	Output string
	// Manager is the manager binary (BENCH_MANAGER, a relative path under the
	// repository root).
	Manager string
	// ProfileSeconds, when above zero, takes CPU profiles of the API server
	// and the manager for that long from the start of provisioning
	// (BENCH_PROFILE_SECONDS).
	ProfileSeconds int
	// EtcdNoFsync runs etcd with --unsafe-no-fsync, as envtest does by
	// default (BENCH_ETCD_NO_FSYNC=1); etcd syncs to disk as in production otherwise.
	EtcdNoFsync bool
	// ManagerArgs are extra manager flags, e.g. --kube-api-qps=200
	// (BENCH_MANAGER_ARGS, split at spaces); they override the defaults.
	ManagerArgs []string
	// BaselineWorkers make the baseline's writes concurrently: as many as the
	// manager reconciles KubernetesMachines at once (its --concurrency).
	BaselineWorkers int
}

// Machines is the number of machines of the run.
func (s Settings) Machines() int { return s.Clusters * s.MachinesPerCluster }

// intSetting describes one integer variable.
type intSetting struct {
	name     string
	target   *int
	fallback int
	minimum  int
}

// SettingsFromEnv reads the settings with getenv (os.Getenv); root is the
// repository root that relative defaults are under.
func SettingsFromEnv(getenv func(string) string, root string) (Settings, error) {
	s := Settings{
		Output:      filepath.Join(root, "out", "bench-results.json"),
		Manager:     filepath.Join(root, "bin", "manager"),
		ManagerArgs: strings.Fields(getenv("BENCH_MANAGER_ARGS")),
	}
	var settle, steady, provision, deletion, noFsync int
	ints := []intSetting{
		{"BENCH_CLUSTERS", &s.Clusters, 100, 1},
		{"BENCH_MACHINES_PER_CLUSTER", &s.MachinesPerCluster, 10, 1},
		{"BENCH_NAMESPACES", &s.Namespaces, 10, 1},
		{"BENCH_RAW_PODS", &s.RawPods, 1000, 1},
		{"BENCH_RAW_WORKERS", &s.RawWorkers, 32, 1},
		{"BENCH_CREATE_WORKERS", &s.CreateWorkers, 16, 1},
		{"BENCH_SIMULATOR_WORKERS", &s.SimulatorWorkers, 8, 1},
		{"BENCH_SETTLE_SECONDS", &settle, 20, 0},
		{"BENCH_STEADY_SECONDS", &steady, 60, 1},
		{"BENCH_PROVISION_TIMEOUT_SECONDS", &provision, 900, 1},
		{"BENCH_DELETE_TIMEOUT_SECONDS", &deletion, 600, 1},
		{"BENCH_PROFILE_SECONDS", &s.ProfileSeconds, 0, 0},
		{"BENCH_ETCD_NO_FSYNC", &noFsync, 0, 0},
	}
	var errs []error
	for _, setting := range ints {
		errs = append(errs, setting.read(getenv))
	}
	if err := errors.Join(errs...); err != nil {
		return Settings{}, err
	}
	s.Namespaces = min(s.Namespaces, s.Clusters)
	s.EtcdNoFsync = noFsync > 0
	s.Settle, s.Steady = time.Duration(settle)*time.Second, time.Duration(steady)*time.Second
	s.ProvisionTimeout, s.DeleteTimeout = time.Duration(provision)*time.Second, time.Duration(deletion)*time.Second
	var err error
	if s.BaselineWorkers, err = ManagerConcurrency(s.ManagerArgs); err != nil {
		return Settings{}, err
	}
	if value := getenv("BENCH_OUTPUT"); value != "" {
		s.Output = underRoot(root, value)
	}
	if value := getenv("BENCH_MANAGER"); value != "" {
		s.Manager = underRoot(root, value)
	}
	return s, nil
}

// underRoot puts a relative path under the repository root: go test runs the
// benchmark in test/bench, but make bench is run from the root.
func underRoot(root, path string) string {
	if filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(root, path)
}

// read sets the target from the variable, or to the fallback when it is unset.
func (i intSetting) read(getenv func(string) string) error {
	value := strings.TrimSpace(getenv(i.name))
	if value == "" {
		*i.target = i.fallback
		return nil
	}
	n, err := strconv.Atoi(value)
	if err != nil {
		return fmt.Errorf("%s=%q is not a whole number", i.name, value)
	}
	if n < i.minimum {
		return fmt.Errorf("%s=%d is below the minimum %d", i.name, n, i.minimum)
	}
	*i.target = n
	return nil
}

// ManagerConcurrency is how many objects of each kind the manager reconciles
// at once when started with args: the last --concurrency among them, in
// either of pflag's forms (--concurrency=20, --concurrency 20), or its default.
func ManagerConcurrency(args []string) (int, error) {
	concurrency := controller.DefaultConcurrency
	for i, arg := range args {
		value, found := strings.CutPrefix(arg, "--concurrency=")
		if !found && arg == "--concurrency" && i+1 < len(args) {
			value, found = args[i+1], true
		}
		if !found {
			continue
		}
		n, err := strconv.Atoi(value)
		if err != nil || n < 1 {
			return 0, fmt.Errorf("BENCH_MANAGER_ARGS: --concurrency %q is not a positive whole number", value)
		}
		concurrency = n
	}
	return concurrency, nil
}
