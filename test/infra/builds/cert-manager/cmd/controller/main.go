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

// Command controller runs the cert-manager control loops Cluster API providers
// need: Certificates, CertificateRequests (with their auto-approver), Issuers and
// ClusterIssuers, for the SelfSigned and CA issuer types.
//
// It is assembled from the public packages of github.com/cert-manager/cert-manager
// because upstream's cmd/controller is a module of its own that the Go module
// proxy does not serve. Left out on purpose: ACME, Vault and Venafi issuers, the
// ingress and gateway shims, CertificateSigningRequest signing, leader election
// (run one replica with the Recreate strategy) and the metrics server.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"k8s.io/klog/v2"

	controllerpkg "github.com/cert-manager/cert-manager/pkg/controller"
	"github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/approver"
	crca "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/ca"
	crselfsigned "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/selfsigned"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/issuing"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/keymanager"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/readiness"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/requestmanager"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/revisionmanager"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/trigger"
	"github.com/cert-manager/cert-manager/pkg/controller/clusterissuers"
	"github.com/cert-manager/cert-manager/pkg/controller/issuers"
	logf "github.com/cert-manager/cert-manager/pkg/logs"
	"github.com/cert-manager/cert-manager/pkg/util"

	// The Issuer and ClusterIssuer controllers set up issuers through this
	// registry; only the types registered here become Ready.
	_ "github.com/cert-manager/cert-manager/pkg/issuer/ca"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/selfsigned"
)

// controllers are the control loops this binary runs, by the names their
// packages register them under. Importing a package registers its loop, so an
// explicit list keeps anything registered transitively from running.
var controllers = []string{
	issuing.ControllerName,
	keymanager.ControllerName,
	readiness.ControllerName,
	requestmanager.ControllerName,
	revisionmanager.ControllerName,
	trigger.ControllerName,
	approver.ControllerName,
	crca.CRControllerName,
	crselfsigned.CRControllerName,
	issuers.ControllerName,
	clusterissuers.ControllerName,
}

type options struct {
	kubeconfig               string
	clusterResourceNamespace string
	workers                  int
	showVersion              bool
}

func main() {
	opts := parseFlags()
	if opts.showVersion {
		fmt.Println(util.VersionInfo().GitVersion)
		return
	}
	logf.InitLogs()
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	ctx = logf.NewContext(ctx, logf.Log, "controller")
	if err := run(ctx, opts); err != nil {
		logf.FromContext(ctx).Error(err, "Controller stopped")
		logf.FlushLogs()
		os.Exit(1)
	}
}

func parseFlags() options {
	var o options
	klog.InitFlags(nil)
	flag.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig file (in-cluster configuration when empty)")
	flag.StringVar(&o.clusterResourceNamespace, "cluster-resource-namespace", podNamespace(),
		"namespace of the Secrets ClusterIssuers refer to")
	flag.IntVar(&o.workers, "workers", 5, "workers per control loop")
	flag.BoolVar(&o.showVersion, "version", false, "print the cert-manager version and exit")
	flag.Parse()
	return o
}

// podNamespace is the namespace the Deployment runs in (the downward API sets
// POD_NAMESPACE), the same default upstream's chart gives
// --cluster-resource-namespace.
func podNamespace() string {
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" {
		return ns
	}
	return "cert-manager"
}

func contextOptions(o options) controllerpkg.ContextOptions {
	return controllerpkg.ContextOptions{
		// All namespaces: the ClusterIssuer loop is meaningless in a namespaced install.
		Kubeconfig:         o.kubeconfig,
		KubernetesAPIQPS:   20,
		KubernetesAPIBurst: 50,
		IssuerOptions:      controllerpkg.IssuerOptions{ClusterResourceNamespace: o.clusterResourceNamespace},
		// Upstream's defaults: a failed request is retried after 1h, backing off to 32h.
		CertificateOptions: controllerpkg.CertificateOptions{
			CertificateRequestMinimumBackoffDuration: time.Hour,
			CertificateRequestMaximumBackoffDuration: 32 * time.Hour,
		},
	}
}

// run constructs the control loops, starts the informers they registered while
// being constructed, and runs the loops until ctx ends or one of them fails.
func run(ctx context.Context, o options) error {
	factory, err := controllerpkg.NewContextFactory(ctx, contextOptions(o))
	if err != nil {
		return fmt.Errorf("building the controller context: %w", err)
	}
	loops, err := constructControllers(factory)
	if err != nil {
		return err
	}
	if err := startInformers(ctx, factory); err != nil {
		return err
	}
	return runControllers(ctx, loops, o.workers)
}

func constructControllers(factory *controllerpkg.ContextFactory) (map[string]controllerpkg.Interface, error) {
	known := controllerpkg.Known()
	loops := make(map[string]controllerpkg.Interface, len(controllers))
	for _, name := range controllers {
		construct, ok := known[name]
		if !ok {
			return nil, fmt.Errorf("control loop %s is not registered", name)
		}
		loop, err := construct(factory)
		if err != nil {
			return nil, fmt.Errorf("constructing control loop %s: %w", name, err)
		}
		loops[name] = loop
	}
	return loops, nil
}

// startInformers starts the shared informer factories every control loop took
// its informers from (each Build shares them). The HTTP-01 and Gateway API
// factories stay off: no loop here uses them.
func startInformers(ctx context.Context, factory *controllerpkg.ContextFactory) error {
	shared, err := factory.Build()
	if err != nil {
		return fmt.Errorf("building the informer context: %w", err)
	}
	shared.KubeSharedInformerFactory.Start(ctx.Done())
	shared.SharedInformerFactory.Start(ctx.Done())
	return nil
}

// runControllers blocks until every control loop has returned after ctx ended
// (nil), or until one of them fails, which stops the process so that the
// kubelet restarts it.
func runControllers(ctx context.Context, loops map[string]controllerpkg.Interface, workers int) error {
	log := logf.FromContext(ctx)
	failed := make(chan error, len(loops))
	var running sync.WaitGroup
	for name, loop := range loops {
		log.Info("Starting control loop", "controller", name)
		running.Go(func() {
			if err := loop.Run(workers, ctx); err != nil {
				failed <- fmt.Errorf("control loop %s: %w", name, err)
			}
		})
	}
	stopped := make(chan struct{})
	go func() { running.Wait(); close(stopped) }()
	select {
	case err := <-failed:
		return err
	case <-stopped:
		return nil
	}
}
