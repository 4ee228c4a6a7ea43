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

package v1beta1

import (
	"context"

	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
)

// +kubebuilder:webhook:path=/mutate-infrastructure-cluster-x-k8s-io-v1beta1-kubernetescluster,mutating=true,failurePolicy=fail,sideEffects=None,groups=infrastructure.cluster.x-k8s.io,resources=kubernetesclusters,verbs=create;update,versions=v1beta1,name=default.kubernetescluster.infrastructure.cluster.x-k8s.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-infrastructure-cluster-x-k8s-io-v1beta1-kubernetescluster,mutating=false,failurePolicy=fail,sideEffects=None,groups=infrastructure.cluster.x-k8s.io,resources=kubernetesclusters,verbs=create;update,versions=v1beta1,name=validation.kubernetescluster.infrastructure.cluster.x-k8s.io,admissionReviewVersions=v1

// KubernetesClusterWebhook defaults and validates KubernetesClusters.
type KubernetesClusterWebhook struct{}

// SetupWebhookWithManager registers the webhook with the manager.
func (w *KubernetesClusterWebhook) SetupWebhookWithManager(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &infrav1.KubernetesCluster{}).WithDefaulter(w).WithValidator(w).Complete()
}

// Default sets the defaults of a KubernetesCluster.
func (*KubernetesClusterWebhook) Default(_ context.Context, cluster *infrav1.KubernetesCluster) error {
	defaultClusterSpec(&cluster.Spec)
	return nil
}

// ValidateCreate validates a new KubernetesCluster.
func (*KubernetesClusterWebhook) ValidateCreate(_ context.Context, cluster *infrav1.KubernetesCluster) (admission.Warnings, error) {
	return nil, invalid("KubernetesCluster", cluster.Name, validateClusterSpec(&cluster.Spec, field.NewPath("spec")))
}

// ValidateUpdate validates a changed KubernetesCluster: the hosting cluster never
// changes and the control-plane endpoint changes only from unset to set.
func (*KubernetesClusterWebhook) ValidateUpdate(_ context.Context, oldCluster, newCluster *infrav1.KubernetesCluster) (admission.Warnings, error) {
	spec := field.NewPath("spec")
	errs := validateClusterSpec(&newCluster.Spec, spec)
	errs = append(errs, immutable(spec.Child("hostingCluster"), oldCluster.Spec.HostingCluster, newCluster.Spec.HostingCluster,
		"is immutable: node Pods cannot move to another hosting cluster")...)
	if oldCluster.Spec.ControlPlaneEndpoint.IsValid() {
		errs = append(errs, immutable(spec.Child("controlPlaneEndpoint"), oldCluster.Spec.ControlPlaneEndpoint, newCluster.Spec.ControlPlaneEndpoint,
			"is immutable once set: workload nodes and kubeconfigs use it")...)
	}
	return nil, invalid("KubernetesCluster", newCluster.Name, errs)
}

// ValidateDelete allows every deletion.
func (*KubernetesClusterWebhook) ValidateDelete(context.Context, *infrav1.KubernetesCluster) (admission.Warnings, error) {
	return nil, nil
}
