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

package controller

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/cluster-api/util/conditions"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/internal/bootstrap"
)

// reportEnded, one function: what a machine whose node Pod ended shows, by
// the Pod's exit code and its log's tail (the API server cannot serve a
// node's log without a kubelet, so the controller tests cannot give one).
func TestReportEndedNamesWhatTheHostingNodeLacks(t *testing.T) {
	const inotify = "systemd[1]: Failed to create control group inotify object: Too many open files"
	tests := []struct {
		name                      string
		exitCode                  int32
		tail                      string
		wantPodReason, wantPodMsg string
		wantBootstrap             string // the BootstrapSucceeded message's start, "" for none
	}{
		{name: "the node's programs hit the inotify limit", exitCode: 255, tail: inotify,
			wantPodReason: infrav1.KubernetesMachineHostingNodeLimitReason, wantPodMsg: "fs.inotify.max_user_instances"},
		{name: "the bootstrap failed on the inotify limit", exitCode: bootstrap.FailedExitCode, tail: inotify,
			wantPodReason: infrav1.KubernetesMachineHostingNodeLimitReason, wantPodMsg: inotify,
			wantBootstrap: "Bootstrap failed: the hosting node is out of inotify instances"},
		{name: "the bootstrap failed", exitCode: bootstrap.FailedExitCode, tail: "kubeadm join: connection refused",
			wantPodReason: infrav1.KubernetesMachinePodLostReason, wantPodMsg: "The node stopped after its bootstrap failed",
			wantBootstrap: "Bootstrap failed; last lines of the node's log:\nkubeadm join: connection refused"},
		{name: "the node ended otherwise", exitCode: 137, tail: "Exiting container.",
			wantPodReason: infrav1.KubernetesMachinePodLostReason, wantPodMsg: "exit code 137"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			km := &infrav1.KubernetesMachine{}
			pod := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Namespace: "hosting", Name: "node"},
				Status: corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{{
					Name: "node", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: tt.exitCode}},
				}}},
			}
			reportEnded(km, pod, tt.tail)
			provisioned := conditions.Get(km, infrav1.KubernetesMachinePodProvisionedCondition)
			g.Expect(provisioned).NotTo(BeNil())
			g.Expect(provisioned.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(provisioned.Reason).To(Equal(tt.wantPodReason))
			g.Expect(provisioned.Message).To(ContainSubstring(tt.wantPodMsg))
			bootstrapped := conditions.Get(km, infrav1.KubernetesMachineBootstrapSucceededCondition)
			if tt.wantBootstrap == "" {
				g.Expect(bootstrapped).To(BeNil())
				return
			}
			g.Expect(bootstrapped.Reason).To(Equal(infrav1.KubernetesMachineBootstrapFailedReason))
			g.Expect(bootstrapped.Message).To(HavePrefix(tt.wantBootstrap))
		})
	}
}
