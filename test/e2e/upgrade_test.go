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

package e2e

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

// TestUpgrades keeps one workload cluster through both upgrades a user makes
// over months (docs/upgrade.md): the management cluster's provider goes from
// v0.1, which stored v1alpha1, to the current release with `clusterctl
// upgrade apply`, and the cluster, created through v1alpha1 at the previous
// Kubernetes minor, is rolled to the current one.
//
// It replaces the environment's provider with v0.1, so it needs a management
// cluster without provider objects: it runs after the lifecycle test, which
// deletes its clusters, and leaves the current release installed.
func TestUpgrades(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Minute)
	defer cancel()
	g := NewWithT(t)
	previous := env.settings["KUBERNETES_PREVIOUS_NODE_IMAGE"]
	g.Expect(previous).NotTo(BeEmpty(), "no node image of the previous Kubernetes minor: test/infra/env.sh up "+
		"builds it unless CAPK_PREVIOUS_KUBERNETES=0")

	installPreviousRelease(ctx, t, g)
	namespace := newNamespace(ctx, t, g)
	installPodnet(ctx, g, namespace)
	w := createClusterAsV1alpha1(ctx, t, g, namespace, "upgrade")
	t.Cleanup(func() {
		if t.Failed() {
			dumpDiagnostics(context.Background(), t, w)
		}
	})
	w.waitAvailable(ctx, t, g, 15*time.Minute)
	g.Eventually(func(g Gomega) { w.expectNodesReady(ctx, g, 2) }).
		WithTimeout(5 * time.Minute).WithPolling(5 * time.Second).Should(Succeed())

	t.Run("clusterctl upgrade apply to the current release loses no object and touches no node Pod", func(t *testing.T) {
		expectProviderUpgrade(ctx, t, NewWithT(t), w)
	})
	t.Run("rolling the cluster to the next Kubernetes minor keeps its API reachable", func(t *testing.T) {
		expectKubernetesUpgrade(ctx, t, NewWithT(t), w)
	})
	t.Run("delete the cluster, leaving nothing on the hosting cluster", func(t *testing.T) {
		deleteCluster(ctx, t, NewWithT(t), w)
	})
}
