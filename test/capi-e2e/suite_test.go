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

// Package capie2e runs Cluster API's own end-to-end specs
// (sigs.k8s.io/cluster-api/test/e2e) against this provider, on the local
// environment that test/infra/env.sh brings up: its management cluster is the
// framework's existing bootstrap cluster, so nothing is created with kind and
// no image is loaded by the framework.
//
//	make test-capi-e2e
//
// The suite is called the way Cluster API calls its own (test/e2e/*_test.go),
// with the provider's flavors rendered into the artifacts folder by run.sh.
package capie2e

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	"sigs.k8s.io/cluster-api/test/framework"
	"sigs.k8s.io/cluster-api/test/framework/clusterctl"
	"sigs.k8s.io/cluster-api/test/framework/ginkgoextensions"
	ctrl "sigs.k8s.io/controller-runtime"
)

var (
	// environmentFile is what test/infra/env.sh up wrote.
	environmentFile string
	// configTemplate is the e2e config with ${...} placeholders for the environment's paths.
	configTemplate string
	// artifactFolder receives the resolved config, the clusterctl repository, logs and dumps.
	artifactFolder string
	skipCleanup    bool
)

var (
	ctx                       = ctrl.SetupSignalHandler()
	watchesCtx, cancelWatches = context.WithCancel(ctx)

	settings              map[string]string // the environment's, see readEnvironment
	e2eConfig             *clusterctl.E2EConfig
	clusterctlConfigPath  string
	bootstrapClusterProxy framework.ClusterProxy
	// specProxy is the management cluster's proxy as the specs get it (see leftoverCheckingProxy).
	specProxy framework.ClusterProxy
)

func init() {
	flag.StringVar(&environmentFile, "e2e.environment", "/var/lib/capk-hosting/e2e.env", "the settings test/infra/env.sh up wrote")
	flag.StringVar(&configTemplate, "e2e.config", "config/kubernetes.yaml", "the e2e config template")
	flag.StringVar(&artifactFolder, "e2e.artifacts-folder", "../../out/capi-e2e", "where the config, the clusterctl repository, logs and dumps go")
	flag.BoolVar(&skipCleanup, "e2e.skip-resource-cleanup", false, "keep the clusters the specs create")
}

func TestE2E(t *testing.T) {
	g := NewWithT(t)
	ctrl.SetLogger(klog.Background())
	var err error
	artifactFolder, err = filepath.Abs(artifactFolder)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(os.MkdirAll(artifactFolder, 0o755)).To(Succeed())
	RegisterFailHandler(Fail)
	logFile, err := ginkgoextensions.EnableFileLogging(filepath.Join(artifactFolder,
		fmt.Sprintf("ginkgo-log-%d.txt", GinkgoParallelProcess())))
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { g.Expect(logFile.Close()).To(Succeed()) }()
	RunSpecs(t, "capk-capi-e2e")
}

// The first process resolves the config against the environment, writes the
// clusterctl repository and starts watching the controllers' logs; every
// process then loads the same files.
var _ = SynchronizedBeforeSuite(func() []byte {
	var err error
	settings, err = readEnvironment(environmentFile)
	Expect(err).NotTo(HaveOccurred(), "reading the environment (is test/infra/env.sh up?)")
	settings["FLAVORS"] = filepath.Join(artifactFolder, "flavors")
	configPath := filepath.Join(artifactFolder, "e2e-config.yaml")
	Expect(resolveConfig(configTemplate, configPath, settings)).To(Succeed())
	e2eConfig = clusterctl.LoadE2EConfig(ctx, clusterctl.LoadE2EConfigInput{ConfigPath: configPath})
	clusterctlConfigPath = createRepository(e2eConfig, filepath.Join(artifactFolder, "repository"), settings)

	bootstrapClusterProxy = newProxy(settings["KUBECONFIG"])
	specProxy = leftoverCheckingProxy{ClusterProxy: bootstrapClusterProxy}
	clusterctl.InitManagementClusterAndWatchControllerLogs(watchesCtx, clusterctl.InitManagementClusterAndWatchControllerLogsInput{
		ClusterProxy:            bootstrapClusterProxy,
		ClusterctlConfigPath:    clusterctlConfigPath,
		InfrastructureProviders: e2eConfig.InfrastructureProviders(),
		LogFolder:               filepath.Join(artifactFolder, "clusters", bootstrapClusterProxy.GetName()),
	}, e2eConfig.GetIntervals(bootstrapClusterProxy.GetName(), "wait-controllers")...)
	return []byte(strings.Join([]string{configPath, clusterctlConfigPath, settings["KUBECONFIG"]}, ","))
}, func(data []byte) {
	parts := strings.Split(string(data), ",")
	Expect(parts).To(HaveLen(3))
	var err error
	settings, err = readEnvironment(environmentFile)
	Expect(err).NotTo(HaveOccurred())
	clusterctlConfigPath = parts[1]
	e2eConfig = clusterctl.LoadE2EConfig(ctx, clusterctl.LoadE2EConfigInput{ConfigPath: parts[0]})
	if bootstrapClusterProxy == nil { // the first process keeps the proxy its log watchers use
		bootstrapClusterProxy = newProxy(parts[2])
		specProxy = leftoverCheckingProxy{ClusterProxy: bootstrapClusterProxy}
	}
})

var _ = SynchronizedAfterSuite(func() {}, func() {
	cancelWatches()
	if bootstrapClusterProxy != nil {
		recordControllerRestarts(ctx, bootstrapClusterProxy.GetClient())
		bootstrapClusterProxy.Dispose(ctx)
	}
})

// minutes is a spec's priority: about how many minutes it takes on the CI
// machine with two specs side by side (docs/cluster-api-specs.md). Ginkgo
// starts higher priorities first, so the longest specs start first and the
// processes finish close together.
func minutes(m int) SpecPriority { return SpecPriority(m) }

// newProxy is the framework's proxy for the management cluster, collecting
// machine logs from the node Pods (the management cluster hosts them all,
// also those of the remote-hosting flavor).
func newProxy(kubeconfig string) framework.ClusterProxy {
	scheme := runtime.NewScheme()
	framework.TryAddDefaultSchemes(scheme)
	// Every kind the provider creates on hosting clusters (budgets, NetworkPolicies too).
	Expect(clientgoscheme.AddToScheme(scheme)).To(Succeed())
	// The provider's CRDs, whose storage the clusterctl upgrade spec checks.
	Expect(apiextensionsv1.AddToScheme(scheme)).To(Succeed())
	config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	Expect(err).NotTo(HaveOccurred())
	hosting, err := kubernetes.NewForConfig(config)
	Expect(err).NotTo(HaveOccurred())
	proxy := framework.NewClusterProxy("bootstrap", kubeconfig, scheme,
		framework.WithMachineLogCollector(nodePodLogCollector{hosting: hosting}))
	Expect(proxy).NotTo(BeNil())
	return proxy
}

// createRepository writes the clusterctl repository of the e2e config, with
// the pod network (podnet) inlined into every flavor's ClusterResourceSet as
// Cluster API's suite does with its CNI, and the environment's cert-manager.
func createRepository(config *clusterctl.E2EConfig, folder string, settings map[string]string) string {
	input := clusterctl.CreateRepositoryInput{E2EConfig: config, RepositoryFolder: folder}
	input.RegisterClusterResourceSetConfigMapTransformation(settings["PODNET_MANIFEST"], "CNI_RESOURCES")
	path := clusterctl.CreateRepository(ctx, input)
	Expect(addCertManager(path, settings["CERT_MANAGER_URL"], settings["CERT_MANAGER_VERSION"])).To(Succeed())
	return path
}
