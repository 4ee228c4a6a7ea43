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

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/internal/bootstrap"
)

const (
	// NodeContainerName is the name of the node Pod's only container.
	NodeContainerName = "node"

	apiServerPort              int32 = 6443
	terminationGracePeriod     int64 = 30
	bootstrapSecretDefaultMode int32 = 0o400
)

// Volume names of the node Pod. Claim volumes are claimVolumePrefix plus the
// template name, so they never clash with these.
const (
	runVolume         = "run"        // memory emptyDir at /run: systemd's runtime state, the sentinel
	tmpVolume         = "tmp"        // memory emptyDir at /tmp
	containerdVolume  = "containerd" // disk emptyDir: overlayfs cannot use the container's overlay root as upperdir
	kubeletVolume     = "kubelet"    // disk emptyDir at /var/lib/kubelet
	modulesVolume     = "modules"    // the hosting node's /lib/modules, read-only
	bootstrapVolume   = "bootstrap"  // the bootstrap Secret
	claimVolumePrefix = "claim-"
)

// Node is what NewPod, NewBootstrapSecret and NewPersistentVolumeClaims
// render from.
type Node struct {
	// Name and Namespace are those of the KubernetesMachine (management side).
	Name, Namespace string
	ClusterName     string
	ControlPlane    bool
	Spec            infrav1.KubernetesMachineSpec
	// HostingNamespace is where every hosting object of the machine lives.
	HostingNamespace string
	// Image is already resolved (spec.image or ImageForVersion).
	Image string
	// FailureDomain is "" when the machine has none.
	FailureDomain string
	// OwnerID is the KubernetesCluster's owner ID (infrav1.OwnerIDAnnotation).
	OwnerID string
}

func (m Node) podName() string { return PodName(m.Name) }

func (m Node) labels() map[string]string {
	return MachineLabels(m.Namespace, m.ClusterName, m.Name, m.ControlPlane)
}

// Owner is who the machine's hosting objects belong to.
func (m Node) Owner() Owner {
	return Owner{Namespace: m.Namespace, Cluster: m.ClusterName, Machine: m.Name, ID: m.OwnerID}
}

// objectMeta is the metadata every hosting object of the machine shares; no
// ownerReferences, so that nothing on the management side can garbage-collect a node.
func (m Node) objectMeta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name: name, Namespace: m.HostingNamespace, Labels: m.Owner().withOwnerID(m.labels()),
		Annotations: m.Owner().annotations(),
	}
}

// NewPod renders the node Pod of a machine.
func NewPod(m Node) *corev1.Pod {
	spec := m.Spec.DeepCopy()
	meta := m.objectMeta(m.podName())
	meta.Labels = withProviderLabels(spec.PodMetadata.Labels, meta.Labels)
	meta.Annotations = withOwnerAnnotations(spec.PodMetadata.Annotations, m.Owner())
	pod := &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: meta,
		Spec: corev1.PodSpec{
			Hostname:                      m.podName(),
			Containers:                    []corev1.Container{nodeContainer(m, spec)},
			Volumes:                       podVolumes(m),
			RestartPolicy:                 corev1.RestartPolicyNever,
			AutomountServiceAccountToken:  ptr.To(false),
			EnableServiceLinks:            ptr.To(false),
			DNSPolicy:                     corev1.DNSDefault,
			TerminationGracePeriodSeconds: ptr.To(terminationGracePeriod),
			NodeSelector:                  nodeSelector(spec.NodeSelector, m.FailureDomain),
			Tolerations:                   spec.Tolerations,
			Affinity:                      spec.Affinity,
			TopologySpreadConstraints:     topologySpread(m, spec),
			PriorityClassName:             spec.PriorityClassName,
		},
	}
	if spec.RuntimeClassName != "" {
		pod.Spec.RuntimeClassName = ptr.To(spec.RuntimeClassName)
	}
	return pod
}

// nodeContainer is the privileged container that runs systemd as PID 1.
func nodeContainer(m Node, spec *infrav1.KubernetesMachineSpec) corev1.Container {
	return corev1.Container{
		Name:            NodeContainerName,
		Image:           m.Image,
		ImagePullPolicy: corev1.PullIfNotPresent,
		Command:         bootstrap.NodeCommand(),
		TTY:             true,
		SecurityContext: &corev1.SecurityContext{Privileged: ptr.To(true)},
		Resources: corev1.ResourceRequirements{
			Requests: spec.Resources.Requests,
			Limits:   spec.Resources.Limits,
		},
		VolumeMounts:   volumeMounts(m),
		ReadinessProbe: readinessProbe(m.ControlPlane),
	}
}

// readinessProbe keeps a control-plane Pod out of the Service until its API
// server serves, and marks a worker ready once its bootstrap succeeded. There
// is no startupProbe: it would gate readiness, and joins need the Service
// while kubeadm still runs.
func readinessProbe(controlPlane bool) *corev1.Probe {
	if controlPlane {
		return &corev1.Probe{
			ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
				Scheme: corev1.URISchemeHTTPS,
				Path:   "/readyz",
				Port:   intstr.FromInt32(apiServerPort),
			}},
			PeriodSeconds:    2,
			FailureThreshold: 3,
		}
	}
	return &corev1.Probe{
		ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{
			Command: []string{"test", "-f", bootstrap.SentinelPath},
		}},
		PeriodSeconds: 5,
	}
}

// nodeSelector adds the failure domain's zone to the user's node selector; the
// failure domain wins over a user zone.
func nodeSelector(user map[string]string, failureDomain string) map[string]string {
	if failureDomain == "" {
		return user
	}
	selector := maps.Clone(user)
	if selector == nil {
		selector = map[string]string{}
	}
	selector[corev1.LabelTopologyZone] = failureDomain
	return selector
}

// topologySpread is the user's constraints, or the provider's spreading: a
// cluster's control-plane node Pods prefer different hosting nodes and zones,
// its workers different hosting nodes. The constraints are soft, so a small
// or zone-less hosting cluster still schedules every Pod, and a failure
// domain's node selector still pins the zone.
func topologySpread(m Node, spec *infrav1.KubernetesMachineSpec) []corev1.TopologySpreadConstraint {
	if len(spec.TopologySpreadConstraints) > 0 {
		return spec.TopologySpreadConstraints
	}
	if spec.Spreading == infrav1.SpreadingNone {
		return nil
	}
	peers := &metav1.LabelSelector{MatchLabels: RoleSelector(m.Namespace, m.ClusterName, m.ControlPlane)}
	keys := []string{corev1.LabelHostname}
	if m.ControlPlane {
		keys = append(keys, corev1.LabelTopologyZone)
	}
	constraints := make([]corev1.TopologySpreadConstraint, 0, len(keys))
	for _, key := range keys {
		constraints = append(constraints, corev1.TopologySpreadConstraint{
			MaxSkew:           1,
			TopologyKey:       key,
			WhenUnsatisfiable: corev1.ScheduleAnyway,
			LabelSelector:     peers.DeepCopy(),
		})
	}
	return constraints
}
