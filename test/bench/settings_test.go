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
	"slices"
	"strings"
	"testing"
	"time"
)

func env(values map[string]string) func(string) string {
	return func(name string) string { return values[name] }
}

func TestSettingsDefaults(t *testing.T) {
	s, err := SettingsFromEnv(env(nil), "/repo")
	if err != nil {
		t.Fatal(err)
	}
	if s.Clusters != 100 || s.MachinesPerCluster != 10 || s.Machines() != 1000 || s.Namespaces != 10 {
		t.Errorf("got %d clusters x %d in %d namespaces, want 100 x 10 in 10", s.Clusters, s.MachinesPerCluster, s.Namespaces)
	}
	if s.Steady != time.Minute || s.Settle != 20*time.Second || s.RawPods != 1000 || s.RawWorkers != 32 {
		t.Errorf("unexpected defaults %+v", s)
	}
	if s.Output != "/repo/out/bench-results.json" || s.Manager != "/repo/bin/manager" || len(s.ManagerArgs) != 0 {
		t.Errorf("unexpected paths or arguments %+v", s)
	}
	if s.ProfileSeconds != 0 || s.EtcdNoFsync {
		t.Errorf("profiling or etcd without fsync on by default: %+v", s)
	}
	if s.BaselineWorkers != 10 {
		t.Errorf("baseline workers %d, want the manager's default concurrency 10", s.BaselineWorkers)
	}
}

func TestSettingsFromVariables(t *testing.T) {
	s, err := SettingsFromEnv(env(map[string]string{
		"BENCH_CLUSTERS": "3", "BENCH_MACHINES_PER_CLUSTER": " 5 ", "BENCH_STEADY_SECONDS": "10",
		"BENCH_SETTLE_SECONDS": "0", "BENCH_OUTPUT": "/tmp/r.json",
		"BENCH_MANAGER_ARGS":    "--kube-api-qps=300  --concurrency=20",
		"BENCH_PROFILE_SECONDS": "25", "BENCH_ETCD_NO_FSYNC": "1",
	}), "/repo")
	if err != nil {
		t.Fatal(err)
	}
	if s.Machines() != 15 || s.Namespaces != 3 {
		t.Errorf("got %d machines in %d namespaces, want 15 in 3 (no more namespaces than clusters)", s.Machines(), s.Namespaces)
	}
	if s.Steady != 10*time.Second || s.Settle != 0 || s.Output != "/tmp/r.json" {
		t.Errorf("unexpected settings %+v", s)
	}
	if s.ProfileSeconds != 25 || !s.EtcdNoFsync {
		t.Errorf("profile seconds %d, etcd without fsync %v; want 25, true", s.ProfileSeconds, s.EtcdNoFsync)
	}
	if !slices.Equal(s.ManagerArgs, []string{"--kube-api-qps=300", "--concurrency=20"}) {
		t.Errorf("manager args %q", s.ManagerArgs)
	}
	if s.BaselineWorkers != 20 {
		t.Errorf("baseline workers %d, want the manager's --concurrency=20", s.BaselineWorkers)
	}
}

func TestBaselineWorkersFollowTheManagersConcurrency(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want int
	}{
		{"default", nil, 10},
		{"other flags only", []string{"--kube-api-qps=500", "--kube-api-burst=1000"}, 10},
		{"with an equals sign", []string{"--concurrency=50"}, 50},
		{"as two arguments", []string{"--concurrency", "30", "--kube-api-qps=500"}, 30},
		{"the last one wins, as in pflag", []string{"--concurrency=5", "--concurrency=40"}, 40},
		{"a longer flag of that prefix is another flag", []string{"--concurrency-x=3"}, 10},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ManagerConcurrency(c.args)
			if err != nil || got != c.want {
				t.Errorf("ManagerConcurrency(%q) = %d, %v; want %d", c.args, got, err, c.want)
			}
		})
	}
}

func TestSettingsRejectABadManagerConcurrency(t *testing.T) {
	for _, args := range []string{"--concurrency=0", "--concurrency=many"} {
		_, err := SettingsFromEnv(env(map[string]string{"BENCH_MANAGER_ARGS": args}), "/repo")
		if err == nil || !strings.Contains(err.Error(), "--concurrency") {
			t.Errorf("BENCH_MANAGER_ARGS=%s: error %v, want one about --concurrency", args, err)
		}
	}
}

func TestRelativePathsAreUnderTheRepositoryRoot(t *testing.T) {
	s, err := SettingsFromEnv(env(map[string]string{"BENCH_OUTPUT": "out/bench-results-300.json", "BENCH_MANAGER": "bin/manager-old"}), "/repo")
	if err != nil {
		t.Fatal(err)
	}
	if s.Output != "/repo/out/bench-results-300.json" || s.Manager != "/repo/bin/manager-old" {
		t.Errorf("output %q and manager %q, want both under /repo", s.Output, s.Manager)
	}
}

func TestSettingsRejectBadValues(t *testing.T) {
	_, err := SettingsFromEnv(env(map[string]string{"BENCH_CLUSTERS": "ten", "BENCH_STEADY_SECONDS": "0"}), "/repo")
	if err == nil {
		t.Fatal("no error for BENCH_CLUSTERS=ten")
	}
	for _, want := range []string{"BENCH_CLUSTERS=\"ten\"", "BENCH_STEADY_SECONDS=0 is below the minimum 1"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}
