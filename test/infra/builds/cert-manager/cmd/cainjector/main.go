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

// Command cainjector copies the CA of cert-manager Certificates (annotation
// cert-manager.io/inject-ca-from) into the caBundle of webhook configurations,
// APIServices and CRD conversion webhooks: the CA of Cluster API's webhooks.
//
// It is assembled from the public package pkg/controller/cainjector of
// github.com/cert-manager/cert-manager because upstream's cmd/cainjector is a
// module of its own that the Go module proxy does not serve. Left out on
// purpose: leader election (run one replica with the Recreate strategy) and the
// metrics server.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/klog/v2"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	cmscheme "github.com/cert-manager/cert-manager/pkg/client/clientset/versioned/scheme"
	"github.com/cert-manager/cert-manager/pkg/controller/cainjector"
	"github.com/cert-manager/cert-manager/pkg/util"
)

// certificateAPIWait bounds how long to wait for the Certificate CRD: clusterctl
// creates it together with this Deployment, and watching a kind the API server
// does not serve yet would fail the manager.
const certificateAPIWait = 5 * time.Minute

func main() {
	showVersion := flag.Bool("version", false, "print the cert-manager version and exit")
	klog.InitFlags(nil)
	flag.Parse() // controller-runtime registers --kubeconfig
	if *showVersion {
		fmt.Println(util.VersionInfo().GitVersion)
		return
	}
	ctrl.SetLogger(klog.Background())
	if err := run(ctrl.SetupSignalHandler()); err != nil {
		klog.ErrorS(err, "cainjector stopped")
		klog.Flush()
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	// The field manager of its server-side applies is derived from the user agent.
	restConfig := util.RestConfigWithUserAgent(ctrl.GetConfigOrDie(), "cainjector")
	mgr, err := ctrl.NewManager(restConfig, managerOptions())
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	if err := waitForCertificateAPI(ctx, mgr.GetRESTMapper()); err != nil {
		return err
	}
	if err := cainjector.RegisterAllInjectors(ctx, mgr, injectorOptions()); err != nil {
		return fmt.Errorf("registering the injectors: %w", err)
	}
	return mgr.Start(ctx)
}

func managerOptions() ctrl.Options {
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(cmscheme.AddToScheme(scheme))
	utilruntime.Must(apiextensionsv1.AddToScheme(scheme))
	utilruntime.Must(apiregistrationv1.AddToScheme(scheme))
	return ctrl.Options{
		Scheme:  scheme,
		Metrics: metricsserver.Options{BindAddress: "0"},
		// Secrets are read directly, as upstream does: caching them would hold
		// every Secret of the cluster in memory. The injectors watch only their
		// metadata.
		Client: client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Secret{}}}},
	}
}

// injectorOptions enables every injectable kind and the Certificate data
// source (annotation cert-manager.io/inject-ca-from), as upstream's defaults do.
func injectorOptions() cainjector.SetupOptions {
	return cainjector.SetupOptions{
		EnableCertificatesDataSource: true,
		EnabledReconcilersFor: map[string]bool{
			cainjector.MutatingWebhookConfigurationName:   true,
			cainjector.ValidatingWebhookConfigurationName: true,
			cainjector.APIServiceName:                     true,
			cainjector.CustomResourceDefinitionName:       true,
		},
	}
}

// waitForCertificateAPI polls until the API server serves cert-manager.io/v1
// Certificates.
func waitForCertificateAPI(ctx context.Context, mapper meta.RESTMapper) error {
	certificate := schema.GroupKind{Group: "cert-manager.io", Kind: "Certificate"}
	err := wait.PollUntilContextTimeout(ctx, 2*time.Second, certificateAPIWait, true, func(context.Context) (bool, error) {
		if _, err := mapper.RESTMapping(certificate, "v1"); err != nil {
			klog.InfoS("Waiting for the Certificate API", "reason", err.Error())
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for the cert-manager.io/v1 Certificate API: %w", err)
	}
	return nil
}
