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

// Package v1beta1 holds the defaulting and validating webhooks of the
// infrastructure.cluster.x-k8s.io/v1beta1 kinds. Older versions are converted to
// v1beta1 before these webhooks see them.
package v1beta1

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/cluster-api/util/topology"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
)

// invalid turns field errors into the API's Invalid error for the object, or nil.
func invalid(kind string, name string, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(schema.GroupKind{Group: infrav1.GroupVersion.Group, Kind: kind}, name, errs)
}

// immutable reports a change of an immutable field, naming each field that
// changed with its old and new value (see changes).
func immutable(path *field.Path, oldValue, newValue any, why string) field.ErrorList {
	found, err := changes(path, oldValue, newValue)
	if err != nil {
		return field.ErrorList{field.InternalError(path, fmt.Errorf("comparing with the stored object: %w", err))}
	}
	if len(found) == 0 {
		return nil
	}
	return field.ErrorList{field.Forbidden(path, fmt.Sprintf("%s; changed: %s", why, changeSummary(found)))}
}

// isTopologyDryRun tells whether the request is the Cluster API topology
// controller's server-side-apply dry run, which may change immutable template fields.
func isTopologyDryRun(ctx context.Context, obj client.Object) (bool, error) {
	req, err := admission.RequestFromContext(ctx)
	if err != nil {
		return false, apierrors.NewBadRequest(fmt.Sprintf("expected an admission request in the context: %v", err))
	}
	return topology.IsDryRunRequest(req, obj), nil
}

// SetupWebhooksWithManager registers the defaulting, validating and conversion
// webhooks of every kind with the manager.
func SetupWebhooksWithManager(mgr ctrl.Manager) error {
	for _, setup := range []func(ctrl.Manager) error{
		(&KubernetesClusterWebhook{}).SetupWebhookWithManager,
		(&KubernetesClusterTemplateWebhook{}).SetupWebhookWithManager,
		(&KubernetesMachineWebhook{}).SetupWebhookWithManager,
		(&KubernetesMachineTemplateWebhook{}).SetupWebhookWithManager,
	} {
		if err := setup(mgr); err != nil {
			return err
		}
	}
	return nil
}
