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

// +kubebuilder:webhook:path=/mutate-infrastructure-cluster-x-k8s-io-v1beta1-kubernetesmachine,mutating=true,failurePolicy=fail,sideEffects=None,groups=infrastructure.cluster.x-k8s.io,resources=kubernetesmachines,verbs=create;update,versions=v1beta1,name=default.kubernetesmachine.infrastructure.cluster.x-k8s.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-infrastructure-cluster-x-k8s-io-v1beta1-kubernetesmachine,mutating=false,failurePolicy=fail,sideEffects=None,groups=infrastructure.cluster.x-k8s.io,resources=kubernetesmachines,verbs=create;update,versions=v1beta1,name=validation.kubernetesmachine.infrastructure.cluster.x-k8s.io,admissionReviewVersions=v1

// KubernetesMachineWebhook defaults and validates KubernetesMachines.
type KubernetesMachineWebhook struct{}

// SetupWebhookWithManager registers the webhook with the manager.
func (w *KubernetesMachineWebhook) SetupWebhookWithManager(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &infrav1.KubernetesMachine{}).WithDefaulter(w).WithValidator(w).Complete()
}

// Default sets the defaults of a KubernetesMachine.
func (*KubernetesMachineWebhook) Default(_ context.Context, machine *infrav1.KubernetesMachine) error {
	defaultMachineSpec(&machine.Spec)
	return nil
}

// ValidateCreate validates a new KubernetesMachine.
func (*KubernetesMachineWebhook) ValidateCreate(_ context.Context, machine *infrav1.KubernetesMachine) (admission.Warnings, error) {
	return nil, invalid("KubernetesMachine", machine.Name, validateMachineSpec(&machine.Spec, field.NewPath("spec")))
}

// ValidateUpdate keeps the spec immutable, except that providerID may be set once.
func (*KubernetesMachineWebhook) ValidateUpdate(_ context.Context, oldMachine, newMachine *infrav1.KubernetesMachine) (admission.Warnings, error) {
	path := field.NewPath("spec")
	errs := validateMachineSpec(&newMachine.Spec, path)
	oldSpec := oldMachine.Spec.DeepCopy()
	// A default a newer provider adds to a machine created before it is not a change.
	defaultMachineSpec(oldSpec)
	if oldSpec.ProviderID == "" {
		oldSpec.ProviderID = newMachine.Spec.ProviderID
	}
	errs = append(errs, immutable(path, *oldSpec, newMachine.Spec,
		"is immutable except that providerID may be set once: Machines are replaced, not changed")...)
	return nil, invalid("KubernetesMachine", newMachine.Name, errs)
}

// ValidateDelete allows every deletion.
func (*KubernetesMachineWebhook) ValidateDelete(context.Context, *infrav1.KubernetesMachine) (admission.Warnings, error) {
	return nil, nil
}
