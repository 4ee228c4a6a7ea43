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
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/test/framework"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/test/envtest"
)

// leftoverCheckingProxy is the management cluster's proxy as the specs get
// it. Cluster API's specs look only at the management cluster; with this
// proxy, when a spec deletes its namespace (after it has deleted its
// clusters), it first checks that nothing the provider made for the
// namespace's clusters is left on the hosting cluster. It checks before the
// namespace goes, as node Pods of the default flavors live in that namespace
// and its deletion would remove them anyway.
type leftoverCheckingProxy struct {
	framework.ClusterProxy
	// beforeClusterDelete, when set, is a spec's own check before a Cluster is deleted.
	beforeClusterDelete func()
}

func (p leftoverCheckingProxy) GetClient() client.Client {
	return leftoverCheckingClient{Client: p.ClusterProxy.GetClient(), beforeClusterDelete: p.beforeClusterDelete}
}

type leftoverCheckingClient struct {
	client.Client
	beforeClusterDelete func()
}

func (c leftoverCheckingClient) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	if cluster, ok := obj.(*clusterv1.Cluster); ok {
		recordMachinesOfFailedSpec(ctx, c.Client, cluster)
		if c.beforeClusterDelete != nil {
			c.beforeClusterDelete()
		}
	}
	if _, ok := obj.(*corev1.Namespace); ok {
		By("Checking that nothing of namespace " + obj.GetName() + "'s clusters is left on the hosting cluster")
		expectNothingLeft(func() (string, error) { return hostingObjectsOf(c.Client, obj.GetName()) })
	}
	return c.Client.Delete(ctx, obj, opts...)
}

// expectNothingLeft waits until leftovers (envtest's description of the
// provider's objects a selection finds on the hosting cluster) is empty: the
// provider deletes them in the background once a cluster is gone.
func expectNothingLeft(leftovers func() (string, error)) {
	Eventually(leftovers).WithTimeout(2 * time.Minute).WithPolling(5 * time.Second).Should(BeEmpty())
}

// hostingObjectsOf describes, in every namespace of the hosting cluster, the
// objects of every kind the provider creates there that it labelled as made
// for clusters of the management cluster's namespace.
func hostingObjectsOf(c client.Client, namespace string) (string, error) {
	return envtest.LeftoversMatching(ctx, c, client.MatchingLabels{
		infrav1.ManagedByLabel:        infrav1.ManagedByValue,
		infrav1.ClusterNamespaceLabel: namespace,
	})
}
