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
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/internal/bootstrap"
)

const apiServerPortName = "apiserver"

// NewBootstrapSecret renders the immutable Secret that carries the machine's
// bootstrap script into the node.
func NewBootstrapSecret(m Node, script []byte) *corev1.Secret {
	return &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: m.objectMeta(BootstrapSecretName(m.podName())),
		Type:       corev1.SecretTypeOpaque,
		Immutable:  ptr.To(true),
		Data:       map[string][]byte{bootstrap.ScriptKey: script},
	}
}

// NewPersistentVolumeClaims renders one claim per volume claim template of the machine.
func NewPersistentVolumeClaims(m Node) []*corev1.PersistentVolumeClaim {
	claims := make([]*corev1.PersistentVolumeClaim, 0, len(m.Spec.VolumeClaimTemplates))
	for _, template := range m.Spec.VolumeClaimTemplates {
		claims = append(claims, newClaim(m, *template.DeepCopy()))
	}
	return claims
}

// newClaim renders the claim of one template; accessModes default to
// infrav1.DefaultVolumeAccessMode.
func newClaim(m Node, template infrav1.VolumeClaimTemplate) *corev1.PersistentVolumeClaim {
	accessModes := template.AccessModes
	if len(accessModes) == 0 {
		accessModes = []corev1.PersistentVolumeAccessMode{infrav1.DefaultVolumeAccessMode}
	}
	return &corev1.PersistentVolumeClaim{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"},
		ObjectMeta: m.objectMeta(ClaimName(m.podName(), template.Name)),
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      accessModes,
			StorageClassName: template.StorageClassName,
			Resources: corev1.VolumeResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceStorage: template.Size},
			},
		},
	}
}

// NewService renders the Service that selects a cluster's control-plane node
// Pods and is the workload cluster's API endpoint.
func NewService(c Workload, service infrav1.ControlPlaneService) *corev1.Service {
	serviceType := corev1.ServiceType(service.Type)
	if serviceType == "" {
		serviceType = corev1.ServiceType(infrav1.DefaultServiceType)
	}
	port := service.Port
	if port == 0 {
		port = infrav1.DefaultAPIServerPort
	}
	meta := c.ObjectMeta(ServiceName(c.Name))
	meta.Labels = withProviderLabels(service.Labels, meta.Labels)
	meta.Annotations = withOwnerAnnotations(service.Annotations, c.Owner())
	return &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: meta,
		Spec: corev1.ServiceSpec{
			Type: serviceType,
			Ports: []corev1.ServicePort{{
				Name:       apiServerPortName,
				Protocol:   corev1.ProtocolTCP,
				Port:       port,
				TargetPort: intstr.FromInt32(apiServerPort),
			}},
			Selector:                 ControlPlaneSelector(c.Namespace, c.Name),
			PublishNotReadyAddresses: false,
		},
	}
}
