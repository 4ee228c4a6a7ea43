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
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/apitesting/fuzzer"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	runtimeserializer "k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	utilconversion "sigs.k8s.io/cluster-api/util/conversion"
	"sigs.k8s.io/randfill"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
)

func testScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := infrav1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	return scheme
}

// spokeFuzzerFuncs normalise the v1alpha1 values that have no distinct hub value:
// an empty providerID is the same as none.
func spokeFuzzerFuncs(_ runtimeserializer.CodecFactory) []interface{} {
	return []interface{}{
		func(in *KubernetesMachineSpec, c randfill.Continue) {
			c.FillNoCustom(in)
			if in.ProviderID != nil && *in.ProviderID == "" {
				in.ProviderID = nil
			}
		},
	}
}

func TestFuzzyConversion(t *testing.T) {
	scheme := testScheme(t)
	funcs := []fuzzer.FuzzerFuncs{spokeFuzzerFuncs}
	t.Run("for KubernetesCluster", utilconversion.FuzzTestFunc(utilconversion.FuzzTestFuncInput{
		Scheme: scheme, Hub: &infrav1.KubernetesCluster{}, Spoke: &KubernetesCluster{}, FuzzerFuncs: funcs,
	}))
	t.Run("for KubernetesClusterTemplate", utilconversion.FuzzTestFunc(utilconversion.FuzzTestFuncInput{
		Scheme: scheme, Hub: &infrav1.KubernetesClusterTemplate{}, Spoke: &KubernetesClusterTemplate{}, FuzzerFuncs: funcs,
	}))
	t.Run("for KubernetesMachine", utilconversion.FuzzTestFunc(utilconversion.FuzzTestFuncInput{
		Scheme: scheme, Hub: &infrav1.KubernetesMachine{}, Spoke: &KubernetesMachine{}, FuzzerFuncs: funcs,
	}))
	t.Run("for KubernetesMachineTemplate", utilconversion.FuzzTestFunc(utilconversion.FuzzTestFuncInput{
		Scheme: scheme, Hub: &infrav1.KubernetesMachineTemplate{}, Spoke: &KubernetesMachineTemplate{}, FuzzerFuncs: funcs,
	}))
}

func TestListConversionConvertsEveryItem(t *testing.T) {
	g := NewWithT(t)
	spoke := &KubernetesMachineList{Items: []KubernetesMachine{
		{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Status: KubernetesMachineStatus{Ready: true}},
		{ObjectMeta: metav1.ObjectMeta{Name: "b"}, Spec: KubernetesMachineSpec{ProviderID: ptr.To("kubernetes://ns/b")}},
	}}
	hub := &infrav1.KubernetesMachineList{}
	g.Expect(spoke.ConvertTo(hub)).To(Succeed())
	g.Expect(hub.Items).To(HaveLen(2))
	g.Expect(hub.Items[0].Status.Initialization.Provisioned).To(Equal(ptr.To(true)))
	g.Expect(hub.Items[1].Spec.ProviderID).To(Equal("kubernetes://ns/b"))

	back := &KubernetesMachineList{}
	g.Expect(back.ConvertFrom(hub)).To(Succeed())
	g.Expect(back.Items[0].Status.Ready).To(BeTrue())
	g.Expect(back.Items[1].Spec.ProviderID).To(Equal(ptr.To("kubernetes://ns/b")))
}

func TestReadyMapsToProvisioned(t *testing.T) {
	tests := []struct {
		name            string
		ready           bool
		wantProvisioned *bool
	}{
		{name: "ready becomes provisioned", ready: true, wantProvisioned: ptr.To(true)},
		{name: "not ready leaves provisioned unset", ready: false, wantProvisioned: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			cluster := &infrav1.KubernetesCluster{}
			g.Expect((&KubernetesCluster{Status: KubernetesClusterStatus{Ready: tt.ready}}).ConvertTo(cluster)).To(Succeed())
			g.Expect(cluster.Status.Initialization.Provisioned).To(Equal(tt.wantProvisioned))

			machine := &infrav1.KubernetesMachine{}
			g.Expect((&KubernetesMachine{Status: KubernetesMachineStatus{Ready: tt.ready}}).ConvertTo(machine)).To(Succeed())
			g.Expect(machine.Status.Initialization.Provisioned).To(Equal(tt.wantProvisioned))
		})
	}
}

func TestProvisionedMapsToReady(t *testing.T) {
	tests := []struct {
		name        string
		provisioned *bool
		wantReady   bool
	}{
		{name: "provisioned is ready", provisioned: ptr.To(true), wantReady: true},
		{name: "explicitly not provisioned is not ready", provisioned: ptr.To(false), wantReady: false},
		{name: "unset is not ready", provisioned: nil, wantReady: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			cluster := &KubernetesCluster{}
			hubCluster := &infrav1.KubernetesCluster{}
			hubCluster.Status.Initialization.Provisioned = tt.provisioned
			g.Expect(cluster.ConvertFrom(hubCluster)).To(Succeed())
			g.Expect(cluster.Status.Ready).To(Equal(tt.wantReady))

			machine := &KubernetesMachine{}
			hubMachine := &infrav1.KubernetesMachine{}
			hubMachine.Status.Initialization.Provisioned = tt.provisioned
			g.Expect(machine.ConvertFrom(hubMachine)).To(Succeed())
			g.Expect(machine.Status.Ready).To(Equal(tt.wantReady))
		})
	}
}

func TestFailureDomainMapConvertsToSortedList(t *testing.T) {
	g := NewWithT(t)
	spoke := &KubernetesCluster{
		Spec: KubernetesClusterSpec{FailureDomains: FailureDomains{
			"zone-b": {ControlPlane: false, Attributes: map[string]string{"rack": "2"}},
			"zone-a": {ControlPlane: true},
		}},
		Status: KubernetesClusterStatus{FailureDomains: FailureDomains{"zone-c": {ControlPlane: true}}},
	}
	hub := &infrav1.KubernetesCluster{}
	g.Expect(spoke.ConvertTo(hub)).To(Succeed())
	g.Expect(hub.Spec.FailureDomains).To(Equal([]clusterv1.FailureDomain{
		{Name: "zone-a", ControlPlane: ptr.To(true)},
		{Name: "zone-b", Attributes: map[string]string{"rack": "2"}},
	}))
	g.Expect(hub.Status.FailureDomains).To(Equal([]clusterv1.FailureDomain{{Name: "zone-c", ControlPlane: ptr.To(true)}}))

	back := &KubernetesCluster{}
	g.Expect(back.ConvertFrom(hub)).To(Succeed())
	g.Expect(back.Spec.FailureDomains).To(Equal(spoke.Spec.FailureDomains))
	g.Expect(back.Status.FailureDomains).To(Equal(spoke.Status.FailureDomains))
}

func TestFlatServiceTypeMapsToControlPlaneService(t *testing.T) {
	g := NewWithT(t)
	hub := &infrav1.KubernetesCluster{}
	g.Expect((&KubernetesCluster{Spec: KubernetesClusterSpec{ControlPlaneServiceType: "NodePort"}}).ConvertTo(hub)).To(Succeed())
	g.Expect(hub.Spec.ControlPlaneService.Type).To(Equal(infrav1.ServiceTypeNodePort))

	hub.Spec.ControlPlaneService = infrav1.ControlPlaneService{Type: infrav1.ServiceTypeLoadBalancer, Port: 443, Labels: map[string]string{"a": "b"}}
	spoke := &KubernetesCluster{}
	g.Expect(spoke.ConvertFrom(hub)).To(Succeed())
	g.Expect(spoke.Spec.ControlPlaneServiceType).To(Equal(ServiceType("LoadBalancer")))

	// A v1alpha1 client changes the type; the hub-only port and labels survive.
	spoke.Spec.ControlPlaneServiceType = "ClusterIP"
	again := &infrav1.KubernetesCluster{}
	g.Expect(spoke.ConvertTo(again)).To(Succeed())
	g.Expect(again.Spec.ControlPlaneService).To(Equal(infrav1.ControlPlaneService{
		Type: infrav1.ServiceTypeClusterIP, Port: 443, Labels: map[string]string{"a": "b"},
	}))
}

func TestHubOnlyFieldsSurviveSpokeRoundTrip(t *testing.T) {
	g := NewWithT(t)
	hub := &infrav1.KubernetesMachine{Spec: infrav1.KubernetesMachineSpec{
		Image:             "kindest/node:v1.36.3",
		PriorityClassName: "nodes",
		RuntimeClassName:  "runc",
		PodMetadata:       infrav1.PodMetadata{Labels: map[string]string{"team": "a"}},
	}}
	hub.Status.FailureDomain = "zone-a"
	spoke := &KubernetesMachine{}
	g.Expect(spoke.ConvertFrom(hub.DeepCopy())).To(Succeed())
	g.Expect(spoke.Annotations).To(HaveKey(utilconversion.DataAnnotation))

	back := &infrav1.KubernetesMachine{}
	g.Expect(spoke.ConvertTo(back)).To(Succeed())
	g.Expect(back.Spec).To(Equal(hub.Spec))
	g.Expect(back.Status.FailureDomain).To(Equal("zone-a"))
	g.Expect(back.Annotations).NotTo(HaveKey(utilconversion.DataAnnotation))
}

func TestSpokeOnlyFailureFieldsSurviveHubRoundTrip(t *testing.T) {
	g := NewWithT(t)
	spoke := &KubernetesMachine{Status: KubernetesMachineStatus{
		FailureReason: ptr.To("CreateError"), FailureMessage: ptr.To("pod rejected"),
	}}
	hub := &infrav1.KubernetesMachine{}
	g.Expect(spoke.ConvertTo(hub)).To(Succeed())
	g.Expect(hub.Annotations).To(HaveKey(FailureAnnotation))

	back := &KubernetesMachine{}
	g.Expect(back.ConvertFrom(hub)).To(Succeed())
	g.Expect(back.Status.FailureReason).To(Equal(ptr.To("CreateError")))
	g.Expect(back.Status.FailureMessage).To(Equal(ptr.To("pod rejected")))
	g.Expect(back.Annotations).NotTo(HaveKey(FailureAnnotation))
	g.Expect(hub.Annotations).To(HaveKey(FailureAnnotation), "reading the hub must not change it")
}
