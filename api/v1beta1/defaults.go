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
	"time"

	corev1 "k8s.io/api/core/v1"
)

// The defaults of fields the webhook fills in. The controller and the
// renderers of hosting objects apply the same values when a field is empty
// (objects written before a default existed, or with the webhook bypassed).
const (
	// DefaultBootstrapTimeout is how long a bootstrap may run when
	// spec.bootstrapTimeout does not say.
	DefaultBootstrapTimeout = 15 * time.Minute

	// DefaultAPIServerPort is the control-plane Service's port when
	// spec.controlPlaneService.port does not say.
	DefaultAPIServerPort int32 = 6443

	// DefaultServiceType is the control-plane Service's type when
	// spec.controlPlaneService.type does not say.
	DefaultServiceType = ServiceTypeClusterIP

	// DefaultVolumeAccessMode is a volume claim template's access mode when
	// its accessModes are empty.
	DefaultVolumeAccessMode = corev1.ReadWriteOnce
)
