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

// +kubebuilder:webhook:path=/mutate-infrastructure-cluster-x-k8s-io-v1beta1-kubernetesclustertemplate,mutating=true,failurePolicy=fail,sideEffects=None,groups=infrastructure.cluster.x-k8s.io,resources=kubernetesclustertemplates,verbs=create;update,versions=v1beta1,name=default.kubernetesclustertemplate.infrastructure.cluster.x-k8s.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-infrastructure-cluster-x-k8s-io-v1beta1-kubernetesclustertemplate,mutating=false,failurePolicy=fail,sideEffects=None,groups=infrastructure.cluster.x-k8s.io,resources=kubernetesclustertemplates,verbs=create;update,versions=v1beta1,name=validation.kubernetesclustertemplate.infrastructure.cluster.x-k8s.io,admissionReviewVersions=v1

// KubernetesClusterTemplateWebhook defaults and validates KubernetesClusterTemplates.
type KubernetesClusterTemplateWebhook struct{}

// SetupWebhookWithManager registers the webhook with the manager.
func (w *KubernetesClusterTemplateWebhook) SetupWebhookWithManager(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &infrav1.KubernetesClusterTemplate{}).WithDefaulter(w).WithValidator(w).Complete()
}

// Default sets the defaults of the template's cluster spec.
func (*KubernetesClusterTemplateWebhook) Default(_ context.Context, template *infrav1.KubernetesClusterTemplate) error {
	defaultClusterSpec(&template.Spec.Template.Spec)
	return nil
}

// ValidateCreate validates a new KubernetesClusterTemplate.
func (*KubernetesClusterTemplateWebhook) ValidateCreate(_ context.Context, template *infrav1.KubernetesClusterTemplate) (admission.Warnings, error) {
	errs := validateClusterSpec(&template.Spec.Template.Spec, field.NewPath("spec", "template", "spec"))
	return nil, invalid("KubernetesClusterTemplate", template.Name, errs)
}

// ValidateUpdate keeps spec.template.spec immutable, except for the topology
// controller's dry-run requests.
func (*KubernetesClusterTemplateWebhook) ValidateUpdate(ctx context.Context, oldTemplate, newTemplate *infrav1.KubernetesClusterTemplate) (admission.Warnings, error) {
	path := field.NewPath("spec", "template", "spec")
	errs := validateClusterSpec(&newTemplate.Spec.Template.Spec, path)
	dryRun, err := isTopologyDryRun(ctx, newTemplate)
	if err != nil {
		return nil, err
	}
	if !dryRun {
		oldSpec := oldTemplate.Spec.Template.Spec.DeepCopy()
		defaultClusterSpec(oldSpec) // defaults a newer provider adds are not changes
		errs = append(errs, immutable(path, *oldSpec, newTemplate.Spec.Template.Spec,
			"is immutable: create a new template and point the Cluster or ClusterClass at it")...)
	}
	return nil, invalid("KubernetesClusterTemplate", newTemplate.Name, errs)
}

// ValidateDelete allows every deletion.
func (*KubernetesClusterTemplateWebhook) ValidateDelete(context.Context, *infrav1.KubernetesClusterTemplate) (admission.Warnings, error) {
	return nil, nil
}
