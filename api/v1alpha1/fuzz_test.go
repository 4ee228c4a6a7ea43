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

package v1alpha1

import (
	"encoding/json"
	"maps"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilconversion "sigs.k8s.io/cluster-api/util/conversion"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/conversion"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/test/fuzzseed"
)

// The fuzz targets decode any JSON both as the v1alpha1 and as the v1beta1
// object and check that both round trips lose nothing: v1alpha1 → hub →
// v1alpha1 and hub → v1alpha1 → hub. Plain "go test" runs the seeds
// (testdata/*.json); `make fuzz` runs each target for a bounded time.

func FuzzKubernetesMachineConversion(f *testing.F) {
	fuzzseed.AddFiles(f, filepath.Join("testdata", "*.json"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if spoke := (&KubernetesMachine{}); decode(data, spoke) {
			if spoke.Spec.ProviderID != nil && *spoke.Spec.ProviderID == "" {
				spoke.Spec.ProviderID = nil // v1beta1 has no distinct empty providerID
			}
			expectSpokeRoundTrip(t, spoke, &infrav1.KubernetesMachine{}, &KubernetesMachine{})
		}
		if hub := (&infrav1.KubernetesMachine{}); decode(data, hub) {
			expectHubRoundTrip(t, hub, &KubernetesMachine{}, &infrav1.KubernetesMachine{})
		}
	})
}

func FuzzKubernetesClusterConversion(f *testing.F) {
	fuzzseed.AddFiles(f, filepath.Join("testdata", "*.json"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if spoke := (&KubernetesCluster{}); decode(data, spoke) {
			expectSpokeRoundTrip(t, spoke, &infrav1.KubernetesCluster{}, &KubernetesCluster{})
		}
		if hub := (&infrav1.KubernetesCluster{}); decode(data, hub) {
			expectHubRoundTrip(t, hub, &KubernetesCluster{}, &infrav1.KubernetesCluster{})
		}
	})
}

// decode unmarshals data into obj, without its apiVersion and kind (the
// conversion webhook sets those, not ConvertTo and ConvertFrom), and drops the
// annotations only conversion writes: a user who sets them by hand gets what
// they wrote restored, which is not a round trip of the object.
func decode(data []byte, obj client.Object) bool {
	if json.Unmarshal(data, obj) != nil {
		return false
	}
	obj.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	withoutAnnotations(obj, utilconversion.DataAnnotation, FailureAnnotation)
	return true
}

func expectSpokeRoundTrip(t *testing.T, spoke conversion.Convertible, hub conversion.Hub, after conversion.Convertible) {
	t.Helper()
	before := spoke.DeepCopyObject()
	if err := spoke.ConvertTo(hub); err != nil {
		t.Fatalf("v1alpha1 to hub: %v", err)
	}
	if err := after.ConvertFrom(hub); err != nil {
		t.Fatalf("hub to v1alpha1: %v", err)
	}
	// ConvertFrom keeps the hub-only fields in an annotation of the v1alpha1 object.
	expectEqual(t, "v1alpha1 → hub → v1alpha1", before, withoutAnnotations(after.(client.Object), utilconversion.DataAnnotation))
}

func expectHubRoundTrip(t *testing.T, hub conversion.Hub, spoke conversion.Convertible, after conversion.Hub) {
	t.Helper()
	before := hub.DeepCopyObject()
	if err := spoke.ConvertFrom(hub); err != nil {
		t.Fatalf("hub to v1alpha1: %v", err)
	}
	if err := spoke.ConvertTo(after); err != nil {
		t.Fatalf("v1alpha1 to hub: %v", err)
	}
	expectEqual(t, "hub → v1alpha1 → hub", before, after)
}

// withoutAnnotations removes the annotations from obj (no annotations left is
// none at all, as after decoding) and returns it.
func withoutAnnotations(obj client.Object, keys ...string) client.Object {
	annotations := maps.Clone(obj.GetAnnotations())
	for _, key := range keys {
		delete(annotations, key)
	}
	if len(annotations) == 0 {
		annotations = nil
	}
	obj.SetAnnotations(annotations)
	return obj
}

func expectEqual(t *testing.T, trip string, before, after runtime.Object) {
	t.Helper()
	if !apiequality.Semantic.DeepEqual(before, after) {
		t.Fatalf("%s is lossy (-before +after):\n%s", trip, cmp.Diff(before, after))
	}
}
