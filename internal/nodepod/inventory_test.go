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

package nodepod

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
)

func TestKindsNameTheirObjectsAndLists(t *testing.T) {
	g := NewWithT(t)
	scheme := runtime.NewScheme()
	g.Expect(clientgoscheme.AddToScheme(scheme)).To(Succeed())
	for _, kind := range Kinds {
		gvks, _, err := scheme.ObjectKinds(kind.New())
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(gvks[0].Kind).To(Equal(kind.Name))
		lists, _, err := scheme.ObjectKinds(kind.NewList())
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(lists[0].Kind).To(Equal(kind.Name+"List"), "the list of %s", kind.Name)
		g.Expect(KindName(kind.New())).To(Equal(kind.Name))
	}
	g.Expect(KindName(&corev1.ConfigMap{})).To(Equal("*v1.ConfigMap"), "not a hosting kind")
}

func TestObjectsSelectByScope(t *testing.T) {
	g := NewWithT(t)
	names := func(scopes ...Scope) []string {
		var got []string
		for _, obj := range Objects(scopes...) {
			got = append(got, KindName(obj))
		}
		return got
	}
	g.Expect(names(MachineScoped)).To(Equal([]string{"Pod", "Secret", "PersistentVolumeClaim"}))
	g.Expect(names(ClusterScoped)).To(Equal([]string{"Service", "PodDisruptionBudget", "NetworkPolicy"}))
	g.Expect(names()).To(HaveLen(len(Kinds)))
}

func TestHostingObjectsOfAMachineAndACluster(t *testing.T) {
	g := NewWithT(t)
	keys := func(objects []client.Object) []string {
		var got []string
		for _, obj := range objects {
			got = append(got, KindName(obj)+" "+obj.GetNamespace()+"/"+obj.GetName())
		}
		return got
	}
	m := Node{Name: "w-1", Namespace: "default", ClusterName: "c", HostingNamespace: "hosting",
		Spec: infrav1.KubernetesMachineSpec{VolumeClaimTemplates: []infrav1.VolumeClaimTemplate{{Name: "data"}}}}
	pod := PodName(m.Name)
	g.Expect(keys(m.NodeObjects())).To(Equal([]string{"Pod hosting/" + pod, "Secret hosting/" + BootstrapSecretName(pod)}))
	g.Expect(keys(m.Objects())).To(Equal([]string{"Pod hosting/" + pod, "Secret hosting/" + BootstrapSecretName(pod),
		"PersistentVolumeClaim hosting/" + ClaimName(pod, "data")}))

	c := Workload{Namespace: "default", Name: "c", HostingNamespace: "hosting", OwnerID: "id"}
	g.Expect(keys(c.Objects())).To(Equal([]string{"Service hosting/" + ServiceName("c"),
		"PodDisruptionBudget hosting/" + ControlPlaneBudgetName("c"), "PodDisruptionBudget hosting/" + WorkersBudgetName("c"),
		"NetworkPolicy hosting/" + NetworkPolicyName("c")}))
	for _, obj := range c.Objects() {
		g.Expect(c.Owner().Owns(obj)).To(BeTrue(), "%s carries the owner's labels", obj.GetName())
	}
}
