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

var _ = Describe("When testing MachineDeployment scale out/in", minutes(3), func() {
	capispecs.MachineDeploymentScaleSpec(ctx, func() capispecs.MachineDeploymentScaleSpecInput {
		return capispecs.MachineDeploymentScaleSpecInput{
			E2EConfig:             e2eConfig,
			ClusterctlConfigPath:  clusterctlConfigPath,
			BootstrapClusterProxy: specProxy,
			ArtifactFolder:        artifactFolder,
			SkipCleanup:           skipCleanup,
		}
	})
})

var _ = Describe("When testing MachineDeployment remediation", minutes(4), func() {
	capispecs.MachineDeploymentRemediationSpec(ctx, func() capispecs.MachineDeploymentRemediationSpecInput {
		return capispecs.MachineDeploymentRemediationSpecInput{
			E2EConfig:             e2eConfig,
			ClusterctlConfigPath:  clusterctlConfigPath,
			BootstrapClusterProxy: specProxy,
			ArtifactFolder:        artifactFolder,
			SkipCleanup:           skipCleanup,
		}
	})
})
