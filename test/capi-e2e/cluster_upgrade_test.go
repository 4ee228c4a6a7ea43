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

package capie2e

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"
	capispecs "sigs.k8s.io/cluster-api/test/e2e"
	"sigs.k8s.io/cluster-api/test/framework"

	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/test/apiprobe"
)

// maxAPIOutage bounds the longest run of failed /readyz probes while a
// one-machine control plane rolls. The control-plane Service sends requests
// only to node Pods whose API server is ready, and KCP adds the new member
// before it removes the old one. On the project's own Debian image this
// measured 0 to 1 s (a probe cut off as the old API server stopped), and the
// bound was 10 s. On kind's images (v1.35.4 -> v1.36.3) two runs measured 15
// failed probes each, about 30 s from the old member's removal, the API
// servers answering "[-]etcd failed"; a same-version rollout of the same
// one-machine control plane on kind's v1.36.3 image lost no probe. Until that
// is understood (issue 18), the bound is 30 s: it still fails an endpoint that
// keeps sending requests to a gone API server.
const maxAPIOutage = 30 * time.Second

// A workload Kubernetes upgrade from the previous minor
// (KUBERNETES_VERSION_UPGRADE_FROM) to the current one through the
// ClusterClass: the control plane first, then the workers, each node Pod
// replaced by one of the new version's node image. Kubernetes' conformance
// tests need images this machine cannot pull, so they are skipped. The suite
// adds a client that polls the workload API through its endpoint (the hosting
// cluster's Service) from the version change until the cluster is deleted,
// and fails the spec if the API was unreachable for longer than maxAPIOutage.
var _ = Describe("When upgrading a workload cluster using ClusterClass", minutes(6), func() {
	var (
		probe  *apiprobe.Probe
		outage error // what the probe found; asserted after the spec's own cleanup
	)
	BeforeEach(func() {
		probe, outage = nil, nil
		DeferCleanup(func() { Expect(outage).NotTo(HaveOccurred()) })
	})
	stopProbe := func() {
		if probe == nil {
			return
		}
		probe.Stop()
		report := probe.Report()
		AddReportEntry("workload API through its endpoint during the upgrade", report)
		switch {
		case probe.Probes() <= 10:
			outage = fmt.Errorf("the /readyz client ran only %d probes through the upgrade", probe.Probes())
		case probe.LongestOutage() > maxAPIOutage:
			outage = fmt.Errorf("the workload API was unreachable through its endpoint for too long: %s", report)
		}
		probe = nil
	}
	capispecs.ClusterUpgradeConformanceSpec(ctx, func() capispecs.ClusterUpgradeConformanceSpecInput {
		return capispecs.ClusterUpgradeConformanceSpecInput{
			E2EConfig:                e2eConfig,
			ClusterctlConfigPath:     clusterctlConfigPath,
			BootstrapClusterProxy:    leftoverCheckingProxy{ClusterProxy: bootstrapClusterProxy, beforeClusterDelete: stopProbe},
			ArtifactFolder:           artifactFolder,
			SkipCleanup:              skipCleanup,
			SkipConformanceTests:     true,
			Flavor:                   ptr.To("topology"),
			ControlPlaneMachineCount: ptr.To[int64](1),
			WorkerMachineCount:       ptr.To[int64](1),
			PreWaitForControlPlaneToBeUpgraded: func(proxy framework.ClusterProxy, namespace, name string) {
				var err error
				probe, err = apiprobe.Start(ctx, proxy.GetWorkloadCluster(ctx, namespace, name).GetRESTConfig(), time.Second)
				Expect(err).NotTo(HaveOccurred())
			},
		}
	})
})
