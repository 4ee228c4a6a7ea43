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
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
)

func TestValidateMachineSpec(t *testing.T) {
	quantity := resource.MustParse
	tests := []struct {
		name      string
		mutate    func(*infrav1.KubernetesMachineSpec)
		wantField string // "" means valid
	}{
		{name: "empty spec is valid", mutate: func(*infrav1.KubernetesMachineSpec) {}},
		{name: "providerID of the provider's form", mutate: func(s *infrav1.KubernetesMachineSpec) { s.ProviderID = "kubernetes://ns/pod-1" }},
		{name: "providerID of another provider", mutate: func(s *infrav1.KubernetesMachineSpec) { s.ProviderID = "aws:///i-1" }, wantField: "spec.providerID"},
		{name: "providerID without pod", mutate: func(s *infrav1.KubernetesMachineSpec) { s.ProviderID = "kubernetes://ns" }, wantField: "spec.providerID"},
		{name: "image with registry and digest", mutate: func(s *infrav1.KubernetesMachineSpec) {
			s.Image = "registry.local:5000/node@sha256:" + "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
		}},
		{name: "image with upper case", mutate: func(s *infrav1.KubernetesMachineSpec) { s.Image = "Kindest/Node" }, wantField: "spec.image"},
		{name: "limit equal to request", mutate: func(s *infrav1.KubernetesMachineSpec) {
			s.Resources = infrav1.NodeResources{Requests: corev1.ResourceList{"memory": quantity("1Gi")}, Limits: corev1.ResourceList{"memory": quantity("1Gi")}}
		}},
		{name: "limit below request", mutate: func(s *infrav1.KubernetesMachineSpec) {
			s.Resources = infrav1.NodeResources{Requests: corev1.ResourceList{"memory": quantity("2Gi")}, Limits: corev1.ResourceList{"memory": quantity("1Gi")}}
		}, wantField: "spec.resources.limits[memory]"},
		{name: "negative request", mutate: func(s *infrav1.KubernetesMachineSpec) {
			s.Resources.Requests = corev1.ResourceList{"cpu": quantity("-1")}
		}, wantField: "spec.resources.requests[cpu]"},
		{name: "bad resource name", mutate: func(s *infrav1.KubernetesMachineSpec) {
			s.Resources.Limits = corev1.ResourceList{"not a name": quantity("1")}
		}, wantField: "spec.resources.limits[not a name]"},
		{name: "bad node selector key", mutate: func(s *infrav1.KubernetesMachineSpec) { s.NodeSelector = map[string]string{"a b": "c"} }, wantField: "spec.nodeSelector"},
		{name: "toleration Exists without key", mutate: func(s *infrav1.KubernetesMachineSpec) {
			s.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
		}},
		{name: "toleration Equal without key", mutate: func(s *infrav1.KubernetesMachineSpec) {
			s.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpEqual, Value: "x"}}
		}, wantField: "spec.tolerations[0].operator"},
		{name: "toleration Exists with value", mutate: func(s *infrav1.KubernetesMachineSpec) {
			s.Tolerations = []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists, Value: "x"}}
		}, wantField: "spec.tolerations[0].value"},
		{name: "toleration value not a label value", mutate: func(s *infrav1.KubernetesMachineSpec) {
			s.Tolerations = []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpEqual, Value: "cap\uFFFD"}}
		}, wantField: "spec.tolerations[0].value"},
		{name: "toleration unknown operator", mutate: func(s *infrav1.KubernetesMachineSpec) {
			s.Tolerations = []corev1.Toleration{{Key: "k", Operator: "Gt"}}
		}, wantField: "spec.tolerations[0].operator"},
		{name: "toleration unknown effect", mutate: func(s *infrav1.KubernetesMachineSpec) {
			s.Tolerations = []corev1.Toleration{{Key: "k", Effect: "Sometimes"}}
		}, wantField: "spec.tolerations[0].effect"},
		{name: "toleration bad key", mutate: func(s *infrav1.KubernetesMachineSpec) {
			s.Tolerations = []corev1.Toleration{{Key: "-bad-"}}
		}, wantField: "spec.tolerations[0].key"},
		{name: "priority class not a name", mutate: func(s *infrav1.KubernetesMachineSpec) { s.PriorityClassName = "High" }, wantField: "spec.priorityClassName"},
		{name: "runtime class not a name", mutate: func(s *infrav1.KubernetesMachineSpec) { s.RuntimeClassName = "a_b" }, wantField: "spec.runtimeClassName"},
		{name: "pod label reserved", mutate: func(s *infrav1.KubernetesMachineSpec) {
			s.PodMetadata.Labels = map[string]string{"cluster.x-k8s.io/cluster-name": "other"}
		}, wantField: "spec.podMetadata.labels[cluster.x-k8s.io/cluster-name]"},
		{name: "pod label invalid", mutate: func(s *infrav1.KubernetesMachineSpec) {
			s.PodMetadata.Labels = map[string]string{"team": "a b"}
		}, wantField: "spec.podMetadata.labels"},
		{name: "pod annotation key invalid", mutate: func(s *infrav1.KubernetesMachineSpec) {
			s.PodMetadata.Annotations = map[string]string{"a b": "c"}
		}, wantField: "spec.podMetadata.annotations"},
		{name: "volume under /var", mutate: func(s *infrav1.KubernetesMachineSpec) {
			s.VolumeClaimTemplates = []infrav1.VolumeClaimTemplate{{Name: "etcd", MountPath: "/var/lib/etcd", Size: quantity("1Gi")}}
		}},
		{name: "volume name not a label", mutate: func(s *infrav1.KubernetesMachineSpec) {
			s.VolumeClaimTemplates = []infrav1.VolumeClaimTemplate{{Name: "Etcd", MountPath: "/data", Size: quantity("1Gi")}}
		}, wantField: "spec.volumeClaimTemplates[0].name"},
		{name: "volume hides the kubelet", mutate: func(s *infrav1.KubernetesMachineSpec) {
			s.VolumeClaimTemplates = []infrav1.VolumeClaimTemplate{{Name: "a", MountPath: "/var/lib", Size: quantity("1Gi")}}
		}, wantField: "spec.volumeClaimTemplates[0].mountPath"},
		{name: "volumes overlap each other", mutate: func(s *infrav1.KubernetesMachineSpec) {
			s.VolumeClaimTemplates = []infrav1.VolumeClaimTemplate{
				{Name: "a", MountPath: "/data", Size: quantity("1Gi")},
				{Name: "b", MountPath: "/data/b", Size: quantity("1Gi")},
			}
		}, wantField: "spec.volumeClaimTemplates[1].mountPath"},
		{name: "volume of zero size", mutate: func(s *infrav1.KubernetesMachineSpec) {
			s.VolumeClaimTemplates = []infrav1.VolumeClaimTemplate{{Name: "a", MountPath: "/data"}}
		}, wantField: "spec.volumeClaimTemplates[0].size"},
		{name: "volume storage class not a name", mutate: func(s *infrav1.KubernetesMachineSpec) {
			s.VolumeClaimTemplates = []infrav1.VolumeClaimTemplate{{Name: "a", MountPath: "/data", Size: quantity("1Gi"), StorageClassName: ptr.To("Fast SSD")}}
		}, wantField: "spec.volumeClaimTemplates[0].storageClassName"},
		{name: "volume unknown access mode", mutate: func(s *infrav1.KubernetesMachineSpec) {
			s.VolumeClaimTemplates = []infrav1.VolumeClaimTemplate{{Name: "a", MountPath: "/data", Size: quantity("1Gi"), AccessModes: []corev1.PersistentVolumeAccessMode{"ReadWriteSometimes"}}}
		}, wantField: "spec.volumeClaimTemplates[0].accessModes[0]"},
		{name: "bootstrap timeout at the lower bound", mutate: func(s *infrav1.KubernetesMachineSpec) { s.BootstrapTimeout = &metav1.Duration{Duration: time.Minute} }},
		{name: "bootstrap timeout at the upper bound", mutate: func(s *infrav1.KubernetesMachineSpec) { s.BootstrapTimeout = &metav1.Duration{Duration: 2 * time.Hour} }},
		{name: "bootstrap timeout too long", mutate: func(s *infrav1.KubernetesMachineSpec) {
			s.BootstrapTimeout = &metav1.Duration{Duration: 3 * time.Hour}
		}, wantField: "spec.bootstrapTimeout"},
		{name: "own topology spread constraint", mutate: func(s *infrav1.KubernetesMachineSpec) {
			s.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{spreadConstraint()}
		}},
		{name: "spreading together with own constraints", mutate: func(s *infrav1.KubernetesMachineSpec) {
			s.Spreading = infrav1.SpreadingNone
			s.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{spreadConstraint()}
		}, wantField: "spec.spreading"},
		{name: "spread constraint with zero skew", mutate: func(s *infrav1.KubernetesMachineSpec) {
			c := spreadConstraint()
			c.MaxSkew = 0
			s.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{c}
		}, wantField: "spec.topologySpreadConstraints[0].maxSkew"},
		{name: "spread constraint without topology key", mutate: func(s *infrav1.KubernetesMachineSpec) {
			c := spreadConstraint()
			c.TopologyKey = ""
			s.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{c}
		}, wantField: "spec.topologySpreadConstraints[0].topologyKey"},
		{name: "spread constraint with unknown whenUnsatisfiable", mutate: func(s *infrav1.KubernetesMachineSpec) {
			c := spreadConstraint()
			c.WhenUnsatisfiable = "Maybe"
			s.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{c}
		}, wantField: "spec.topologySpreadConstraints[0].whenUnsatisfiable"},
		{name: "spread constraint with minDomains and ScheduleAnyway", mutate: func(s *infrav1.KubernetesMachineSpec) {
			c := spreadConstraint()
			c.MinDomains = ptr.To[int32](2)
			s.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{c}
		}, wantField: "spec.topologySpreadConstraints[0].minDomains"},
		{name: "spread constraint with bad selector", mutate: func(s *infrav1.KubernetesMachineSpec) {
			c := spreadConstraint()
			c.LabelSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"a b": "c"}}
			s.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{c}
		}, wantField: "spec.topologySpreadConstraints[0].labelSelector"},
		{name: "spread constraint with unknown node affinity policy", mutate: func(s *infrav1.KubernetesMachineSpec) {
			c := spreadConstraint()
			c.NodeAffinityPolicy = ptr.To(corev1.NodeInclusionPolicy("Sometimes"))
			s.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{c}
		}, wantField: "spec.topologySpreadConstraints[0].nodeAffinityPolicy"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			spec := &infrav1.KubernetesMachineSpec{}
			tt.mutate(spec)
			errs := validateMachineSpec(spec, field.NewPath("spec"))
			if tt.wantField == "" {
				g.Expect(errs).To(BeEmpty())
				return
			}
			g.Expect(errs).To(HaveLen(1), errs.ToAggregate())
			g.Expect(errs[0].Field).To(HavePrefix(tt.wantField))
			g.Expect(errs[0].Detail + errs[0].Type.String()).NotTo(BeEmpty())
		})
	}
}

func TestDefaultMachineSpec(t *testing.T) {
	tests := []struct {
		name string
		spec infrav1.KubernetesMachineSpec
		want infrav1.KubernetesMachineSpec
	}{
		{
			name: "empty spec gets timeout, requests and spreading",
			want: infrav1.KubernetesMachineSpec{
				Spreading:        infrav1.SpreadingPreferred,
				BootstrapTimeout: &metav1.Duration{Duration: 15 * time.Minute},
				Resources:        infrav1.NodeResources{Requests: corev1.ResourceList{"cpu": resource.MustParse("250m"), "memory": resource.MustParse("1Gi")}},
			},
		},
		{
			name: "a limit without request gets no default request for that resource",
			spec: infrav1.KubernetesMachineSpec{
				BootstrapTimeout: &metav1.Duration{Duration: time.Hour},
				Resources:        infrav1.NodeResources{Limits: corev1.ResourceList{"memory": resource.MustParse("4Gi")}},
			},
			want: infrav1.KubernetesMachineSpec{
				Spreading:        infrav1.SpreadingPreferred,
				BootstrapTimeout: &metav1.Duration{Duration: time.Hour},
				Resources: infrav1.NodeResources{
					Requests: corev1.ResourceList{"cpu": resource.MustParse("250m")},
					Limits:   corev1.ResourceList{"memory": resource.MustParse("4Gi")},
				},
			},
		},
		{
			name: "volumes get ReadWriteOnce",
			spec: infrav1.KubernetesMachineSpec{
				Resources:            infrav1.NodeResources{Requests: corev1.ResourceList{"cpu": resource.MustParse("1"), "memory": resource.MustParse("1Gi")}},
				VolumeClaimTemplates: []infrav1.VolumeClaimTemplate{{Name: "a"}},
			},
			want: infrav1.KubernetesMachineSpec{
				Spreading:            infrav1.SpreadingPreferred,
				BootstrapTimeout:     &metav1.Duration{Duration: 15 * time.Minute},
				Resources:            infrav1.NodeResources{Requests: corev1.ResourceList{"cpu": resource.MustParse("1"), "memory": resource.MustParse("1Gi")}},
				VolumeClaimTemplates: []infrav1.VolumeClaimTemplate{{Name: "a", AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}}},
			},
		},
		{
			name: "own constraints get no spreading",
			spec: infrav1.KubernetesMachineSpec{
				BootstrapTimeout:          &metav1.Duration{Duration: time.Hour},
				Resources:                 infrav1.NodeResources{Requests: corev1.ResourceList{"cpu": resource.MustParse("1"), "memory": resource.MustParse("1Gi")}},
				TopologySpreadConstraints: []corev1.TopologySpreadConstraint{spreadConstraint()},
			},
			want: infrav1.KubernetesMachineSpec{
				BootstrapTimeout:          &metav1.Duration{Duration: time.Hour},
				Resources:                 infrav1.NodeResources{Requests: corev1.ResourceList{"cpu": resource.MustParse("1"), "memory": resource.MustParse("1Gi")}},
				TopologySpreadConstraints: []corev1.TopologySpreadConstraint{spreadConstraint()},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			spec := tt.spec.DeepCopy()
			defaultMachineSpec(spec)
			g.Expect(*spec).To(Equal(tt.want))
			defaultMachineSpec(spec)
			g.Expect(*spec).To(Equal(tt.want), "defaulting twice changes nothing")
		})
	}
}

func TestValidateClusterSpec(t *testing.T) {
	valid := func() *infrav1.KubernetesClusterSpec {
		spec := &infrav1.KubernetesClusterSpec{}
		defaultClusterSpec(spec)
		return spec
	}
	tests := []struct {
		name      string
		mutate    func(*infrav1.KubernetesClusterSpec)
		wantField string
	}{
		{name: "defaulted spec is valid", mutate: func(*infrav1.KubernetesClusterSpec) {}},
		{name: "endpoint with IP", mutate: func(s *infrav1.KubernetesClusterSpec) {
			s.ControlPlaneEndpoint.Host, s.ControlPlaneEndpoint.Port = "10.0.0.1", 6443
		}},
		{name: "endpoint with DNS name", mutate: func(s *infrav1.KubernetesClusterSpec) {
			s.ControlPlaneEndpoint.Host, s.ControlPlaneEndpoint.Port = "api.example.test", 443
		}},
		{name: "endpoint with bad host", mutate: func(s *infrav1.KubernetesClusterSpec) {
			s.ControlPlaneEndpoint.Host, s.ControlPlaneEndpoint.Port = "not a host", 443
		}, wantField: "spec.controlPlaneEndpoint.host"},
		{name: "endpoint without port", mutate: func(s *infrav1.KubernetesClusterSpec) { s.ControlPlaneEndpoint.Host = "10.0.0.1" }, wantField: "spec.controlPlaneEndpoint.port"},
		{name: "hosting without secret name", mutate: func(s *infrav1.KubernetesClusterSpec) {
			s.HostingCluster = &infrav1.HostingClusterReference{Key: "value"}
		}, wantField: "spec.hostingCluster.secretName"},
		{name: "hosting with bad key", mutate: func(s *infrav1.KubernetesClusterSpec) {
			s.HostingCluster = &infrav1.HostingClusterReference{SecretName: "a", Key: "a/b"}
		}, wantField: "spec.hostingCluster.key"},
		{name: "hosting with bad namespace", mutate: func(s *infrav1.KubernetesClusterSpec) {
			s.HostingCluster = &infrav1.HostingClusterReference{SecretName: "a", Key: "value", Namespace: "Nodes"}
		}, wantField: "spec.hostingCluster.namespace"},
		{name: "service type unknown", mutate: func(s *infrav1.KubernetesClusterSpec) { s.ControlPlaneService.Type = "ExternalName" }, wantField: "spec.controlPlaneService.type"},
		{name: "service port zero", mutate: func(s *infrav1.KubernetesClusterSpec) { s.ControlPlaneService.Port = 0 }, wantField: "spec.controlPlaneService.port"},
		{name: "service label reserved", mutate: func(s *infrav1.KubernetesClusterSpec) {
			s.ControlPlaneService.Labels = map[string]string{"infrastructure.cluster.x-k8s.io/cluster": "x"}
		}, wantField: "spec.controlPlaneService.labels[infrastructure.cluster.x-k8s.io/cluster]"},
		{name: "service annotation invalid", mutate: func(s *infrav1.KubernetesClusterSpec) {
			s.ControlPlaneService.Annotations = map[string]string{"a b": ""}
		}, wantField: "spec.controlPlaneService.annotations"},
		{name: "failure domain duplicate", mutate: func(s *infrav1.KubernetesClusterSpec) {
			s.FailureDomains = []clusterv1.FailureDomain{{Name: "a"}, {Name: "a"}}
		}, wantField: "spec.failureDomains[1].name"},
		{name: "failure domain empty name", mutate: func(s *infrav1.KubernetesClusterSpec) {
			s.FailureDomains = []clusterv1.FailureDomain{{}}
		}, wantField: "spec.failureDomains[0].name"},
		{name: "failure domain not a label value", mutate: func(s *infrav1.KubernetesClusterSpec) {
			s.FailureDomains = []clusterv1.FailureDomain{{Name: "zone a"}}
		}, wantField: "spec.failureDomains[0].name"},
		{name: "workers budget as a number", mutate: func(s *infrav1.KubernetesClusterSpec) {
			s.DisruptionBudgets.WorkersMaxUnavailable = ptr.To(intstr.FromInt32(1))
		}},
		{name: "workers budget as a percentage", mutate: func(s *infrav1.KubernetesClusterSpec) {
			s.DisruptionBudgets.WorkersMaxUnavailable = ptr.To(intstr.FromString("25%"))
		}},
		{name: "workers budget negative", mutate: func(s *infrav1.KubernetesClusterSpec) {
			s.DisruptionBudgets.WorkersMaxUnavailable = ptr.To(intstr.FromInt32(-1))
		}, wantField: "spec.disruptionBudgets.workersMaxUnavailable"},
		{name: "workers budget over 100%", mutate: func(s *infrav1.KubernetesClusterSpec) {
			s.DisruptionBudgets.WorkersMaxUnavailable = ptr.To(intstr.FromString("150%"))
		}, wantField: "spec.disruptionBudgets.workersMaxUnavailable"},
		{name: "workers budget not a percentage", mutate: func(s *infrav1.KubernetesClusterSpec) {
			s.DisruptionBudgets.WorkersMaxUnavailable = ptr.To(intstr.FromString("half"))
		}, wantField: "spec.disruptionBudgets.workersMaxUnavailable"},
		{name: "API server client by selectors", mutate: func(s *infrav1.KubernetesClusterSpec) {
			s.NetworkIsolation.APIServerClients = []networkingv1.NetworkPolicyPeer{{
				PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"cluster.x-k8s.io/cluster-name": "mgmt"}}, NamespaceSelector: &metav1.LabelSelector{},
			}}
		}},
		{name: "API server client by IP block", mutate: func(s *infrav1.KubernetesClusterSpec) {
			s.NetworkIsolation.APIServerClients = []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: "192.0.2.0/24", Except: []string{"192.0.2.8/29"}}}}
		}},
		{name: "API server client empty", mutate: func(s *infrav1.KubernetesClusterSpec) {
			s.NetworkIsolation.APIServerClients = []networkingv1.NetworkPolicyPeer{{}}
		}, wantField: "spec.networkIsolation.apiServerClients[0]"},
		{name: "API server client with selector and IP block", mutate: func(s *infrav1.KubernetesClusterSpec) {
			s.NetworkIsolation.APIServerClients = []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{}, IPBlock: &networkingv1.IPBlock{CIDR: "192.0.2.0/24"}}}
		}, wantField: "spec.networkIsolation.apiServerClients[0]"},
		{name: "API server client bad CIDR", mutate: func(s *infrav1.KubernetesClusterSpec) {
			s.NetworkIsolation.APIServerClients = []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: "192.0.2.0"}}}
		}, wantField: "spec.networkIsolation.apiServerClients[0].ipBlock.cidr"},
		{name: "API server client exception outside the block", mutate: func(s *infrav1.KubernetesClusterSpec) {
			s.NetworkIsolation.APIServerClients = []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: "192.0.2.0/24", Except: []string{"198.51.100.0/25"}}}}
		}, wantField: "spec.networkIsolation.apiServerClients[0].ipBlock.except[0]"},
		{name: "API server client bad selector", mutate: func(s *infrav1.KubernetesClusterSpec) {
			s.NetworkIsolation.APIServerClients = []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"a b": ""}}}}
		}, wantField: "spec.networkIsolation.apiServerClients[0].podSelector"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			spec := valid()
			tt.mutate(spec)
			errs := validateClusterSpec(spec, field.NewPath("spec"))
			if tt.wantField == "" {
				g.Expect(errs).To(BeEmpty())
				return
			}
			g.Expect(errs).To(HaveLen(1), errs.ToAggregate())
			g.Expect(errs[0].Field).To(HavePrefix(tt.wantField))
		})
	}
}

func TestDefaultClusterSpec(t *testing.T) {
	g := NewWithT(t)
	spec := &infrav1.KubernetesClusterSpec{HostingCluster: &infrav1.HostingClusterReference{SecretName: "a"}}
	defaultClusterSpec(spec)
	want := &infrav1.KubernetesClusterSpec{
		HostingCluster:      &infrav1.HostingClusterReference{SecretName: "a", Key: "value"},
		ControlPlaneService: infrav1.ControlPlaneService{Type: infrav1.ServiceTypeClusterIP, Port: 6443},
		DisruptionBudgets:   infrav1.DisruptionBudgets{ControlPlane: infrav1.ControlPlaneBudgetQuorum},
		NetworkIsolation:    infrav1.NetworkIsolation{Mode: infrav1.NetworkIsolationEnabled},
	}
	g.Expect(spec).To(Equal(want))
	defaultClusterSpec(spec)
	g.Expect(spec).To(Equal(want), "defaulting twice changes nothing")

	custom := &infrav1.KubernetesClusterSpec{ControlPlaneService: infrav1.ControlPlaneService{Type: infrav1.ServiceTypeNodePort, Port: 443}}
	defaultClusterSpec(custom)
	g.Expect(custom.ControlPlaneService).To(Equal(infrav1.ControlPlaneService{Type: infrav1.ServiceTypeNodePort, Port: 443}))
}

// spreadConstraint is a valid constraint of the user's own.
func spreadConstraint() corev1.TopologySpreadConstraint {
	return corev1.TopologySpreadConstraint{
		MaxSkew:           1,
		TopologyKey:       corev1.LabelHostname,
		WhenUnsatisfiable: corev1.ScheduleAnyway,
		LabelSelector:     &metav1.LabelSelector{MatchLabels: map[string]string{"cluster.x-k8s.io/cluster-name": "a"}},
	}
}

// A machine or template stored before this provider version added a default
// must stay updatable (labels, finalizers): the new default is not a change.
func TestNewDefaultsAreNotImmutableChanges(t *testing.T) {
	g := NewWithT(t)
	old := &infrav1.KubernetesMachine{Spec: infrav1.KubernetesMachineSpec{
		BootstrapTimeout: &metav1.Duration{Duration: 15 * time.Minute},
		Resources:        infrav1.NodeResources{Requests: corev1.ResourceList{"cpu": resource.MustParse("1"), "memory": resource.MustParse("1Gi")}},
	}}
	updated := old.DeepCopy()
	updated.Labels = map[string]string{"team": "a"}
	g.Expect((&KubernetesMachineWebhook{}).Default(context.Background(), updated)).To(Succeed())
	g.Expect(updated.Spec.Spreading).To(Equal(infrav1.SpreadingPreferred))
	_, err := (&KubernetesMachineWebhook{}).ValidateUpdate(context.Background(), old, updated)
	g.Expect(err).NotTo(HaveOccurred())

	updated.Spec.Spreading = infrav1.SpreadingNone
	_, err = (&KubernetesMachineWebhook{}).ValidateUpdate(context.Background(), old, updated)
	g.Expect(err).To(MatchError(ContainSubstring("is immutable")), "a real change still is one")
}

// An immutable field's error names each changed field by its path, with the
// values as a user writes them, and nothing else of the spec.
func TestImmutableNamesEachChangedField(t *testing.T) {
	quantity := resource.MustParse
	old := infrav1.KubernetesMachineSpec{
		Image:     "kindest/node:v1.36.3",
		Resources: infrav1.NodeResources{Requests: corev1.ResourceList{"cpu": quantity("100m"), "memory": quantity("1Gi")}},
	}
	path := field.NewPath("spec", "template", "spec")
	tests := []struct {
		name   string
		mutate func(*infrav1.KubernetesMachineSpec)
		want   []string // nil: no change
	}{
		{name: "the same", mutate: func(*infrav1.KubernetesMachineSpec) {}},
		{name: "a quantity written another way", mutate: func(s *infrav1.KubernetesMachineSpec) {
			s.Resources.Requests["memory"] = quantity("1024Mi")
		}},
		{name: "an empty list for none", mutate: func(s *infrav1.KubernetesMachineSpec) { s.Tolerations = []corev1.Toleration{} }},
		{name: "a quantity", mutate: func(s *infrav1.KubernetesMachineSpec) { s.Resources.Requests["cpu"] = quantity("150m") },
			want: []string{"spec.template.spec.resources.requests.cpu: 100m -> 150m"}},
		{name: "a field set and a map key removed", mutate: func(s *infrav1.KubernetesMachineSpec) {
			s.PriorityClassName = "low"
			delete(s.Resources.Requests, "memory")
		}, want: []string{
			"spec.template.spec.priorityClassName: (unset) -> low",
			"spec.template.spec.resources.requests.memory: 1Gi -> (unset)",
		}},
		{name: "a list item added", mutate: func(s *infrav1.KubernetesMachineSpec) {
			s.Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists}}
		}, want: []string{`spec.template.spec.tolerations: (unset) -> [{"key":"dedicated","operator":"Exists"}]`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			changed := *old.DeepCopy()
			tt.mutate(&changed)
			found, err := changes(path, old, changed)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(found).To(Equal(tt.want))
			errs := immutable(path, old, changed, "is immutable")
			if tt.want == nil {
				g.Expect(errs).To(BeEmpty())
				return
			}
			g.Expect(errs).To(HaveLen(1))
			g.Expect(errs[0].Error()).To(Equal("spec.template.spec: Forbidden: is immutable; changed: " + strings.Join(tt.want, "; ")))
		})
	}
}

// Many changes are listed up to maxChangesShown and counted after that; a
// long value is shortened.
func TestImmutableBoundsItsMessage(t *testing.T) {
	g := NewWithT(t)
	old := infrav1.KubernetesMachineSpec{}
	changed := infrav1.KubernetesMachineSpec{NodeSelector: map[string]string{}}
	for i := range maxChangesShown + 3 {
		changed.NodeSelector[fmt.Sprintf("key-%d", i)] = strings.Repeat("v", 2*maxValueShown)
	}
	errs := immutable(field.NewPath("spec"), old, changed, "is immutable")
	g.Expect(errs).To(HaveLen(1))
	message := errs[0].Error()
	g.Expect(message).To(ContainSubstring("spec.nodeSelector: (unset) -> {"), "a map that one side lacks is shown whole")
	g.Expect(message).To(ContainSubstring("..."))
	g.Expect(len(message)).To(BeNumerically("<", 400))

	old.NodeSelector = map[string]string{}
	for key := range changed.NodeSelector {
		old.NodeSelector[key] = "old"
	}
	message = immutable(field.NewPath("spec"), old, changed, "is immutable")[0].Error()
	g.Expect(strings.Count(message, "spec.nodeSelector.key-")).To(Equal(maxChangesShown))
	g.Expect(message).To(HaveSuffix("; and 3 more"))

	// {"team":" is 9 bytes and é 2: byte 120 falls inside a character
	changed.NodeSelector = map[string]string{"team": strings.Repeat("é", maxValueShown)}
	message = immutable(field.NewPath("spec"), infrav1.KubernetesMachineSpec{}, changed, "is immutable")[0].Error()
	g.Expect(utf8.ValidString(message)).To(BeTrue(), "a value is cut between characters, not inside one: %q", message)
	g.Expect(message).To(ContainSubstring("é..."))
}
