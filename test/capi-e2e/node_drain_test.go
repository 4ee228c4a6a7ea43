//go:build e2e

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

package capie2e

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	capispecs "sigs.k8s.io/cluster-api/test/e2e"
	"sigs.k8s.io/cluster-api/test/framework"
)

// The drain spec scales a ClusterClass cluster of three control-plane machines
// and one worker down to one and none, with workloads (registry.k8s.io/pause,
// which the node image preloads) that block the drain until the spec lets
// them go, drain rules that order it, and attached volumes that hold the
// deletion until their detach timeout.
var _ = Describe("When testing Node drain", minutes(13), func() {
	capispecs.NodeDrainTimeoutSpec(ctx, func() capispecs.NodeDrainTimeoutSpecInput {
		return capispecs.NodeDrainTimeoutSpecInput{
			E2EConfig:                 e2eConfig,
			ClusterctlConfigPath:      clusterctlConfigPath,
			BootstrapClusterProxy:     specProxy,
			ArtifactFolder:            artifactFolder,
			SkipCleanup:               skipCleanup,
			Flavor:                    ptr.To("topology"),
			VerifyNodeVolumeDetach:    true,
			CreateAdditionalResources: attachVolumeToEveryNode,
		}
	})
})

// attachVolumeToEveryNode creates an attached VolumeAttachment for each Node
// of the workload cluster, with no driver behind it and a finalizer that keeps
// it: the Machine's deletion must wait for it until its volume detach timeout.
func attachVolumeToEveryNode(ctx context.Context, proxy framework.ClusterProxy, cluster *clusterv1.Cluster) {
	workload := proxy.GetWorkloadCluster(ctx, cluster.Namespace, cluster.Name).GetClient()
	nodes := &corev1.NodeList{}
	Expect(workload.List(ctx, nodes)).To(Succeed())
	Expect(nodes.Items).NotTo(BeEmpty())
	for _, node := range nodes.Items {
		attachment := &storagev1.VolumeAttachment{
			ObjectMeta: metav1.ObjectMeta{
				Name:       "capk-e2e-" + node.Name,
				Finalizers: []string{"test.cluster.x-k8s.io/block"},
			},
			Spec: storagev1.VolumeAttachmentSpec{
				Attacher: "manual",
				NodeName: node.Name,
				Source:   storagev1.VolumeAttachmentSource{PersistentVolumeName: ptr.To("capk-e2e")},
			},
		}
		Expect(workload.Create(ctx, attachment)).To(Succeed())
		attachment.Status.Attached = true
		Expect(workload.Status().Update(ctx, attachment)).To(Succeed())
	}
}
