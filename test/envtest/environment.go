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

// Package envtest starts a real kube-apiserver and etcd (built from source by
// hack/kube-binaries.sh) with the project's CRDs, webhooks and conversion wired to
// a manager in the test process, for tests that talk to the API.
package envtest

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"go.uber.org/zap/zapcore"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crenvtest "sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	kruntime "k8s.io/apimachinery/pkg/runtime"

	infrav1alpha1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1alpha1"
	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/internal/hosting"
	webhookv1beta1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/internal/webhook/v1beta1"
)

// Environment is a running kube-apiserver and etcd with the project's CRDs, and a
// manager serving the project's webhooks.
type Environment struct {
	Config  *rest.Config
	Client  client.Client
	Scheme  *kruntime.Scheme
	Manager ctrl.Manager

	env    *crenvtest.Environment
	cancel context.CancelFunc
	done   chan error
}

// Options adds to what every Environment has.
type Options struct {
	// ExtraCRDPaths are more CRD files or folders to install, e.g. Cluster API's.
	ExtraCRDPaths []string
	// ClusterAPICRDs installs the CRDs of Cluster API core and its kubeadm
	// bootstrap and control-plane providers.
	ClusterAPICRDs bool
	// ClusterAPIWebhooks also serves those providers' own defaulting and
	// validating webhooks, so Cluster API objects are checked as in a real
	// management cluster.
	ClusterAPIWebhooks bool
	// Setup registers controllers with the manager before it starts.
	Setup func(ctrl.Manager) error
	// LogOutput receives the controllers' logs up to verbosity 7, for tests
	// that check what the logs must never hold. From 8 on, client-go dumps
	// request and response bodies, Secrets included, as it does in every
	// controller: that level is for debugging a test cluster only.
	LogOutput io.Writer
}

// RepositoryRoot is the root of this repository.
func RepositoryRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// NewScheme returns a scheme with the Kubernetes, Cluster API and provider types.
func NewScheme() (*kruntime.Scheme, error) {
	scheme := kruntime.NewScheme()
	for _, add := range []func(*kruntime.Scheme) error{
		clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme, clusterv1.AddToScheme, infrav1.AddToScheme, infrav1alpha1.AddToScheme,
		addClusterAPIProviderTypes,
	} {
		if err := add(scheme); err != nil {
			return nil, err
		}
	}
	return scheme, nil
}

// Start starts the API server and the manager; Stop ends both.
func Start(opts Options) (*Environment, error) {
	setLogger(opts.LogOutput)
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		return nil, errors.New("KUBEBUILDER_ASSETS is not set: run the tests with 'make test', which builds etcd and kube-apiserver and sets it")
	}
	if err := prepareFuzzWorker(); err != nil {
		return nil, err
	}
	scheme, err := NewScheme()
	if err != nil {
		return nil, err
	}
	root := RepositoryRoot()
	crdPaths := append([]string{filepath.Join(root, "config", "crd", "bases")}, opts.ExtraCRDPaths...)
	if opts.ClusterAPICRDs {
		capiCRDs, err := clusterAPICRDs()
		if err != nil {
			return nil, err
		}
		crdPaths = append(crdPaths, capiCRDs...)
	}
	webhookPaths := []string{filepath.Join(root, "config", "webhook")}
	if opts.ClusterAPIWebhooks {
		capiWebhooks, err := clusterAPIWebhookManifests()
		if err != nil {
			return nil, err
		}
		webhookPaths = append(webhookPaths, capiWebhooks...)
	}
	env := &crenvtest.Environment{
		Scheme:                scheme,
		CRDDirectoryPaths:     crdPaths,
		ErrorIfCRDPathMissing: true,
		WebhookInstallOptions: crenvtest.WebhookInstallOptions{Paths: webhookPaths},
	}
	config, err := env.Start()
	if err != nil {
		// A failure after the API server started (e.g. installing CRDs) must not leak it.
		return nil, errors.Join(fmt.Errorf("starting kube-apiserver and etcd: %w", err), env.Stop())
	}
	e := &Environment{Config: config, Scheme: scheme, env: env, done: make(chan error, 1)}
	if err := e.startManager(opts); err != nil {
		return nil, errors.Join(err, env.Stop())
	}
	return e, nil
}

func (e *Environment) startManager(opts Options) error {
	webhookOptions := e.env.WebhookInstallOptions
	mgr, err := ctrl.NewManager(e.Config, ctrl.Options{
		Scheme:  e.Scheme,
		Cache:   hosting.ManagementCacheOptions(),
		Metrics: metricsserver.Options{BindAddress: "0"},
		WebhookServer: webhook.NewServer(webhook.Options{
			Host: webhookOptions.LocalServingHost, Port: webhookOptions.LocalServingPort, CertDir: webhookOptions.LocalServingCertDir,
		}),
	})
	if err != nil {
		return fmt.Errorf("creating manager: %w", err)
	}
	if err := webhookv1beta1.SetupWebhooksWithManager(mgr); err != nil {
		return fmt.Errorf("setting up webhooks: %w", err)
	}
	if opts.ClusterAPIWebhooks {
		if err := setupClusterAPIWebhooks(mgr); err != nil {
			return fmt.Errorf("setting up Cluster API webhooks: %w", err)
		}
	}
	if opts.Setup != nil {
		if err := opts.Setup(mgr); err != nil {
			return fmt.Errorf("setting up controllers: %w", err)
		}
	}
	// Tests read and write straight through the API server, never a stale cache.
	direct, err := client.New(e.Config, client.Options{Scheme: e.Scheme})
	if err != nil {
		return err
	}
	e.Manager, e.Client = mgr, direct
	ctx, cancel := context.WithCancel(context.Background())
	e.cancel = cancel
	go func() { e.done <- mgr.Start(ctx) }()
	address := net.JoinHostPort(webhookOptions.LocalServingHost, strconv.Itoa(webhookOptions.LocalServingPort))
	return waitForTLS(ctx, address)
}

// SetLogOutput sets what Start's LogOutput sets, for a test binary that uses
// controller-runtime before Start (a second API server, say): call it first.
// controller-runtime discards every log for good once it was used without a
// logger for 30 seconds, which a loaded machine reaches while starting an
// API server.
func SetLogOutput(output io.Writer) { setLogger(output) }

// setLogger sends controller logs to output, up to verbosity 7, and to
// stderr when CAPK_TEST_LOG is set; nowhere otherwise.
func setLogger(output io.Writer) {
	var writers []io.Writer
	if output != nil {
		writers = append(writers, output)
	}
	if os.Getenv("CAPK_TEST_LOG") != "" {
		writers = append(writers, os.Stderr)
	}
	if len(writers) == 0 {
		ctrl.SetLogger(logr.Discard())
		return
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(io.MultiWriter(writers...)), zap.UseDevMode(true), zap.Level(zapcore.Level(-7))))
}

// clusterAPICRDs are the CRDs of Cluster API core, the kubeadm bootstrap and the
// kubeadm control-plane providers of the module this repository builds with.
func clusterAPICRDs() ([]string, error) {
	dir, err := ModuleDir("sigs.k8s.io/cluster-api")
	if err != nil {
		return nil, err
	}
	return []string{
		filepath.Join(dir, "core", "config", "crd", "bases"),
		filepath.Join(dir, "bootstrap", "kubeadm", "config", "crd", "bases"),
		filepath.Join(dir, "controlplane", "kubeadm", "config", "crd", "bases"),
	}, nil
}

// clusterAPIWebhookManifests are the webhook configurations of Cluster API core
// and its kubeadm providers.
func clusterAPIWebhookManifests() ([]string, error) {
	dir, err := ModuleDir("sigs.k8s.io/cluster-api")
	if err != nil {
		return nil, err
	}
	return []string{
		filepath.Join(dir, "core", "config", "webhook", "manifests.yaml"),
		filepath.Join(dir, "bootstrap", "kubeadm", "config", "webhook", "manifests.yaml"),
		filepath.Join(dir, "controlplane", "kubeadm", "config", "webhook", "manifests.yaml"),
	}, nil
}

// ModuleDir is the folder of a module in the module cache: at the version this
// repository's go.mod requires, or at the version given as module@version.
func ModuleDir(module string) (string, error) {
	args := []string{"list", "-m", "-f", "{{.Dir}}", module}
	if strings.Contains(module, "@") {
		args = []string{"mod", "download", "-json", module}
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = RepositoryRoot()
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("finding module %s: %w", module, err)
	}
	if !strings.Contains(module, "@") {
		return strings.TrimSpace(string(out)), nil
	}
	var info struct{ Dir string }
	if err := json.Unmarshal(out, &info); err != nil {
		return "", fmt.Errorf("finding module %s: %w", module, err)
	}
	return info.Dir, nil
}

// waitForTLS waits until the webhook server accepts TLS connections.
func waitForTLS(ctx context.Context, address string) error {
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		conn, err := tls.DialWithDialer(&net.Dialer{Timeout: time.Second}, "tcp", address, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // local test server
		if err != nil {
			return false, nil
		}
		return true, conn.Close()
	})
}

// Stop stops the manager, then the API server and etcd. When the manager's
// runnables outlive its grace period, the goroutines still running are
// written to standard error: one of them is the runnable that did not end.
func (e *Environment) Stop() error {
	e.cancel()
	managerErr := <-e.done
	if managerErr != nil {
		fmt.Fprintf(os.Stderr, "envtest: the manager stopped with %v; its goroutines:\n", managerErr)
		_ = pprof.Lookup("goroutine").WriteTo(os.Stderr, 1)
	}
	return errors.Join(managerErr, e.env.Stop())
}
