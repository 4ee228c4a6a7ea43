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

package admission_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/internal/nodepod"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/test/fuzzseed"
)

// FuzzKubernetesMachineAdmission sends any JSON machine spec through the real
// admission path of a KubernetesMachine (CRD schema, defaulting and
// validating webhooks; a server-side dry run). A rejection must be a clear
// one about a spec field; an accepted spec must render a node Pod and claims
// that the API server accepts too, so that no invalid spec gets past
// admission to fail later on the hosting cluster. Plain "go test" runs the
// seeds (testdata/machine-spec-*.json); `make fuzz` runs it for a while.
func FuzzKubernetesMachineAdmission(f *testing.F) {
	fuzzseed.AddFiles(f, filepath.Join("testdata", "machine-spec-*.json"))
	f.Fuzz(func(t *testing.T, data []byte) {
		machine := &infrav1.KubernetesMachine{ObjectMeta: metav1.ObjectMeta{Namespace: fuzzNamespace(t), Name: "fuzz"}}
		if json.Unmarshal(data, &machine.Spec) != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := env.Client.Create(ctx, machine, client.DryRunAll); err != nil {
			if ctx.Err() != nil {
				t.Fatalf("admission did not answer in 20 s: %v\nspec: %s", err, data)
			}
			expectClearRejection(t, err)
			return
		}
		expectReferencedClassesCreatable(t, machine.Spec)
		for _, obj := range renderHostingObjects(machine) {
			if err := env.Client.Create(ctx, obj, client.DryRunAll); err != nil {
				t.Fatalf("an admitted spec renders a %T the API server rejects: %v\nspec: %s", obj, err, data)
			}
		}
	})
}

var (
	fuzzNamespaceOnce sync.Once
	fuzzNamespaceName = "fuzz"
)

// fuzzNamespace creates, once per process, the namespace the dry runs use.
func fuzzNamespace(t *testing.T) string {
	fuzzNamespaceOnce.Do(func() {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fuzzNamespaceName}}
		if err := env.Client.Create(context.Background(), ns); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	})
	return fuzzNamespaceName
}

// expectClearRejection fails unless err is the API server refusing the object
// for a reason that names a field of the spec.
func expectClearRejection(t *testing.T, err error) {
	t.Helper()
	if !apierrors.IsInvalid(err) && !apierrors.IsBadRequest(err) && !apierrors.IsForbidden(err) {
		t.Fatalf("not a rejection of the object: %v", err)
	}
	if !strings.Contains(err.Error(), "spec") {
		t.Fatalf("the rejection names no spec field: %v", err)
	}
}

// expectReferencedClassesCreatable creates the PriorityClass and the
// RuntimeClass an admitted spec names, as a hosting cluster that runs it must
// hold them: the names the webhook accepts must be names the API server
// accepts.
func expectReferencedClassesCreatable(t *testing.T, spec infrav1.KubernetesMachineSpec) {
	t.Helper()
	var objects []client.Object
	if spec.PriorityClassName != "" {
		objects = append(objects, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: spec.PriorityClassName}, Value: 1000})
	}
	if spec.RuntimeClassName != "" {
		objects = append(objects, &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: spec.RuntimeClassName}, Handler: "runc"})
	}
	for _, obj := range objects {
		if err := env.Client.Create(context.Background(), obj); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("an admitted spec names a %T the API server rejects: %v", obj, err)
		}
	}
}

// renderHostingObjects renders the node Pod and the claims of an admitted
// (defaulted) machine, as the controller would in its own namespace.
func renderHostingObjects(machine *infrav1.KubernetesMachine) []client.Object {
	image := machine.Spec.Image
	if image == "" {
		image = nodepod.ImageForVersion("v1.36.3")
	}
	m := nodepod.Node{Name: machine.Name, Namespace: machine.Namespace, ClusterName: "fuzz",
		Spec: machine.Spec, HostingNamespace: machine.Namespace, Image: image}
	objects := []client.Object{nodepod.NewPod(m)}
	for _, claim := range nodepod.NewPersistentVolumeClaims(m) {
		objects = append(objects, claim)
	}
	return objects
}
