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

// Cluster API v1.14 has no MachineDeploymentRolloutSpec any more: this spec is
// its successor, a rollout of the workers by a new infrastructure template
// after in-place changes (labels, annotations, taints) that must replace no
// machine.
var _ = Describe("When testing KCP and MachineDeployment rolling upgrades and in-place taint propagation", minutes(5), func() {
	capispecs.KCPAndMachineDeploymentRolloutSpec(ctx, func() capispecs.KCPAndMachineDeploymentRolloutSpecInput {
		return capispecs.KCPAndMachineDeploymentRolloutSpecInput{
			E2EConfig:             e2eConfig,
			ClusterctlConfigPath:  clusterctlConfigPath,
			BootstrapClusterProxy: specProxy,
			ArtifactFolder:        artifactFolder,
			SkipCleanup:           skipCleanup,
			Flavor:                "kcp-md-taints",
		}
	})
})
