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

package v1alpha1

import (
	"encoding/json"
	"fmt"
	"maps"
	"sort"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiconversion "k8s.io/apimachinery/pkg/conversion"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	utilconversion "sigs.k8s.io/cluster-api/util/conversion"
	"sigs.k8s.io/controller-runtime/pkg/conversion"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
)

// FailureAnnotation keeps the v1alpha1-only status.failureReason and
// status.failureMessage on a hub object, so a v1alpha1 round trip loses nothing.
// Hub-only fields travel the other way in utilconversion.DataAnnotation.
const FailureAnnotation = "infrastructure.cluster.x-k8s.io/v1alpha1-failure"

// failure is the content of FailureAnnotation.
type failure struct {
	Reason  *string `json:"reason,omitempty"`
	Message *string `json:"message,omitempty"`
}

// ConvertTo converts this KubernetesCluster to the hub version.
func (src *KubernetesCluster) ConvertTo(dstRaw conversion.Hub) error {
	dst := dstRaw.(*infrav1.KubernetesCluster)
	if err := Convert_v1alpha1_KubernetesCluster_To_v1beta1_KubernetesCluster(src, dst, nil); err != nil {
		return err
	}
	restored := &infrav1.KubernetesCluster{}
	if ok, err := utilconversion.UnmarshalData(src, restored); err != nil {
		return err
	} else if ok {
		restoreClusterSpec(&src.Spec, &restored.Spec, &dst.Spec)
		restoreProvisioned(src.Status.Ready, restored.Status.Initialization.Provisioned, &dst.Status.Initialization.Provisioned)
		restoreFailureDomains(src.Status.FailureDomains, restored.Status.FailureDomains, &dst.Status.FailureDomains)
	}
	return storeFailure(failure{Reason: src.Status.FailureReason, Message: src.Status.FailureMessage}, dst)
}

// ConvertFrom converts the hub version to this KubernetesCluster.
func (dst *KubernetesCluster) ConvertFrom(srcRaw conversion.Hub) error {
	src := srcRaw.(*infrav1.KubernetesCluster)
	if err := Convert_v1beta1_KubernetesCluster_To_v1alpha1_KubernetesCluster(src, dst, nil); err != nil {
		return err
	}
	f, err := takeFailure(dst)
	if err != nil {
		return err
	}
	dst.Status.FailureReason, dst.Status.FailureMessage = f.Reason, f.Message
	return utilconversion.MarshalData(src, dst)
}

// ConvertTo converts this KubernetesClusterList to the hub version.
func (src *KubernetesClusterList) ConvertTo(dstRaw conversion.Hub) error {
	return Convert_v1alpha1_KubernetesClusterList_To_v1beta1_KubernetesClusterList(src, dstRaw.(*infrav1.KubernetesClusterList), nil)
}

// ConvertFrom converts the hub version to this KubernetesClusterList.
func (dst *KubernetesClusterList) ConvertFrom(srcRaw conversion.Hub) error {
	return Convert_v1beta1_KubernetesClusterList_To_v1alpha1_KubernetesClusterList(srcRaw.(*infrav1.KubernetesClusterList), dst, nil)
}

// ConvertTo converts this KubernetesClusterTemplate to the hub version.
func (src *KubernetesClusterTemplate) ConvertTo(dstRaw conversion.Hub) error {
	dst := dstRaw.(*infrav1.KubernetesClusterTemplate)
	if err := Convert_v1alpha1_KubernetesClusterTemplate_To_v1beta1_KubernetesClusterTemplate(src, dst, nil); err != nil {
		return err
	}
	restored := &infrav1.KubernetesClusterTemplate{}
	if ok, err := utilconversion.UnmarshalData(src, restored); err != nil || !ok {
		return err
	}
	restoreClusterSpec(&src.Spec.Template.Spec, &restored.Spec.Template.Spec, &dst.Spec.Template.Spec)
	return nil
}

// ConvertFrom converts the hub version to this KubernetesClusterTemplate.
func (dst *KubernetesClusterTemplate) ConvertFrom(srcRaw conversion.Hub) error {
	src := srcRaw.(*infrav1.KubernetesClusterTemplate)
	if err := Convert_v1beta1_KubernetesClusterTemplate_To_v1alpha1_KubernetesClusterTemplate(src, dst, nil); err != nil {
		return err
	}
	return utilconversion.MarshalData(src, dst)
}

// ConvertTo converts this KubernetesClusterTemplateList to the hub version.
func (src *KubernetesClusterTemplateList) ConvertTo(dstRaw conversion.Hub) error {
	return Convert_v1alpha1_KubernetesClusterTemplateList_To_v1beta1_KubernetesClusterTemplateList(src, dstRaw.(*infrav1.KubernetesClusterTemplateList), nil)
}

// ConvertFrom converts the hub version to this KubernetesClusterTemplateList.
func (dst *KubernetesClusterTemplateList) ConvertFrom(srcRaw conversion.Hub) error {
	return Convert_v1beta1_KubernetesClusterTemplateList_To_v1alpha1_KubernetesClusterTemplateList(srcRaw.(*infrav1.KubernetesClusterTemplateList), dst, nil)
}

// ConvertTo converts this KubernetesMachine to the hub version.
func (src *KubernetesMachine) ConvertTo(dstRaw conversion.Hub) error {
	dst := dstRaw.(*infrav1.KubernetesMachine)
	if err := Convert_v1alpha1_KubernetesMachine_To_v1beta1_KubernetesMachine(src, dst, nil); err != nil {
		return err
	}
	restored := &infrav1.KubernetesMachine{}
	if ok, err := utilconversion.UnmarshalData(src, restored); err != nil {
		return err
	} else if ok {
		restoreMachineSpec(&restored.Spec, &dst.Spec)
		restoreProvisioned(src.Status.Ready, restored.Status.Initialization.Provisioned, &dst.Status.Initialization.Provisioned)
		dst.Status.FailureDomain = restored.Status.FailureDomain
	}
	return storeFailure(failure{Reason: src.Status.FailureReason, Message: src.Status.FailureMessage}, dst)
}

// ConvertFrom converts the hub version to this KubernetesMachine.
func (dst *KubernetesMachine) ConvertFrom(srcRaw conversion.Hub) error {
	src := srcRaw.(*infrav1.KubernetesMachine)
	if err := Convert_v1beta1_KubernetesMachine_To_v1alpha1_KubernetesMachine(src, dst, nil); err != nil {
		return err
	}
	f, err := takeFailure(dst)
	if err != nil {
		return err
	}
	dst.Status.FailureReason, dst.Status.FailureMessage = f.Reason, f.Message
	return utilconversion.MarshalData(src, dst)
}

// ConvertTo converts this KubernetesMachineList to the hub version.
func (src *KubernetesMachineList) ConvertTo(dstRaw conversion.Hub) error {
	return Convert_v1alpha1_KubernetesMachineList_To_v1beta1_KubernetesMachineList(src, dstRaw.(*infrav1.KubernetesMachineList), nil)
}

// ConvertFrom converts the hub version to this KubernetesMachineList.
func (dst *KubernetesMachineList) ConvertFrom(srcRaw conversion.Hub) error {
	return Convert_v1beta1_KubernetesMachineList_To_v1alpha1_KubernetesMachineList(srcRaw.(*infrav1.KubernetesMachineList), dst, nil)
}

// ConvertTo converts this KubernetesMachineTemplate to the hub version.
func (src *KubernetesMachineTemplate) ConvertTo(dstRaw conversion.Hub) error {
	dst := dstRaw.(*infrav1.KubernetesMachineTemplate)
	if err := Convert_v1alpha1_KubernetesMachineTemplate_To_v1beta1_KubernetesMachineTemplate(src, dst, nil); err != nil {
		return err
	}
	restored := &infrav1.KubernetesMachineTemplate{}
	if ok, err := utilconversion.UnmarshalData(src, restored); err != nil || !ok {
		return err
	}
	restoreMachineSpec(&restored.Spec.Template.Spec, &dst.Spec.Template.Spec)
	dst.Status = restored.Status
	return nil
}

// ConvertFrom converts the hub version to this KubernetesMachineTemplate.
func (dst *KubernetesMachineTemplate) ConvertFrom(srcRaw conversion.Hub) error {
	src := srcRaw.(*infrav1.KubernetesMachineTemplate)
	if err := Convert_v1beta1_KubernetesMachineTemplate_To_v1alpha1_KubernetesMachineTemplate(src, dst, nil); err != nil {
		return err
	}
	return utilconversion.MarshalData(src, dst)
}

// ConvertTo converts this KubernetesMachineTemplateList to the hub version.
func (src *KubernetesMachineTemplateList) ConvertTo(dstRaw conversion.Hub) error {
	return Convert_v1alpha1_KubernetesMachineTemplateList_To_v1beta1_KubernetesMachineTemplateList(src, dstRaw.(*infrav1.KubernetesMachineTemplateList), nil)
}

// ConvertFrom converts the hub version to this KubernetesMachineTemplateList.
func (dst *KubernetesMachineTemplateList) ConvertFrom(srcRaw conversion.Hub) error {
	return Convert_v1beta1_KubernetesMachineTemplateList_To_v1alpha1_KubernetesMachineTemplateList(srcRaw.(*infrav1.KubernetesMachineTemplateList), dst, nil)
}

// restoreClusterSpec puts back the hub-only fields, and the hub's exact shape of
// lossy fields where the spoke still means the same thing.
func restoreClusterSpec(spoke *KubernetesClusterSpec, restored, dst *infrav1.KubernetesClusterSpec) {
	dst.HostingCluster = restored.HostingCluster
	dst.ControlPlaneService.Port = restored.ControlPlaneService.Port
	dst.ControlPlaneService.Labels = restored.ControlPlaneService.Labels
	dst.ControlPlaneService.Annotations = restored.ControlPlaneService.Annotations
	restoreFailureDomains(spoke.FailureDomains, restored.FailureDomains, &dst.FailureDomains)
	dst.DisruptionBudgets = restored.DisruptionBudgets
	dst.NetworkIsolation = restored.NetworkIsolation
}

// restoreMachineSpec puts back the hub-only fields of a machine spec.
func restoreMachineSpec(restored, dst *infrav1.KubernetesMachineSpec) {
	dst.PriorityClassName = restored.PriorityClassName
	dst.RuntimeClassName = restored.RuntimeClassName
	dst.PodMetadata = restored.PodMetadata
	dst.VolumeClaimTemplates = restored.VolumeClaimTemplates
	dst.Spreading = restored.Spreading
	dst.TopologySpreadConstraints = restored.TopologySpreadConstraints
}

// restoreProvisioned keeps the hub's provisioned pointer when it agrees with ready.
func restoreProvisioned(ready bool, restored *bool, dst **bool) {
	if restored != nil && *restored == ready {
		*dst = restored
	}
}

// restoreFailureDomains keeps the hub's list (order, explicit false) when it
// describes the same map as the spoke.
func restoreFailureDomains(spoke FailureDomains, restored []clusterv1.FailureDomain, dst *[]clusterv1.FailureDomain) {
	if apiequality.Semantic.DeepEqual(failureDomainsToMap(restored), spoke) {
		*dst = restored
	}
}

// storeFailure records the v1alpha1-only failure fields on the hub object.
func storeFailure(f failure, hub metav1.Object) error {
	if f.Reason == nil && f.Message == nil {
		return nil
	}
	data, err := json.Marshal(f)
	if err != nil {
		return fmt.Errorf("encoding annotation %s: %w", FailureAnnotation, err)
	}
	annotations := maps.Clone(hub.GetAnnotations())
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[FailureAnnotation] = string(data)
	hub.SetAnnotations(annotations)
	return nil
}

// takeFailure reads and removes FailureAnnotation from a spoke whose metadata was
// copied from the hub.
func takeFailure(spoke metav1.Object) (failure, error) {
	var f failure
	data, ok := spoke.GetAnnotations()[FailureAnnotation]
	if !ok {
		return f, nil
	}
	annotations := maps.Clone(spoke.GetAnnotations())
	delete(annotations, FailureAnnotation)
	spoke.SetAnnotations(annotations)
	if err := json.Unmarshal([]byte(data), &f); err != nil {
		return f, fmt.Errorf("decoding annotation %s: %w", FailureAnnotation, err)
	}
	return f, nil
}

func failureDomainsToList(in FailureDomains) []clusterv1.FailureDomain {
	if in == nil {
		return nil
	}
	out := make([]clusterv1.FailureDomain, 0, len(in))
	for name, spec := range in {
		domain := clusterv1.FailureDomain{Name: name, Attributes: spec.Attributes}
		if spec.ControlPlane {
			domain.ControlPlane = ptr.To(true)
		}
		out = append(out, domain)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func failureDomainsToMap(in []clusterv1.FailureDomain) FailureDomains {
	if in == nil {
		return nil
	}
	out := make(FailureDomains, len(in))
	for _, domain := range in {
		out[domain.Name] = FailureDomainSpec{ControlPlane: ptr.Deref(domain.ControlPlane, false), Attributes: domain.Attributes}
	}
	return out
}

// Convert_v1alpha1_KubernetesClusterSpec_To_v1beta1_KubernetesClusterSpec maps the flat
// service type and the failure domain map.
func Convert_v1alpha1_KubernetesClusterSpec_To_v1beta1_KubernetesClusterSpec(in *KubernetesClusterSpec, out *infrav1.KubernetesClusterSpec, s apiconversion.Scope) error {
	if err := autoConvert_v1alpha1_KubernetesClusterSpec_To_v1beta1_KubernetesClusterSpec(in, out, s); err != nil {
		return err
	}
	out.ControlPlaneService.Type = infrav1.ServiceType(in.ControlPlaneServiceType)
	out.FailureDomains = failureDomainsToList(in.FailureDomains)
	return nil
}

// Convert_v1beta1_KubernetesClusterSpec_To_v1alpha1_KubernetesClusterSpec maps the
// service type and the failure domain list; hub-only fields travel in the annotation.
func Convert_v1beta1_KubernetesClusterSpec_To_v1alpha1_KubernetesClusterSpec(in *infrav1.KubernetesClusterSpec, out *KubernetesClusterSpec, s apiconversion.Scope) error {
	if err := autoConvert_v1beta1_KubernetesClusterSpec_To_v1alpha1_KubernetesClusterSpec(in, out, s); err != nil {
		return err
	}
	out.ControlPlaneServiceType = ServiceType(in.ControlPlaneService.Type)
	out.FailureDomains = failureDomainsToMap(in.FailureDomains)
	return nil
}

// Convert_v1alpha1_KubernetesClusterStatus_To_v1beta1_KubernetesClusterStatus maps
// ready to initialization.provisioned.
func Convert_v1alpha1_KubernetesClusterStatus_To_v1beta1_KubernetesClusterStatus(in *KubernetesClusterStatus, out *infrav1.KubernetesClusterStatus, s apiconversion.Scope) error {
	if err := autoConvert_v1alpha1_KubernetesClusterStatus_To_v1beta1_KubernetesClusterStatus(in, out, s); err != nil {
		return err
	}
	out.Initialization.Provisioned = readyToProvisioned(in.Ready)
	out.FailureDomains = failureDomainsToList(in.FailureDomains)
	return nil
}

// Convert_v1beta1_KubernetesClusterStatus_To_v1alpha1_KubernetesClusterStatus maps
// initialization.provisioned to ready.
func Convert_v1beta1_KubernetesClusterStatus_To_v1alpha1_KubernetesClusterStatus(in *infrav1.KubernetesClusterStatus, out *KubernetesClusterStatus, s apiconversion.Scope) error {
	if err := autoConvert_v1beta1_KubernetesClusterStatus_To_v1alpha1_KubernetesClusterStatus(in, out, s); err != nil {
		return err
	}
	out.Ready = ptr.Deref(in.Initialization.Provisioned, false)
	out.FailureDomains = failureDomainsToMap(in.FailureDomains)
	return nil
}

// Convert_v1alpha1_KubernetesMachineSpec_To_v1beta1_KubernetesMachineSpec maps the
// providerID pointer to a string.
func Convert_v1alpha1_KubernetesMachineSpec_To_v1beta1_KubernetesMachineSpec(in *KubernetesMachineSpec, out *infrav1.KubernetesMachineSpec, s apiconversion.Scope) error {
	if err := autoConvert_v1alpha1_KubernetesMachineSpec_To_v1beta1_KubernetesMachineSpec(in, out, s); err != nil {
		return err
	}
	out.ProviderID = ptr.Deref(in.ProviderID, "")
	return nil
}

// Convert_v1beta1_KubernetesMachineSpec_To_v1alpha1_KubernetesMachineSpec maps an
// empty providerID to nil; hub-only fields travel in the annotation.
func Convert_v1beta1_KubernetesMachineSpec_To_v1alpha1_KubernetesMachineSpec(in *infrav1.KubernetesMachineSpec, out *KubernetesMachineSpec, s apiconversion.Scope) error {
	if err := autoConvert_v1beta1_KubernetesMachineSpec_To_v1alpha1_KubernetesMachineSpec(in, out, s); err != nil {
		return err
	}
	out.ProviderID = nil
	if in.ProviderID != "" {
		out.ProviderID = ptr.To(in.ProviderID)
	}
	return nil
}

// Convert_v1alpha1_KubernetesMachineStatus_To_v1beta1_KubernetesMachineStatus maps
// ready to initialization.provisioned.
func Convert_v1alpha1_KubernetesMachineStatus_To_v1beta1_KubernetesMachineStatus(in *KubernetesMachineStatus, out *infrav1.KubernetesMachineStatus, s apiconversion.Scope) error {
	if err := autoConvert_v1alpha1_KubernetesMachineStatus_To_v1beta1_KubernetesMachineStatus(in, out, s); err != nil {
		return err
	}
	out.Initialization.Provisioned = readyToProvisioned(in.Ready)
	return nil
}

// Convert_v1beta1_KubernetesMachineStatus_To_v1alpha1_KubernetesMachineStatus maps
// initialization.provisioned to ready.
func Convert_v1beta1_KubernetesMachineStatus_To_v1alpha1_KubernetesMachineStatus(in *infrav1.KubernetesMachineStatus, out *KubernetesMachineStatus, s apiconversion.Scope) error {
	if err := autoConvert_v1beta1_KubernetesMachineStatus_To_v1alpha1_KubernetesMachineStatus(in, out, s); err != nil {
		return err
	}
	out.Ready = ptr.Deref(in.Initialization.Provisioned, false)
	return nil
}

// Convert_v1beta1_KubernetesMachineTemplate_To_v1alpha1_KubernetesMachineTemplate drops
// the hub-only status; it travels in the annotation.
func Convert_v1beta1_KubernetesMachineTemplate_To_v1alpha1_KubernetesMachineTemplate(in *infrav1.KubernetesMachineTemplate, out *KubernetesMachineTemplate, s apiconversion.Scope) error {
	return autoConvert_v1beta1_KubernetesMachineTemplate_To_v1alpha1_KubernetesMachineTemplate(in, out, s)
}

func readyToProvisioned(ready bool) *bool {
	if ready {
		return ptr.To(true)
	}
	return nil
}
