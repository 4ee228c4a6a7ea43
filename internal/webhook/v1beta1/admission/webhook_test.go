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
	"fmt"
	"os"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1alpha1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1alpha1"
	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/test/envtest"
)

var (
	env        *envtest.Environment
	namespaces atomic.Int32
)

func TestMain(m *testing.M) {
	var err error
	env, err = envtest.Start(envtest.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	if code == 0 {
		if err := checkRejectionDocs(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	os.Exit(code)
}

// newNamespace creates a namespace of the test's own.
func newNamespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("webhook-%d", namespaces.Add(1))}}
	if err := env.Client.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

// kindOf names an object's kind from its Go type.
func kindOf(obj client.Object) string {
	return reflect.TypeOf(obj).Elem().Name()
}

func validMachine(namespace, name string) *infrav1.KubernetesMachine {
	return &infrav1.KubernetesMachine{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: infrav1.KubernetesMachineSpec{
			Image: "kindest/node:v1.36.3",
			Resources: infrav1.NodeResources{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
				Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")},
			},
			VolumeClaimTemplates: []infrav1.VolumeClaimTemplate{{Name: "etcd", MountPath: "/var/lib/etcd", Size: resource.MustParse("1Gi")}},
		},
	}
}

func TestInvalidObjectsAreRejectedWithTheFieldPath(t *testing.T) {
	ns := newNamespace(t)
	tests := []struct {
		name     string
		object   client.Object
		wantPath string
		wantWhy  string
	}{
		{
			name: "limit below request",
			object: func() client.Object {
				m := validMachine(ns, "limit-below-request")
				m.Spec.Resources.Limits[corev1.ResourceCPU] = resource.MustParse("500m")
				return m
			}(),
			wantPath: "spec.resources.limits[cpu]", wantWhy: "must not be below the request 1",
		},
		{
			name: "volume over the node's /var",
			object: func() client.Object {
				m := validMachine(ns, "mount-over-var")
				m.Spec.VolumeClaimTemplates[0].MountPath = "/var"
				return m
			}(),
			wantPath: "spec.volumeClaimTemplates[0].mountPath", wantWhy: "is a path the node mounts for itself",
		},
		{
			name: "relative mount path",
			object: func() client.Object {
				m := validMachine(ns, "relative-mount")
				m.Spec.VolumeClaimTemplates[0].MountPath = "data"
				return m
			}(),
			wantPath: "spec.volumeClaimTemplates[0].mountPath", wantWhy: "should match '^/'",
		},
		{
			name: "bootstrap timeout too short",
			object: func() client.Object {
				m := validMachine(ns, "short-timeout")
				m.Spec.BootstrapTimeout = &metav1.Duration{Duration: 10e9}
				return m
			}(),
			wantPath: "spec.bootstrapTimeout", wantWhy: "must be between 1m0s and 2h0m0s",
		},
		{
			name: "bad image reference",
			object: func() client.Object {
				m := validMachine(ns, "bad-image")
				m.Spec.Image = "Not An Image"
				return m
			}(),
			wantPath: "spec.image", wantWhy: "must be a container image reference",
		},
		{
			name: "reserved pod label",
			object: func() client.Object {
				m := validMachine(ns, "reserved-label")
				m.Spec.PodMetadata.Labels = map[string]string{"infrastructure.cluster.x-k8s.io/machine": "other"}
				return m
			}(),
			wantPath: "spec.podMetadata.labels[infrastructure.cluster.x-k8s.io/machine]", wantWhy: "is set by the provider",
		},
		{
			name: "providerID in a template",
			object: &infrav1.KubernetesMachineTemplate{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "template-provider-id"},
				Spec: infrav1.KubernetesMachineTemplateSpec{Template: infrav1.KubernetesMachineTemplateResource{
					Spec: infrav1.KubernetesMachineSpec{ProviderID: "kubernetes://ns/pod"},
				}},
			},
			wantPath: "spec.template.spec.providerID", wantWhy: "must be empty in a template",
		},
		{
			name: "unknown service type",
			object: &infrav1.KubernetesCluster{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bad-service-type"},
				Spec:       infrav1.KubernetesClusterSpec{ControlPlaneService: infrav1.ControlPlaneService{Type: "ExternalName"}},
			},
			wantPath: "spec.controlPlaneService.type", wantWhy: `supported values: "ClusterIP", "NodePort", "LoadBalancer"`,
		},
		{
			name: "port out of range",
			object: &infrav1.KubernetesClusterTemplate{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bad-port"},
				Spec: infrav1.KubernetesClusterTemplateSpec{Template: infrav1.KubernetesClusterTemplateResource{
					Spec: infrav1.KubernetesClusterSpec{ControlPlaneService: infrav1.ControlPlaneService{Port: 70000}},
				}},
			},
			wantPath: "spec.template.spec.controlPlaneService.port", wantWhy: "should be less than or equal to 65535",
		},
		{
			name: "hosting Secret name that is not a name",
			object: &infrav1.KubernetesCluster{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bad-hosting"},
				Spec:       infrav1.KubernetesClusterSpec{HostingCluster: &infrav1.HostingClusterReference{SecretName: "other-namespace/kubeconfig"}},
			},
			wantPath: "spec.hostingCluster.secretName", wantWhy: "a lowercase RFC 1123 subdomain",
		},
		{
			name: "spreading together with own spread constraints",
			object: func() client.Object {
				m := validMachine(ns, "spreading-and-constraints")
				m.Spec.Spreading = infrav1.SpreadingPreferred
				m.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "kubernetes.io/hostname", WhenUnsatisfiable: corev1.ScheduleAnyway}}
				return m
			}(),
			wantPath: "spec.spreading", wantWhy: "must be empty when topologySpreadConstraints is set",
		},
		{
			name: "spread constraint with zero skew",
			object: func() client.Object {
				m := validMachine(ns, "zero-skew")
				m.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 0, TopologyKey: "kubernetes.io/hostname", WhenUnsatisfiable: corev1.ScheduleAnyway}}
				return m
			}(),
			wantPath: "spec.topologySpreadConstraints[0].maxSkew", wantWhy: "must be at least 1",
		},
		{
			name: "workers budget not a number or percentage",
			object: &infrav1.KubernetesCluster{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bad-workers-budget"},
				Spec:       infrav1.KubernetesClusterSpec{DisruptionBudgets: infrav1.DisruptionBudgets{WorkersMaxUnavailable: ptr.To(intstr.FromString("most"))}},
			},
			wantPath: "spec.disruptionBudgets.workersMaxUnavailable", wantWhy: "must be a number or a percentage",
		},
		{
			name: "API server client with selector and IP block",
			object: &infrav1.KubernetesCluster{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bad-api-client"},
				Spec: infrav1.KubernetesClusterSpec{NetworkIsolation: infrav1.NetworkIsolation{APIServerClients: []networkingv1.NetworkPolicyPeer{{
					PodSelector: &metav1.LabelSelector{}, IPBlock: &networkingv1.IPBlock{CIDR: "192.0.2.0/24"},
				}}}},
			},
			wantPath: "spec.networkIsolation.apiServerClients[0]", wantWhy: "not both",
		},
		{
			name: "unknown network isolation mode",
			object: &infrav1.KubernetesCluster{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bad-isolation-mode"},
				Spec:       infrav1.KubernetesClusterSpec{NetworkIsolation: infrav1.NetworkIsolation{Mode: "Strict"}},
			},
			wantPath: "spec.networkIsolation.mode", wantWhy: `supported values: "Enabled", "Disabled"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			err := env.Client.Create(context.Background(), tt.object)
			g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want Invalid, got %v", err)
			g.Expect(err.Error()).To(ContainSubstring(tt.wantPath))
			g.Expect(err.Error()).To(ContainSubstring(tt.wantWhy))
			recordRejection(kindOf(tt.object), tt.name, err)
		})
	}
}

func TestValidObjectsAreAccepted(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	ctx := context.Background()
	g.Expect(env.Client.Create(ctx, validMachine(ns, "valid"))).To(Succeed())
	g.Expect(env.Client.Create(ctx, &infrav1.KubernetesCluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "valid"},
		Spec: infrav1.KubernetesClusterSpec{
			HostingCluster:      &infrav1.HostingClusterReference{SecretName: "hosting-kubeconfig"},
			ControlPlaneService: infrav1.ControlPlaneService{Type: infrav1.ServiceTypeNodePort},
			FailureDomains:      []clusterv1.FailureDomain{{Name: "zone-a", ControlPlane: ptr.To(true)}},
		},
	})).To(Succeed())
}

func TestMachineSpecIsImmutableExceptProviderIDSetOnce(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	machine := validMachine(newNamespace(t), "immutable")
	g.Expect(env.Client.Create(ctx, machine)).To(Succeed())

	changed := machine.DeepCopy()
	changed.Spec.Image = "kindest/node:v1.35.0"
	err := env.Client.Update(ctx, changed)
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want Invalid, got %v", err)
	g.Expect(err.Error()).To(ContainSubstring("spec: Forbidden: is immutable"))
	g.Expect(err.Error()).To(ContainSubstring("changed: spec.image: kindest/node:v1.36.3 -> kindest/node:v1.35.0"),
		"the message names the field that changed, and only it")
	g.Expect(err.Error()).NotTo(ContainSubstring("resources"))
	recordRejection("KubernetesMachine", "spec changed after creation", err)

	machine.Spec.ProviderID = "kubernetes://" + machine.Namespace + "/immutable"
	g.Expect(env.Client.Update(ctx, machine)).To(Succeed(), "providerID may be set once")

	machine.Spec.ProviderID = "kubernetes://" + machine.Namespace + "/other"
	err = env.Client.Update(ctx, machine)
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want Invalid, got %v", err)
	g.Expect(err.Error()).To(ContainSubstring("providerID can be set once and never changed"))
	recordRejection("KubernetesMachine", "providerID changed once set", err)
}

func TestMachineTemplateIsImmutableExceptTopologyDryRun(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	template := &infrav1.KubernetesMachineTemplate{
		ObjectMeta: metav1.ObjectMeta{Namespace: newNamespace(t), Name: "workers"},
		Spec: infrav1.KubernetesMachineTemplateSpec{Template: infrav1.KubernetesMachineTemplateResource{
			Spec: infrav1.KubernetesMachineSpec{Image: "kindest/node:v1.36.3"},
		}},
	}
	g.Expect(env.Client.Create(ctx, template)).To(Succeed())

	template.Spec.Template.Spec.Image = "kindest/node:v1.35.0"
	err := env.Client.Update(ctx, template.DeepCopy())
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want Invalid, got %v", err)
	g.Expect(err.Error()).To(ContainSubstring("spec.template.spec: Forbidden: is immutable"))
	recordRejection("KubernetesMachineTemplate", "template changed after creation", err)

	err = env.Client.Update(ctx, template.DeepCopy(), client.DryRunAll)
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "a dry run without the topology annotation is still checked, got %v", err)

	template.Annotations = map[string]string{clusterv1.TopologyDryRunAnnotation: ""}
	g.Expect(env.Client.Update(ctx, template.DeepCopy(), client.DryRunAll)).To(Succeed(), "the topology controller's dry run passes")
}

func TestClusterTemplateIsImmutable(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	template := &infrav1.KubernetesClusterTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: newNamespace(t), Name: "cluster"}}
	g.Expect(env.Client.Create(ctx, template)).To(Succeed())
	template.Spec.Template.Spec.ControlPlaneService.Type = infrav1.ServiceTypeNodePort
	err := env.Client.Update(ctx, template)
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want Invalid, got %v", err)
	g.Expect(err.Error()).To(ContainSubstring("spec.template.spec: Forbidden: is immutable"))
	g.Expect(err.Error()).To(ContainSubstring("changed: spec.template.spec.controlPlaneService.type: ClusterIP -> NodePort"))
	recordRejection("KubernetesClusterTemplate", "template changed after creation", err)
}

func TestClusterHostingAndSetEndpointCannotChange(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	cluster := &infrav1.KubernetesCluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: newNamespace(t), Name: "cluster"},
		Spec:       infrav1.KubernetesClusterSpec{HostingCluster: &infrav1.HostingClusterReference{SecretName: "a"}},
	}
	g.Expect(env.Client.Create(ctx, cluster)).To(Succeed())

	changed := cluster.DeepCopy()
	changed.Spec.HostingCluster.SecretName = "b"
	err := env.Client.Update(ctx, changed)
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want Invalid, got %v", err)
	g.Expect(err.Error()).To(ContainSubstring("hostingCluster cannot be added, removed or changed"))
	recordRejection("KubernetesCluster", "hosting cluster changed", err)

	cluster.Spec.ControlPlaneEndpoint = clusterv1.APIEndpoint{Host: "10.0.0.1", Port: 6443}
	g.Expect(env.Client.Update(ctx, cluster)).To(Succeed(), "an unset endpoint may be set")

	cluster.Spec.ControlPlaneEndpoint.Host = "10.0.0.2"
	err = env.Client.Update(ctx, cluster)
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want Invalid, got %v", err)
	g.Expect(err.Error()).To(ContainSubstring("controlPlaneEndpoint cannot change once set"))
	recordRejection("KubernetesCluster", "control-plane endpoint changed once set", err)
}

func TestV1alpha1ObjectReadsAsV1beta1(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	old := &infrav1alpha1.KubernetesCluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: newNamespace(t), Name: "old"},
		Spec: infrav1alpha1.KubernetesClusterSpec{
			ControlPlaneServiceType: "NodePort",
			FailureDomains:          infrav1alpha1.FailureDomains{"zone-b": {}, "zone-a": {ControlPlane: true}},
		},
	}
	g.Expect(env.Client.Create(ctx, old)).To(Succeed())
	old.Status = infrav1alpha1.KubernetesClusterStatus{Ready: true, FailureMessage: ptr.To("quota exhausted")}
	g.Expect(env.Client.Status().Update(ctx, old)).To(Succeed())

	hub := &infrav1.KubernetesCluster{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(old), hub)).To(Succeed())
	g.Expect(hub.Spec.ControlPlaneService.Type).To(Equal(infrav1.ServiceTypeNodePort))
	g.Expect(hub.Spec.ControlPlaneService.Port).To(Equal(infrav1.DefaultAPIServerPort), "hub-only fields get their defaults")
	g.Expect(hub.Spec.FailureDomains).To(Equal([]clusterv1.FailureDomain{{Name: "zone-a", ControlPlane: ptr.To(true)}, {Name: "zone-b"}}))
	g.Expect(hub.Status.Initialization.Provisioned).To(Equal(ptr.To(true)))

	again := &infrav1alpha1.KubernetesCluster{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(old), again)).To(Succeed())
	g.Expect(again.Spec).To(Equal(old.Spec))
	g.Expect(again.Status.Ready).To(BeTrue())
	g.Expect(again.Status.FailureMessage).To(Equal(ptr.To("quota exhausted")), "v1alpha1-only fields survive storage as v1beta1")
}

func TestV1beta1ObjectReadsAsV1alpha1AndBackWithNothingLost(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	machine := validMachine(newNamespace(t), "hub")
	machine.Spec.PriorityClassName = "workload-nodes"
	machine.Spec.RuntimeClassName = "runc"
	machine.Spec.PodMetadata = infrav1.PodMetadata{Labels: map[string]string{"team": "a"}, Annotations: map[string]string{"note": "x"}}
	g.Expect(env.Client.Create(ctx, machine)).To(Succeed())
	want := machine.Spec.DeepCopy()

	old := &infrav1alpha1.KubernetesMachine{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(machine), old)).To(Succeed())
	g.Expect(old.Spec.Image).To(Equal(want.Image))
	g.Expect(old.Spec.Resources.Limits).To(HaveKey(corev1.ResourceCPU))

	// A v1alpha1 client writes the object back: the hub-only fields survive.
	old.Labels = map[string]string{"touched-by": "v1alpha1"}
	g.Expect(env.Client.Update(ctx, old)).To(Succeed())
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(machine), machine)).To(Succeed())
	g.Expect(machine.Spec).To(Equal(*want))
	g.Expect(machine.Labels).To(HaveKeyWithValue("touched-by", "v1alpha1"))
	g.Expect(machine.Annotations).NotTo(HaveKey("cluster.x-k8s.io/conversion-data"))
}

// serverSideApply applies a fresh object of the kind with the given spec, as a
// GitOps tool does on every sync.
func serverSideApply(g Gomega, namespace, kind string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": infrav1.GroupVersion.String(), "kind": kind,
		"metadata": map[string]any{"namespace": namespace, "name": "applied"},
		"spec":     spec,
	}}
	g.Expect(env.Client.Patch(context.Background(), u, client.Apply, client.FieldOwner("gitops"), client.ForceOwnership)).To(Succeed()) //nolint:staticcheck // unstructured apply
	return u
}

func TestDefaultsAreAppliedOnceAndStableUnderServerSideApply(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)

	machineSpec := func() map[string]any { return map[string]any{"image": "kindest/node:v1.36.3"} }
	first := serverSideApply(g, ns, "KubernetesMachine", machineSpec())
	second := serverSideApply(g, ns, "KubernetesMachine", machineSpec())
	g.Expect(second.GetResourceVersion()).To(Equal(first.GetResourceVersion()), "a second identical apply changes nothing")
	machine := &infrav1.KubernetesMachine{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "applied"}, machine)).To(Succeed())
	g.Expect(machine.Spec.BootstrapTimeout.Duration.String()).To(Equal("15m0s"))
	g.Expect(machine.Spec.Resources.Requests.Cpu().String()).To(Equal("250m"))
	g.Expect(machine.Spec.Resources.Requests.Memory().String()).To(Equal("1Gi"))

	clusterSpec := func() map[string]any {
		return map[string]any{"hostingCluster": map[string]any{"secretName": "kubeconfig"}}
	}
	first = serverSideApply(g, ns, "KubernetesCluster", clusterSpec())
	second = serverSideApply(g, ns, "KubernetesCluster", clusterSpec())
	g.Expect(second.GetResourceVersion()).To(Equal(first.GetResourceVersion()), "a second identical apply changes nothing")
	nested := func(fields ...string) any {
		value, _, _ := unstructured.NestedFieldNoCopy(second.Object, fields...)
		return value
	}
	g.Expect(nested("spec", "hostingCluster", "key")).To(Equal("value"))
	g.Expect(nested("spec", "controlPlaneService", "type")).To(Equal("ClusterIP"))
	g.Expect(nested("spec", "controlPlaneService", "port")).To(BeEquivalentTo(6443))
}

func TestCRDsStayBelowTheClientSideApplyLimit(t *testing.T) {
	g := NewWithT(t)
	root := envtest.RepositoryRoot()
	for _, kind := range []string{"kubernetesclusters", "kubernetesclustertemplates", "kubernetesmachines", "kubernetesmachinetemplates"} {
		data, err := os.ReadFile(root + "/config/crd/bases/infrastructure.cluster.x-k8s.io_" + kind + ".yaml")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(len(data)).To(BeNumerically("<", 256*1024), kind)
		g.Expect(strings.Contains(string(data), "cluster.x-k8s.io/v1beta2: v1alpha1_v1beta1")).To(BeTrue(), kind)
	}
}
