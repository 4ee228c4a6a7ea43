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
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
)

func TestBootstrapSecretIsAnImmutableOpaqueSecretOfTheMachine(t *testing.T) {
	g := NewWithT(t)
	m := testMachine(true)
	secret := NewBootstrapSecret(m, []byte("#!/bin/bash\n"))

	g.Expect(secret.Name).To(Equal("wl-cp-abcde-bootstrap"))
	g.Expect(secret.Namespace).To(Equal("hosting-ns"))
	g.Expect(secret.Labels).To(Equal(MachineLabels("mgmt-ns", "wl", "wl-cp-abcde", true)))
	g.Expect(secret.OwnerReferences).To(BeEmpty())
	g.Expect(secret.Type).To(Equal(corev1.SecretTypeOpaque))
	g.Expect(secret.Immutable).To(Equal(ptr.To(true)))
	g.Expect(secret.Data).To(Equal(map[string][]byte{"bootstrap.sh": []byte("#!/bin/bash\n")}))
}

func TestPersistentVolumeClaimsFollowTheTemplates(t *testing.T) {
	g := NewWithT(t)
	m := testMachine(false)
	m.Spec.VolumeClaimTemplates[0].StorageClassName = ptr.To("fast")
	m.Spec.VolumeClaimTemplates[0].AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOncePod}
	claims := NewPersistentVolumeClaims(m)

	g.Expect(claims).To(HaveLen(2))
	tests := []struct {
		name             string
		claim            *corev1.PersistentVolumeClaim
		wantName         string
		wantSize         string
		wantStorageClass *string
		wantAccessModes  []corev1.PersistentVolumeAccessMode
	}{
		{name: "explicit class and access modes", claim: claims[0], wantName: "wl-cp-abcde-etcd", wantSize: "10Gi",
			wantStorageClass: ptr.To("fast"), wantAccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOncePod}},
		{name: "defaults", claim: claims[1], wantName: "wl-cp-abcde-data", wantSize: "1Gi",
			wantStorageClass: nil, wantAccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(tt.claim.Name).To(Equal(tt.wantName))
			g.Expect(tt.claim.Namespace).To(Equal("hosting-ns"))
			g.Expect(tt.claim.Labels).To(Equal(MachineLabels("mgmt-ns", "wl", "wl-cp-abcde", false)))
			g.Expect(tt.claim.OwnerReferences).To(BeEmpty())
			g.Expect(tt.claim.Spec.StorageClassName).To(Equal(tt.wantStorageClass))
			g.Expect(tt.claim.Spec.AccessModes).To(Equal(tt.wantAccessModes))
			g.Expect(tt.claim.Spec.Resources.Requests).To(Equal(corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(tt.wantSize)}))
		})
	}

	*claims[0].Spec.StorageClassName = "changed"
	g.Expect(*m.Spec.VolumeClaimTemplates[0].StorageClassName).To(Equal("fast"), "claims do not alias the spec")
}

func TestMachineWithoutTemplatesHasNoClaims(t *testing.T) {
	g := NewWithT(t)
	m := testMachine(false)
	m.Spec.VolumeClaimTemplates = nil
	g.Expect(NewPersistentVolumeClaims(m)).To(BeEmpty())
}

func TestServiceSelectsTheControlPlaneOnPort6443(t *testing.T) {
	tests := []struct {
		name     string
		service  infrav1.ControlPlaneService
		wantType corev1.ServiceType
		wantPort int32
	}{
		{name: "defaults", service: infrav1.ControlPlaneService{}, wantType: corev1.ServiceTypeClusterIP, wantPort: 6443},
		{name: "load balancer on 443", service: infrav1.ControlPlaneService{Type: infrav1.ServiceTypeLoadBalancer, Port: 443},
			wantType: corev1.ServiceTypeLoadBalancer, wantPort: 443},
		{name: "node port", service: infrav1.ControlPlaneService{Type: infrav1.ServiceTypeNodePort, Port: 6443},
			wantType: corev1.ServiceTypeNodePort, wantPort: 6443},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			service := NewService(Workload{Namespace: "mgmt-ns", Name: "wl", HostingNamespace: "hosting-ns"}, tt.service)

			g.Expect(service.Name).To(Equal("wl-apiserver"))
			g.Expect(service.Namespace).To(Equal("hosting-ns"))
			g.Expect(service.OwnerReferences).To(BeEmpty())
			g.Expect(service.Spec.Type).To(Equal(tt.wantType))
			g.Expect(service.Spec.Ports).To(Equal([]corev1.ServicePort{{
				Name: "apiserver", Protocol: corev1.ProtocolTCP, Port: tt.wantPort, TargetPort: intstr.FromInt32(6443),
			}}))
			g.Expect(service.Spec.Selector).To(Equal(ControlPlaneSelector("mgmt-ns", "wl")))
			g.Expect(service.Spec.PublishNotReadyAddresses).To(BeFalse())
		})
	}
}

func TestServiceUserLabelsNeverOverrideProviderLabels(t *testing.T) {
	g := NewWithT(t)
	service := NewService(Workload{Namespace: "mgmt-ns", Name: "wl", HostingNamespace: "hosting-ns"}, infrav1.ControlPlaneService{
		Labels:      map[string]string{"team": "ci", infrav1.ManagedByLabel: "someone-else"},
		Annotations: map[string]string{"service.beta.kubernetes.io/aws-load-balancer-internal": "true"},
	})

	want := ClusterLabels("mgmt-ns", "wl")
	want["team"] = "ci"
	g.Expect(service.Labels).To(Equal(want))
	g.Expect(service.Annotations).To(Equal(map[string]string{
		"service.beta.kubernetes.io/aws-load-balancer-internal": "true", infrav1.ClusterNameAnnotation: "wl",
	}))
}
