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
	"maps"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/internal/bootstrap"
)

func testMachine(controlPlane bool) Node {
	return Node{
		Name:             "wl-cp-abcde",
		Namespace:        "mgmt-ns",
		ClusterName:      "wl",
		ControlPlane:     controlPlane,
		HostingNamespace: "hosting-ns",
		Image:            "kindest/node:v1.36.3",
		Spec: infrav1.KubernetesMachineSpec{
			Resources: infrav1.NodeResources{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("2Gi")},
				Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("4Gi")},
			},
			VolumeClaimTemplates: []infrav1.VolumeClaimTemplate{
				{Name: "etcd", MountPath: "/var/lib/etcd", Size: resource.MustParse("10Gi")},
				{Name: "data", MountPath: "/data", Size: resource.MustParse("1Gi")},
			},
		},
	}
}

func nodeContainerOf(g Gomega, pod *corev1.Pod) corev1.Container {
	g.Expect(pod.Spec.Containers).To(HaveLen(1))
	return pod.Spec.Containers[0]
}

func TestPodIsAPrivilegedSystemdNodeWithoutAccessToTheHostingAPI(t *testing.T) {
	g := NewWithT(t)
	pod := NewPod(testMachine(true))

	g.Expect(pod.Name).To(Equal("wl-cp-abcde"))
	g.Expect(pod.Namespace).To(Equal("hosting-ns"))
	g.Expect(pod.Spec.Hostname).To(Equal(pod.Name))
	g.Expect(pod.OwnerReferences).To(BeEmpty())
	g.Expect(pod.Spec.RestartPolicy).To(Equal(corev1.RestartPolicyNever))
	g.Expect(pod.Spec.AutomountServiceAccountToken).To(Equal(ptr.To(false)))
	g.Expect(pod.Spec.EnableServiceLinks).To(Equal(ptr.To(false)))
	g.Expect(pod.Spec.DNSPolicy).To(Equal(corev1.DNSDefault))
	g.Expect(pod.Spec.TerminationGracePeriodSeconds).To(Equal(ptr.To[int64](30)))
	g.Expect(time.Duration(*pod.Spec.TerminationGracePeriodSeconds)*time.Second).To(BeNumerically(">=", 3*bootstrap.StopTimeout),
		"systemd in the node kills slow units and still halts by itself well inside the grace period")
	g.Expect(pod.Spec.InitContainers).To(BeEmpty())

	container := nodeContainerOf(g, pod)
	g.Expect(container.Name).To(Equal("node"))
	g.Expect(container.Image).To(Equal("kindest/node:v1.36.3"))
	g.Expect(container.ImagePullPolicy).To(Equal(corev1.PullIfNotPresent))
	g.Expect(container.TTY).To(BeTrue())
	g.Expect(container.SecurityContext).To(Equal(&corev1.SecurityContext{Privileged: ptr.To(true)}))
	g.Expect(container.Command).To(Equal(bootstrap.NodeCommand()))
	g.Expect(container.Args).To(BeEmpty())
	g.Expect(container.LivenessProbe).To(BeNil())
	g.Expect(container.StartupProbe).To(BeNil())
}

func TestPodMountsWhatAKindNodeNeeds(t *testing.T) {
	pod := NewPod(testMachine(false))
	secretName := BootstrapSecretName(pod.Name)
	tests := []struct {
		mountPath    string
		wantReadOnly bool
		wantSource   corev1.VolumeSource
	}{
		{mountPath: "/run", wantSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}}},
		{mountPath: "/tmp", wantSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}}},
		{mountPath: "/var/lib/containerd/io.containerd.snapshotter.v1.overlayfs", wantSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{mountPath: "/var/lib/kubelet", wantSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{mountPath: "/lib/modules", wantReadOnly: true, wantSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{
			Path: "/lib/modules", Type: ptr.To(corev1.HostPathDirectoryOrCreate)}}},
		{mountPath: bootstrap.MountPath, wantReadOnly: true, wantSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: secretName, DefaultMode: ptr.To[int32](0o400)}}},
		{mountPath: "/var/lib/etcd", wantSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{
			ClaimName: ClaimName(pod.Name, "etcd")}}},
		{mountPath: "/data", wantSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{
			ClaimName: ClaimName(pod.Name, "data")}}},
	}
	for _, tt := range tests {
		t.Run(tt.mountPath, func(t *testing.T) {
			g := NewWithT(t)
			mount := mountAt(g, nodeContainerOf(g, pod), tt.mountPath)
			g.Expect(mount.ReadOnly).To(Equal(tt.wantReadOnly))
			g.Expect(volumeNamed(g, pod, mount.Name).VolumeSource).To(Equal(tt.wantSource))
		})
	}
}

func mountAt(g Gomega, container corev1.Container, mountPath string) corev1.VolumeMount {
	for _, mount := range container.VolumeMounts {
		if mount.MountPath == mountPath {
			return mount
		}
	}
	g.Expect(mountPath).To(BeEmpty(), "no volume is mounted at this path")
	return corev1.VolumeMount{}
}

func volumeNamed(g Gomega, pod *corev1.Pod, name string) corev1.Volume {
	for _, volume := range pod.Spec.Volumes {
		if volume.Name == name {
			return volume
		}
	}
	g.Expect(name).To(BeEmpty(), "no volume has this name")
	return corev1.Volume{}
}

func TestPodVolumesHaveUniqueValidNamesAndAreEachMountedOnce(t *testing.T) {
	g := NewWithT(t)
	m := testMachine(true)
	m.Spec.VolumeClaimTemplates = append(m.Spec.VolumeClaimTemplates,
		infrav1.VolumeClaimTemplate{Name: "run", MountPath: "/srv/run", Size: resource.MustParse("1Gi")},
		infrav1.VolumeClaimTemplate{Name: "a-template-name-as-long-as-the-api-allows-it-to-be-sixty-three", MountPath: "/srv/long", Size: resource.MustParse("1Gi")})
	pod := NewPod(m)

	mounted := map[string]int{}
	for _, mount := range nodeContainerOf(g, pod).VolumeMounts {
		mounted[mount.Name]++
	}
	g.Expect(pod.Spec.Volumes).To(HaveLen(len(mounted)))
	for _, volume := range pod.Spec.Volumes {
		g.Expect(validation.IsDNS1123Label(volume.Name)).To(BeEmpty())
		g.Expect(mounted).To(HaveKeyWithValue(volume.Name, 1))
	}
}

func TestPodReadinessProbeDependsOnTheRole(t *testing.T) {
	tests := []struct {
		name         string
		controlPlane bool
		want         *corev1.Probe
	}{
		{name: "control plane: API server ready", controlPlane: true, want: &corev1.Probe{
			ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
				Scheme: corev1.URISchemeHTTPS, Path: "/readyz", Port: intstr.FromInt32(6443)}},
			PeriodSeconds: 2, FailureThreshold: 3}},
		{name: "worker: bootstrap sentinel written", controlPlane: false, want: &corev1.Probe{
			ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{
				Command: []string{"test", "-f", "/run/cluster-api/bootstrap-success.complete"}}},
			PeriodSeconds: 5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			container := nodeContainerOf(g, NewPod(testMachine(tt.controlPlane)))
			g.Expect(container.ReadinessProbe).To(Equal(tt.want))
			g.Expect(container.StartupProbe).To(BeNil())
			g.Expect(container.LivenessProbe).To(BeNil())
		})
	}
}

func TestPodNodeSelectorPinsTheFailureDomain(t *testing.T) {
	tests := []struct {
		name          string
		user          map[string]string
		failureDomain string
		want          map[string]string
	}{
		{name: "neither", want: nil},
		{name: "user only", user: map[string]string{"disk": "ssd"}, want: map[string]string{"disk": "ssd"}},
		{name: "failure domain only", failureDomain: "zone-a",
			want: map[string]string{corev1.LabelTopologyZone: "zone-a"}},
		{name: "both", user: map[string]string{"disk": "ssd"}, failureDomain: "zone-a",
			want: map[string]string{"disk": "ssd", corev1.LabelTopologyZone: "zone-a"}},
		{name: "failure domain wins over a user zone", user: map[string]string{corev1.LabelTopologyZone: "zone-b"},
			failureDomain: "zone-a", want: map[string]string{corev1.LabelTopologyZone: "zone-a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			m := testMachine(false)
			m.Spec.NodeSelector = tt.user
			m.FailureDomain = tt.failureDomain
			userBefore := maps.Clone(tt.user)
			g.Expect(NewPod(m).Spec.NodeSelector).To(Equal(tt.want))
			g.Expect(m.Spec.NodeSelector).To(Equal(userBefore), "the spec is not modified")
		})
	}
}

func TestPodProviderLabelsWinOverUserLabels(t *testing.T) {
	g := NewWithT(t)
	m := testMachine(false)
	m.Spec.PodMetadata = infrav1.PodMetadata{
		Labels: map[string]string{
			"team":                 infrav1.ManagedByValue,
			infrav1.NodeRoleLabel:  infrav1.NodeRoleControlPlane,
			infrav1.ManagedByLabel: "someone-else",
		},
		Annotations: map[string]string{"example.com/note": "kept", infrav1.MachineNameAnnotation: "another-machine"},
	}
	pod := NewPod(m)

	want := MachineLabels("mgmt-ns", "wl", "wl-cp-abcde", false)
	want["team"] = infrav1.ManagedByValue
	g.Expect(pod.Labels).To(Equal(want))
	g.Expect(pod.Annotations).To(Equal(map[string]string{
		"example.com/note": "kept", infrav1.ClusterNameAnnotation: "wl", infrav1.MachineNameAnnotation: "wl-cp-abcde",
	}), "the owner's names cannot be overridden either")
}

func TestPodCopiesResourcesAndSchedulingFromTheSpec(t *testing.T) {
	g := NewWithT(t)
	m := testMachine(false)
	m.Spec.Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "ci", Effect: corev1.TaintEffectNoSchedule}}
	m.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "arch", Operator: corev1.NodeSelectorOpIn, Values: []string{"amd64"}}}}},
	}}}
	m.Spec.PriorityClassName = "ci-nodes"
	m.Spec.RuntimeClassName = "runc-privileged"
	pod := NewPod(m)

	container := nodeContainerOf(g, pod)
	g.Expect(container.Resources.Requests).To(Equal(m.Spec.Resources.Requests))
	g.Expect(container.Resources.Limits).To(Equal(m.Spec.Resources.Limits))
	g.Expect(pod.Spec.Tolerations).To(Equal(m.Spec.Tolerations))
	g.Expect(pod.Spec.Affinity).To(Equal(m.Spec.Affinity))
	g.Expect(pod.Spec.PriorityClassName).To(Equal("ci-nodes"))
	g.Expect(pod.Spec.RuntimeClassName).To(Equal(ptr.To("runc-privileged")))

	pod.Spec.Tolerations[0].Value = "changed"
	g.Expect(m.Spec.Tolerations[0].Value).To(Equal("ci"), "the Pod does not alias the spec")
}

func TestPodHasNoRuntimeClassWhenTheSpecNamesNone(t *testing.T) {
	g := NewWithT(t)
	g.Expect(NewPod(testMachine(false)).Spec.RuntimeClassName).To(BeNil())
}

func TestPodOfALongMachineNameIsNamedAndLabelledValidly(t *testing.T) {
	g := NewWithT(t)
	m := testMachine(true)
	m.Name = "a-very-long-machine-name.that-is-a-valid-subdomain.but-not-a-label-at-all.example"
	pod := NewPod(m)

	g.Expect(pod.Name).To(Equal(PodName(m.Name)))
	g.Expect(validation.IsDNS1123Label(pod.Spec.Hostname)).To(BeEmpty())
	for _, value := range pod.Labels {
		g.Expect(validation.IsValidLabelValue(value)).To(BeEmpty())
	}
	g.Expect(volumeNamed(g, pod, bootstrapVolume).Secret.SecretName).To(Equal(BootstrapSecretName(pod.Name)))
}

func TestSpreadingPrefersDifferentHostingNodesAndZones(t *testing.T) {
	g := NewWithT(t)
	controlPlane, worker := NewPod(testMachine(true)), NewPod(testMachine(false))

	cp := controlPlane.Spec.TopologySpreadConstraints
	g.Expect(cp).To(HaveLen(2))
	g.Expect([]string{cp[0].TopologyKey, cp[1].TopologyKey}).To(Equal([]string{corev1.LabelHostname, corev1.LabelTopologyZone}))
	for _, constraint := range append(cp, worker.Spec.TopologySpreadConstraints...) {
		g.Expect(constraint.WhenUnsatisfiable).To(Equal(corev1.ScheduleAnyway), "a preference: a one-node hosting cluster still schedules")
		g.Expect(constraint.MaxSkew).To(Equal(int32(1)))
	}
	g.Expect(selects(g, cp[0].LabelSelector, controlPlane)).To(BeTrue())
	g.Expect(selects(g, cp[0].LabelSelector, worker)).To(BeFalse(), "control planes spread among themselves")

	w := worker.Spec.TopologySpreadConstraints
	g.Expect(w).To(HaveLen(1))
	g.Expect(w[0].TopologyKey).To(Equal(corev1.LabelHostname))
	g.Expect(selects(g, w[0].LabelSelector, worker)).To(BeTrue())
	other := testMachine(false)
	other.ClusterName = "other"
	g.Expect(selects(g, w[0].LabelSelector, NewPod(other))).To(BeFalse(), "spread among the cluster's own workers")
}

func TestSpreadingCanBeReplacedOrTurnedOff(t *testing.T) {
	g := NewWithT(t)
	off := testMachine(true)
	off.Spec.Spreading = infrav1.SpreadingNone
	g.Expect(NewPod(off).Spec.TopologySpreadConstraints).To(BeEmpty())

	own := testMachine(true)
	constraint := corev1.TopologySpreadConstraint{MaxSkew: 2, TopologyKey: "rack", WhenUnsatisfiable: corev1.DoNotSchedule}
	own.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{constraint}
	g.Expect(NewPod(own).Spec.TopologySpreadConstraints).To(Equal([]corev1.TopologySpreadConstraint{constraint}))

	pinned := testMachine(true)
	pinned.FailureDomain = "zone-b"
	pod := NewPod(pinned)
	g.Expect(pod.Spec.NodeSelector).To(HaveKeyWithValue(corev1.LabelTopologyZone, "zone-b"), "a failure domain still pins")
	g.Expect(pod.Spec.TopologySpreadConstraints).To(HaveLen(2))
}
