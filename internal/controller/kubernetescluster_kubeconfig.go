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

// The finalizer and label that keep a hosting kubeconfig Secret while a KubernetesCluster uses it.

package controller

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	clusterctlv1 "sigs.k8s.io/cluster-api/cmd/clusterctl/api/v1alpha3"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/internal/hosting"
)

// KubeconfigFinalizer keeps a hosting kubeconfig Secret while a KubernetesCluster
// still needs it to delete its hosting objects.
const KubeconfigFinalizer = "infrastructure.cluster.x-k8s.io/hosting-kubeconfig"

// protectKubeconfigSecret labels the kubeconfig Secret so it is watched and moves
// with the cluster under clusterctl move, and adds a finalizer so it cannot be
// deleted while the cluster still needs it.
func (r *KubernetesClusterReconciler) protectKubeconfigSecret(ctx context.Context, kc *infrav1.KubernetesCluster) error {
	if kc.Spec.HostingCluster == nil || !kc.DeletionTimestamp.IsZero() {
		return nil
	}
	secret := &corev1.Secret{}
	key := client.ObjectKey{Namespace: kc.Namespace, Name: kc.Spec.HostingCluster.SecretName}
	err := r.Client.Get(ctx, key, secret)
	if apierrors.IsNotFound(err) {
		// Not labelled yet, so not in the cache: read it once from the API server.
		err = r.APIReader.Get(ctx, key, secret)
	}
	if apierrors.IsNotFound(err) {
		return nil // the registry reports the missing Secret as a condition
	}
	if err != nil {
		return fmt.Errorf("reading Secret %s: %w", key, err)
	}
	return r.labelKubeconfigSecret(ctx, secret, kc)
}

func (r *KubernetesClusterReconciler) labelKubeconfigSecret(ctx context.Context, secret *corev1.Secret, kc *infrav1.KubernetesCluster) error {
	_, labelled := secret.Labels[hosting.KubeconfigLabel]
	_, movable := secret.Labels[clusterctlv1.ClusterctlMoveLabel]
	_, cached := secret.Labels[clusterv1.ClusterNameLabel]
	if labelled && movable && cached && controllerutil.ContainsFinalizer(secret, KubeconfigFinalizer) {
		return nil
	}
	original := secret.DeepCopy()
	if secret.Labels == nil {
		secret.Labels = map[string]string{}
	}
	secret.Labels[hosting.KubeconfigLabel] = "true"
	secret.Labels[clusterctlv1.ClusterctlMoveLabel] = ""
	if !cached {
		secret.Labels[clusterv1.ClusterNameLabel] = clusterNameOf(kc)
	}
	controllerutil.AddFinalizer(secret, KubeconfigFinalizer)
	if err := r.Client.Patch(ctx, secret, client.MergeFrom(original)); err != nil {
		return fmt.Errorf("labelling Secret %s: %w", klog.KObj(secret), err)
	}
	return nil
}

// releaseKubeconfigSecret drops the Secret's finalizer once no other
// KubernetesCluster of the namespace uses it.
func (r *KubernetesClusterReconciler) releaseKubeconfigSecret(ctx context.Context, kc *infrav1.KubernetesCluster) error {
	if kc.Spec.HostingCluster == nil {
		return nil
	}
	users := &infrav1.KubernetesClusterList{}
	if err := r.Client.List(ctx, users, client.InNamespace(kc.Namespace), client.MatchingFields{hostingSecretIndex: kc.Spec.HostingCluster.SecretName}); err != nil {
		return fmt.Errorf("listing KubernetesClusters using Secret %s: %w", kc.Spec.HostingCluster.SecretName, err)
	}
	for _, user := range users.Items {
		if user.Name != kc.Name {
			return nil
		}
	}
	secret := &corev1.Secret{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: kc.Namespace, Name: kc.Spec.HostingCluster.SecretName}, secret); err != nil {
		return client.IgnoreNotFound(err)
	}
	original := secret.DeepCopy()
	if !controllerutil.RemoveFinalizer(secret, KubeconfigFinalizer) {
		return nil
	}
	return client.IgnoreNotFound(r.Client.Patch(ctx, secret, client.MergeFrom(original)))
}
