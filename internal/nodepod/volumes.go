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
	"k8s.io/utils/ptr"

	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/internal/bootstrap"
)

// modulesHostPathType is DirectoryOrCreate, not Directory: the measured hosting
// machines have no /lib/modules (modules are built in), and a Directory check
// would keep the Pod in ContainerCreating forever.
const modulesHostPathType = corev1.HostPathDirectoryOrCreate

// ContainerdSnapshotsPath is where the node's containerd keeps its overlayfs
// snapshots: overlayfs cannot take the container's own overlay root as an
// upper directory, so they go on a disk emptyDir. Only they do: the rest of
// /var/lib/containerd stays on the image's root, so that images preloaded into
// the image's content store (as kind's node images have them) are there.
const ContainerdSnapshotsPath = "/var/lib/containerd/io.containerd.snapshotter.v1.overlayfs"

// podVolumes are the volumes a kind-style node needs, the bootstrap Secret and
// the machine's claims.
func podVolumes(m Node) []corev1.Volume {
	volumes := []corev1.Volume{
		emptyDirVolume(runVolume, corev1.StorageMediumMemory),
		emptyDirVolume(tmpVolume, corev1.StorageMediumMemory),
		emptyDirVolume(containerdVolume, corev1.StorageMediumDefault),
		emptyDirVolume(kubeletVolume, corev1.StorageMediumDefault),
		{Name: modulesVolume, VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{
			Path: "/lib/modules",
			Type: ptr.To(modulesHostPathType),
		}}},
		{Name: bootstrapVolume, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName:  BootstrapSecretName(m.podName()),
			DefaultMode: ptr.To(bootstrapSecretDefaultMode),
		}}},
	}
	for _, template := range m.Spec.VolumeClaimTemplates {
		volumes = append(volumes, corev1.Volume{
			Name: claimVolumeName(template.Name),
			VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{
				ClaimName: ClaimName(m.podName(), template.Name),
			}},
		})
	}
	return volumes
}

// volumeMounts mount every volume of podVolumes into the node container.
func volumeMounts(m Node) []corev1.VolumeMount {
	mounts := []corev1.VolumeMount{
		{Name: runVolume, MountPath: "/run"},
		{Name: tmpVolume, MountPath: "/tmp"},
		{Name: containerdVolume, MountPath: ContainerdSnapshotsPath},
		{Name: kubeletVolume, MountPath: "/var/lib/kubelet"},
		{Name: modulesVolume, MountPath: "/lib/modules", ReadOnly: true},
		{Name: bootstrapVolume, MountPath: bootstrap.MountPath, ReadOnly: true},
	}
	for _, template := range m.Spec.VolumeClaimTemplates {
		mounts = append(mounts, corev1.VolumeMount{Name: claimVolumeName(template.Name), MountPath: template.MountPath})
	}
	return mounts
}

func emptyDirVolume(name string, medium corev1.StorageMedium) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{
		EmptyDir: &corev1.EmptyDirVolumeSource{Medium: medium},
	}}
}

// claimVolumeName is the Pod volume name of a claim template: a DNS-1123 label
// that cannot clash with the node's own volumes.
func claimVolumeName(templateName string) string {
	return dnsLabel(claimVolumePrefix + templateName)
}
