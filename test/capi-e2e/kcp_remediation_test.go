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
	. "github.com/onsi/ginkgo/v2"
	capispecs "sigs.k8s.io/cluster-api/test/e2e"
)

// The control-plane machines of the kcp-remediation flavor hold their
// bootstrap until the spec signals them, so the spec can remediate the first
// machine while it provisions, then a second one, then a Ready one, and check
// that KCP replaces each. The node Pods read the signal from the management
// cluster, whose address the environment publishes in kube-public/cluster-info
// as kubeadm does.
var _ = Describe("When testing KCP remediation", minutes(8), func() {
	capispecs.KCPRemediationSpec(ctx, func() capispecs.KCPRemediationSpecInput {
		return capispecs.KCPRemediationSpecInput{
			E2EConfig:             e2eConfig,
			ClusterctlConfigPath:  clusterctlConfigPath,
			BootstrapClusterProxy: specProxy,
			ArtifactFolder:        artifactFolder,
			SkipCleanup:           skipCleanup,
		}
	})
})
