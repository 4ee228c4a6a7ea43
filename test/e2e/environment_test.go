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

// Package e2e runs the real thing on this machine: a hosting cluster with
// kubelet and containerd (test/infra/hosting), Cluster API, cert-manager and
// the provider installed by clusterctl as Pods in it, and workload clusters
// whose nodes are Pods booted from the offline node image.
//
//	make test-e2e      (sets everything up, runs the tests, tears it down)
//
// CAPK_E2E_REUSE=1 runs against an environment `test/infra/env.sh up` left
// running, and leaves it running; CAPK_E2E_KEEP=1 keeps the one the tests
// started.
package e2e

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/test/envtest"
)

// environment is what env.sh up wrote to e2e.env, and clients for the
// management (and hosting) cluster.
type environment struct {
	settings map[string]string
	client   client.Client
	clients  kubernetes.Interface
}

var env *environment

func TestMain(m *testing.M) {
	// controller-runtime's clients log the API server's warnings (a v1alpha1
	// object's deprecation, say) through this logger.
	ctrllog.SetLogger(klog.Background())
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	reuse := os.Getenv("CAPK_E2E_REUSE") == "1"
	if !reuse {
		if err := envScript("up"); err != nil {
			fmt.Fprintln(os.Stderr, "e2e: environment up failed:", err)
			envScript("down") //nolint:errcheck // best effort; the up error is the one to report
			return 1
		}
	}
	var err error
	if env, err = loadEnvironment(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	code := m.Run()
	if !reuse && os.Getenv("CAPK_E2E_KEEP") != "1" {
		if err := envScript("down"); err != nil {
			fmt.Fprintln(os.Stderr, "e2e: environment down failed:", err)
			return 1
		}
	}
	return code
}

func envScript(args ...string) error {
	cmd := exec.Command(filepath.Join(envtest.RepositoryRoot(), "test", "infra", "env.sh"), args...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	return cmd.Run()
}

func stateDir() string {
	if s := os.Getenv("CAPK_HOSTING_STATE"); s != "" {
		return s
	}
	return "/var/lib/capk-hosting"
}

func loadEnvironment() (*environment, error) {
	settings, err := readSettings(filepath.Join(stateDir(), "e2e.env"))
	if err != nil {
		return nil, fmt.Errorf("reading the environment (run test/infra/env.sh up): %w", err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", settings["KUBECONFIG"])
	if err != nil {
		return nil, err
	}
	c, err := newClient(cfg)
	if err != nil {
		return nil, err
	}
	clients, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &environment{settings: settings, client: c, clients: clients}, nil
}

// newClient is a client for a management cluster: Cluster API's and the
// provider's types besides the built-in ones.
func newClient(cfg *rest.Config) (client.Client, error) {
	scheme, err := envtest.NewScheme()
	if err != nil {
		return nil, err
	}
	return client.New(cfg, client.Options{Scheme: scheme})
}

func readSettings(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	settings := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		if key, value, ok := strings.Cut(line, "="); ok {
			settings[key] = value
		}
	}
	return settings, nil
}

// command runs a tool of the environment with the management kubeconfig and
// a HOME of its own, and returns its stdout; stderr goes to the test log.
func (e *environment) command(ctx context.Context, t testing.TB, extraEnv []string, name string, args ...string) (string, error) {
	t.Helper()
	return run(t, e.commandWithInput(ctx, t, nil, extraEnv, name, args...))
}

// commandWithInput is command's exec.Cmd, reading stdin from input.
func (e *environment) commandWithInput(ctx context.Context, t testing.TB, input io.Reader, extraEnv []string,
	name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, e.settings[name], args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+e.settings["KUBECONFIG"], "HOME="+t.TempDir())
	cmd.Env = append(cmd.Env, extraEnv...)
	cmd.Stdin = input
	return cmd
}

// run runs cmd and returns its stdout; its stderr and duration go to the test log.
func run(t testing.TB, cmd *exec.Cmd) (string, error) {
	t.Helper()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	start := time.Now()
	out, err := cmd.Output()
	name := filepath.Base(cmd.Path) + " " + strings.Join(cmd.Args[1:], " ")
	t.Logf("%s (%s)\n%s", name, time.Since(start).Round(time.Second), stderr.String())
	if err != nil {
		return string(out), fmt.Errorf("%s: %w", name, err)
	}
	return string(out), nil
}
