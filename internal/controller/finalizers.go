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

// Finalizers: each kind's path-qualified finalizer, put in the place of the
// name releases before v0.2 wrote.

package controller

import (
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
)

var (
	clusterFinalizers = finalizers{current: infrav1.ClusterFinalizer, legacy: infrav1.LegacyClusterFinalizer}
	machineFinalizers = finalizers{current: infrav1.MachineFinalizer, legacy: infrav1.LegacyMachineFinalizer}
)

// finalizers are a kind's finalizer and the name it had before v0.2.
type finalizers struct{ current, legacy string }

// names are both names, for the writer: an object being deleted that still
// carries either is still the reconciler's to write.
func (f finalizers) names() []string { return []string{f.current, f.legacy} }

// held tells whether obj carries the current finalizer and not the legacy one,
// so that nothing is left to write.
func (f finalizers) held(obj client.Object) bool {
	return controllerutil.ContainsFinalizer(obj, f.current) && !controllerutil.ContainsFinalizer(obj, f.legacy)
}

// add puts the current finalizer on obj, in the legacy one's place.
func (f finalizers) add(obj client.Object) {
	controllerutil.RemoveFinalizer(obj, f.legacy)
	controllerutil.AddFinalizer(obj, f.current)
}

// remove takes both names off obj: an object deleted before the provider
// replaced the legacy name must not keep it forever.
func (f finalizers) remove(obj client.Object) {
	controllerutil.RemoveFinalizer(obj, f.legacy)
	controllerutil.RemoveFinalizer(obj, f.current)
}
