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

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/internal/nodepod"
)

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
	for _, kind := range nodepod.Kinds {
		list := kind.NewList()
		if err := c.List(ctx, list, opts...); err != nil {
			return "", fmt.Errorf("listing %ss: %w", kind.Name, err)
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
