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
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/cluster-api/test/framework"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
)

// expectNothingLeftBehind is the PostNamespaceCreated of every spec: for the
// spec's namespace on the management cluster it registers a check that runs
// after the spec has deleted its clusters (a DeferCleanup of a BeforeEach runs
// after the AfterEach nodes): nothing the provider made for them is left on
// the hosting cluster. Cluster API's specs look only at the management
// cluster's objects.
func expectNothingLeftBehind(proxy framework.ClusterProxy, namespace string) {
	if proxy.GetName() != bootstrapClusterProxy.GetName() || skipCleanup {
		return
	}
	DeferCleanup(func() {
		By("Checking that nothing of the namespace's clusters is left on the hosting cluster")
		Eventually(func(g Gomega) {
			g.Expect(hostingObjectsOf(namespace)).To(BeEmpty())
		}).WithTimeout(2 * time.Minute).WithPolling(5 * time.Second).Should(Succeed())
	})
}

// hostingObjectsOf lists, in every namespace of the hosting cluster, the
// objects the provider labelled as made for clusters of the management
// cluster's namespace: node Pods, bootstrap Secrets, Services, claims, budgets
// and NetworkPolicies.
func hostingObjectsOf(namespace string) ([]string, error) {
	selector := client.MatchingLabels{
		infrav1.ManagedByLabel:        infrav1.ManagedByValue,
		infrav1.ClusterNamespaceLabel: namespace,
	}
	lists := map[string]client.ObjectList{
		"Pod": &corev1.PodList{}, "Secret": &corev1.SecretList{}, "Service": &corev1.ServiceList{},
		"PersistentVolumeClaim": &corev1.PersistentVolumeClaimList{},
		"PodDisruptionBudget":   &policyv1.PodDisruptionBudgetList{}, "NetworkPolicy": &networkingv1.NetworkPolicyList{},
	}
	var found []string
	for kind, list := range lists {
		if err := bootstrapClusterProxy.GetClient().List(ctx, list, selector); err != nil {
			return nil, err
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			return nil, err
		}
		for _, item := range items {
			obj := item.(client.Object)
			found = append(found, kind+" "+obj.GetNamespace()+"/"+obj.GetName())
		}
	}
	return found, nil
}
