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

package envtest

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
)

// HostingObjectLists are empty lists of every kind the provider creates on a
// hosting cluster; a test lists them to find what was left behind.
func HostingObjectLists() []client.ObjectList {
	return []client.ObjectList{
		&corev1.PodList{}, &corev1.SecretList{}, &corev1.ServiceList{}, &corev1.PersistentVolumeClaimList{},
		&policyv1.PodDisruptionBudgetList{}, &networkingv1.NetworkPolicyList{},
	}
}

// Leftovers describes the provider's objects in a hosting namespace, one line
// per object; "" when there are none.
func Leftovers(ctx context.Context, c client.Reader, namespace string) (string, error) {
	return LeftoversMatching(ctx, c, client.InNamespace(namespace),
		client.MatchingLabels{infrav1.ManagedByLabel: infrav1.ManagedByValue})
}

// LeftoversMatching describes the objects of every hosting kind that the list
// options select, one line per object; "" when there are none.
func LeftoversMatching(ctx context.Context, c client.Reader, opts ...client.ListOption) (string, error) {
	var found string
	for _, list := range HostingObjectLists() {
		if err := c.List(ctx, list, opts...); err != nil {
			return "", fmt.Errorf("listing %T: %w", list, err)
		}
		items, err := apimeta.ExtractList(list)
		if err != nil {
			return "", err
		}
		for _, item := range items {
			if obj, ok := item.(client.Object); ok {
				found += fmt.Sprintf("%T %s/%s\n", obj, obj.GetNamespace(), obj.GetName())
			}
		}
	}
	return found, nil
}
