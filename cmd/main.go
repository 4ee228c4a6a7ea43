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

// Command manager runs the cluster-api-provider-kubernetes controllers and webhooks.
package main

import (
	"crypto/tls"
	"flag"
	"os"

	"github.com/spf13/pflag"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/klog/v2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	infrav1alpha1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1alpha1"
	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
	infracontroller "github.com/capi-kubernetes/cluster-api-provider-kubernetes/internal/controller"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/internal/hosting"
	webhookv1beta1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/internal/webhook/v1beta1"
)

// options are the manager's command-line flags.
type options struct {
	metricsAddress     string
	probeAddress       string
	leaderElect        bool
	webhookPort        int
	webhookCertDir     string
	watchNamespace     string
	watchFilter        string
	kubeAPIQPS         float32
	kubeAPIBurst       int
	enableHTTP2        bool
	concurrency        int
	leaderElectionName string
	leaderElectionNS   string
	skipCRDMigration   []string
	profilerAddress    string
}

func (o *options) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.metricsAddress, "metrics-bind-address", ":8443", "Address of the metrics endpoint, served over HTTPS with authentication and authorization; 0 disables it.")
	fs.StringVar(&o.probeAddress, "health-probe-bind-address", ":9440", "Address of the health and readiness probes.")
	fs.BoolVar(&o.leaderElect, "leader-elect", true, "Elect a leader so that only one replica reconciles.")
	fs.StringVar(&o.leaderElectionName, "leader-election-id", "controller-leader-election-capk", "Name of the leader election lease.")
	fs.StringVar(&o.leaderElectionNS, "leader-election-namespace", "", "Namespace of the leader election lease; the manager's own Pod namespace when empty (outside a Pod it must be set).")
	fs.IntVar(&o.webhookPort, "webhook-port", 9443, "Port of the webhook server.")
	fs.StringVar(&o.webhookCertDir, "webhook-cert-dir", "/tmp/k8s-webhook-server/serving-certs", "Directory with the webhook server's tls.crt and tls.key.")
	fs.StringVar(&o.watchNamespace, "namespace", "", "Namespace to watch; all namespaces when empty.")
	fs.StringVar(&o.watchFilter, "watch-filter", "", "Only reconcile objects whose cluster.x-k8s.io/watch-filter label has this value.")
	fs.Float32Var(&o.kubeAPIQPS, "kube-api-qps", 100, "Maximum queries per second to the management cluster's API server.")
	fs.IntVar(&o.kubeAPIBurst, "kube-api-burst", 200, "Maximum burst of queries to the management cluster's API server.")
	fs.IntVar(&o.concurrency, "concurrency", infracontroller.DefaultConcurrency, "Number of objects of each kind reconciled at once.")
	fs.StringSliceVar(&o.skipCRDMigration, "skip-crd-migration-phases", nil, "CRD migration phases to skip after an upgrade: StorageVersionMigration, CleanupManagedFields (docs/upgrade.md).")
	fs.BoolVar(&o.enableHTTP2, "enable-http2", false, "Serve webhooks and metrics over HTTP/2 (off by default: CVE-2023-44487).")
	fs.StringVar(&o.profilerAddress, "profiler-address", "", "Address of Go's pprof endpoints (/debug/pprof/), e.g. localhost:6060; off when empty. Unauthenticated: bind it to the loopback interface.")
}

func main() {
	opts := &options{}
	klog.InitFlags(flag.CommandLine)
	pflag.CommandLine.AddGoFlagSet(flag.CommandLine)
	opts.addFlags(pflag.CommandLine)
	pflag.Parse()
	ctrl.SetLogger(klog.Background())
	log := ctrl.Log.WithName("setup")

	if err := run(opts); err != nil {
		log.Error(err, "Manager stopped")
		os.Exit(1)
	}
}

func newScheme() (*runtime.Scheme, error) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme, clusterv1.AddToScheme, infrav1.AddToScheme, infrav1alpha1.AddToScheme,
	} {
		if err := add(scheme); err != nil {
			return nil, err
		}
	}
	return scheme, nil
}

func run(opts *options) error {
	scheme, err := newScheme()
	if err != nil {
		return err
	}
	restConfig := ctrl.GetConfigOrDie()
	restConfig.QPS, restConfig.Burst = opts.kubeAPIQPS, opts.kubeAPIBurst
	restConfig.UserAgent = "cluster-api-provider-kubernetes-manager"

	var tlsOptions []func(*tls.Config)
	if !opts.enableHTTP2 {
		tlsOptions = append(tlsOptions, func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} })
	}
	cacheOptions := hosting.ManagementCacheOptions()
	if opts.watchNamespace != "" {
		cacheOptions.DefaultNamespaces = map[string]cache.Config{opts.watchNamespace: {}}
	}
	mgr, err := ctrl.NewManager(restConfig, ctrl.Options{
		Scheme:                  scheme,
		Cache:                   cacheOptions,
		HealthProbeBindAddress:  opts.probeAddress,
		PprofBindAddress:        opts.profilerAddress,
		LeaderElection:          opts.leaderElect,
		LeaderElectionID:        opts.leaderElectionName,
		LeaderElectionNamespace: opts.leaderElectionNS,
		Metrics: metricsserver.Options{
			BindAddress: opts.metricsAddress, SecureServing: true,
			FilterProvider: filters.WithAuthenticationAndAuthorization, TLSOpts: tlsOptions,
		},
		WebhookServer: webhook.NewServer(webhook.Options{Port: opts.webhookPort, CertDir: opts.webhookCertDir, TLSOpts: tlsOptions}),
	})
	if err != nil {
		return err
	}
	if err := webhookv1beta1.SetupWebhooksWithManager(mgr); err != nil {
		return err
	}
	ctx := ctrl.SetupSignalHandler()
	if err := infracontroller.Setup(ctx, mgr, infracontroller.Options{
		Reconcile:  controller.Options{MaxConcurrentReconciles: opts.concurrency},
		HostingQPS: opts.kubeAPIQPS, HostingBurst: opts.kubeAPIBurst,
		WatchFilter: opts.watchFilter, SkipCRDMigrationPhases: opts.skipCRDMigration,
	}); err != nil {
		return err
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("webhook", mgr.GetWebhookServer().StartedChecker()); err != nil {
		return err
	}
	return mgr.Start(ctx)
}
