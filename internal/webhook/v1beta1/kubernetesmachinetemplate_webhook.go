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

// +kubebuilder:webhook:path=/mutate-infrastructure-cluster-x-k8s-io-v1beta1-kubernetesmachinetemplate,mutating=true,failurePolicy=fail,sideEffects=None,groups=infrastructure.cluster.x-k8s.io,resources=kubernetesmachinetemplates,verbs=create;update,versions=v1beta1,name=default.kubernetesmachinetemplate.infrastructure.cluster.x-k8s.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-infrastructure-cluster-x-k8s-io-v1beta1-kubernetesmachinetemplate,mutating=false,failurePolicy=fail,sideEffects=None,groups=infrastructure.cluster.x-k8s.io,resources=kubernetesmachinetemplates,verbs=create;update,versions=v1beta1,name=validation.kubernetesmachinetemplate.infrastructure.cluster.x-k8s.io,admissionReviewVersions=v1

// KubernetesMachineTemplateWebhook defaults and validates KubernetesMachineTemplates.
type KubernetesMachineTemplateWebhook struct{}

// SetupWebhookWithManager registers the webhook with the manager.
func (w *KubernetesMachineTemplateWebhook) SetupWebhookWithManager(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &infrav1.KubernetesMachineTemplate{}).WithDefaulter(w).WithValidator(w).Complete()
}

// Default sets the defaults of the template's machine spec.
func (*KubernetesMachineTemplateWebhook) Default(_ context.Context, template *infrav1.KubernetesMachineTemplate) error {
	defaultMachineSpec(&template.Spec.Template.Spec)
	return nil
}

// ValidateCreate validates a new KubernetesMachineTemplate.
func (*KubernetesMachineTemplateWebhook) ValidateCreate(_ context.Context, template *infrav1.KubernetesMachineTemplate) (admission.Warnings, error) {
	return nil, invalid("KubernetesMachineTemplate", template.Name, validateMachineTemplateSpec(&template.Spec.Template.Spec))
}

// ValidateUpdate keeps spec.template.spec immutable, except for the topology
// controller's dry-run requests.
func (*KubernetesMachineTemplateWebhook) ValidateUpdate(ctx context.Context, oldTemplate, newTemplate *infrav1.KubernetesMachineTemplate) (admission.Warnings, error) {
	errs := validateMachineTemplateSpec(&newTemplate.Spec.Template.Spec)
	dryRun, err := isTopologyDryRun(ctx, newTemplate)
	if err != nil {
		return nil, err
	}
	if !dryRun {
		oldSpec := oldTemplate.Spec.Template.Spec.DeepCopy()
		defaultMachineSpec(oldSpec) // defaults a newer provider adds are not changes
		errs = append(errs, immutable(field.NewPath("spec", "template", "spec"), *oldSpec, newTemplate.Spec.Template.Spec,
			"is immutable: create a new template and roll the machines to it")...)
	}
	return nil, invalid("KubernetesMachineTemplate", newTemplate.Name, errs)
}

// ValidateDelete allows every deletion.
func (*KubernetesMachineTemplateWebhook) ValidateDelete(context.Context, *infrav1.KubernetesMachineTemplate) (admission.Warnings, error) {
	return nil, nil
}

// validateMachineTemplateSpec checks a template's machine spec: a template
// stamps out many machines, so it cannot carry one machine's providerID.
func validateMachineTemplateSpec(spec *infrav1.KubernetesMachineSpec) field.ErrorList {
	path := field.NewPath("spec", "template", "spec")
	errs := validateMachineSpec(spec, path)
	if spec.ProviderID != "" {
		errs = append(errs, field.Forbidden(path.Child("providerID"), "must be empty in a template: every machine gets its own"))
	}
	return errs
}
