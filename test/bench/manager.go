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
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	crenvtest "sigs.k8s.io/controller-runtime/pkg/envtest"
)

// managerProcess is the manager binary running as a separate process.
type managerProcess struct {
	cmd            *exec.Cmd
	logPath        string
	probeAddress   string
	metricsAddress string
	// profilerAddress serves Go's pprof endpoints when profiling is on.
	profilerAddress string
	exited          chan struct{}
	exitErr         error
	// note says how the process was started when it differs from a Pod's.
	note string
}

// managerOptions are what the manager is started with.
type managerOptions struct {
	binary     string
	kubeconfig string
	logPath    string
	webhook    crenvtest.WebhookInstallOptions
	extraArgs  []string
	// profile turns on the manager's pprof endpoints.
	profile bool
}

// startManager starts the manager with production flags: the defaults of its
// leader election, QPS, burst and concurrency unless extraArgs override them.
func startManager(opts managerOptions) (*managerProcess, error) {
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	m := &managerProcess{
		logPath:        opts.logPath,
		probeAddress:   net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0])),
		metricsAddress: net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[1])),
		exited:         make(chan struct{}),
	}
	args := []string{
		"--webhook-port=" + strconv.Itoa(opts.webhook.LocalServingPort),
		"--webhook-cert-dir=" + opts.webhook.LocalServingCertDir,
		"--health-probe-bind-address=" + m.probeAddress,
		"--metrics-bind-address=" + m.metricsAddress,
	}
	if opts.profile {
		m.profilerAddress = net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[2]))
		args = append(args, "--profiler-address="+m.profilerAddress)
	}
	args = append(args, opts.extraArgs...)
	name, args, err := m.leaderElectionCommand(opts.binary, args)
	if err != nil {
		return nil, err
	}
	logFile, err := os.Create(opts.logPath)
	if err != nil {
		return nil, fmt.Errorf("creating the manager log: %w", err)
	}
	m.cmd = exec.Command(name, args...)
	m.cmd.Env = append(os.Environ(), "KUBECONFIG="+opts.kubeconfig)
	m.cmd.Stdout, m.cmd.Stderr = logFile, logFile
	if err := m.cmd.Start(); err != nil {
		return nil, errors.Join(fmt.Errorf("starting the manager %s: %w", opts.binary, err), logFile.Close())
	}
	go func() {
		m.exitErr = m.cmd.Wait()
		_ = logFile.Close()
		close(m.exited)
	}()
	return m, nil
}

// leaderElectionCommand returns the command that runs the manager with leader
// election as in production; outside a Pod its lease namespace must be named.
func (m *managerProcess) leaderElectionCommand(binary string, args []string) (string, []string, error) {
	if slices.Contains(args, "--leader-elect=false") {
		m.note = "leader election off (--leader-elect=false)"
		return binary, args, nil
	}
	return binary, append([]string{"--leader-election-namespace=" + systemNamespace}, args...), nil
}

// freePorts finds n free TCP ports on the loopback interface.
func freePorts(n int) ([]int, error) {
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			_ = l.Close()
		}
	}()
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("finding a free port: %w", err)
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// waitReady waits until the manager's readyz answers 200, or fails when the
// manager exits.
func (m *managerProcess) waitReady(ctx context.Context, timeout time.Duration) error {
	url := "http://" + m.probeAddress + "/readyz"
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		select {
		case <-m.exited:
			return false, fmt.Errorf("the manager exited: %v", m.exitErr)
		default:
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return false, err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false, nil
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for the manager's %s (log: %s): %w", url, m.logPath, err)
	}
	return nil
}

// running tells whether the manager still runs.
func (m *managerProcess) running() error {
	select {
	case <-m.exited:
		return fmt.Errorf("the manager exited: %v (log: %s)", m.exitErr, m.logPath)
	default:
		return nil
	}
}

// stats reads the manager's peak memory and CPU time.
func (m *managerProcess) stats() (ProcessStats, error) {
	if err := m.running(); err != nil {
		return ProcessStats{}, err
	}
	return ReadProcessStats(m.cmd.Process.Pid)
}

// scrapeMetrics reads the manager's metrics endpoint (HTTPS with a self-signed
// certificate, authenticated and authorized by the API server) with a bearer token.
func (m *managerProcess) scrapeMetrics(ctx context.Context, token string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+m.metricsAddress+"/metrics", nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	transport := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec // the manager's self-signed metrics certificate
	defer transport.CloseIdleConnections()
	resp, err := (&http.Client{Transport: transport, Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		return "", fmt.Errorf("scraping the manager's metrics: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", fmt.Errorf("reading the manager's metrics: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("scraping the manager's metrics: %s: %s", resp.Status, strings.TrimSpace(string(body)))
	}
	return string(body), nil
}

// stop ends the manager with SIGTERM, and kills it after 30 s.
func (m *managerProcess) stop() error {
	if m.cmd == nil || m.cmd.Process == nil {
		return nil
	}
	select {
	case <-m.exited:
		return nil
	default:
	}
	if err := m.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return fmt.Errorf("stopping the manager: %w", err)
	}
	select {
	case <-m.exited:
		return nil
	case <-time.After(30 * time.Second):
		return errors.Join(errors.New("the manager did not stop within 30 s of SIGTERM; killed it"), m.cmd.Process.Kill())
	}
}

// tail is the end of the manager's log, for failures.
func (m *managerProcess) tail(lines int) string {
	data, err := os.ReadFile(m.logPath)
	if err != nil {
		return fmt.Sprintf("(reading %s: %v)", m.logPath, err)
	}
	all := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	return strings.Join(all[max(0, len(all)-lines):], "\n")
}
