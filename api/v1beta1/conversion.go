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

// Hub marks KubernetesCluster as the conversion hub.
func (*KubernetesCluster) Hub() {}

// Hub marks KubernetesClusterList as the conversion hub.
func (*KubernetesClusterList) Hub() {}

// Hub marks KubernetesClusterTemplate as the conversion hub.
func (*KubernetesClusterTemplate) Hub() {}

// Hub marks KubernetesClusterTemplateList as the conversion hub.
func (*KubernetesClusterTemplateList) Hub() {}

// Hub marks KubernetesMachine as the conversion hub.
func (*KubernetesMachine) Hub() {}

// Hub marks KubernetesMachineList as the conversion hub.
func (*KubernetesMachineList) Hub() {}

// Hub marks KubernetesMachineTemplate as the conversion hub.
func (*KubernetesMachineTemplate) Hub() {}

// Hub marks KubernetesMachineTemplateList as the conversion hub.
func (*KubernetesMachineTemplateList) Hub() {}
