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
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/distribution/reference"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/internal/nodepod"
)

const (
	// MinBootstrapTimeout and MaxBootstrapTimeout bound spec.bootstrapTimeout.
	MinBootstrapTimeout = time.Minute
	MaxBootstrapTimeout = 2 * time.Hour
)

// DefaultNodeRequests are the requests a node container gets for each resource the
// user gave neither a request nor a limit for, so a node Pod is never BestEffort.
var DefaultNodeRequests = corev1.ResourceList{
	corev1.ResourceCPU:    resource.MustParse("250m"),
	corev1.ResourceMemory: resource.MustParse("1Gi"),
}

// defaultMachineSpec sets the defaults of a machine spec; applying it twice
// changes nothing.
func defaultMachineSpec(spec *infrav1.KubernetesMachineSpec) {
	if spec.BootstrapTimeout == nil {
		spec.BootstrapTimeout = &metav1.Duration{Duration: infrav1.DefaultBootstrapTimeout}
	}
	for name, quantity := range DefaultNodeRequests {
		_, requested := spec.Resources.Requests[name]
		_, limited := spec.Resources.Limits[name]
		if requested || limited {
			continue
		}
		if spec.Resources.Requests == nil {
			spec.Resources.Requests = corev1.ResourceList{}
		}
		spec.Resources.Requests[name] = quantity.DeepCopy()
	}
	if spec.Spreading == "" && len(spec.TopologySpreadConstraints) == 0 {
		spec.Spreading = infrav1.SpreadingPreferred
	}
	for i := range spec.VolumeClaimTemplates {
		if len(spec.VolumeClaimTemplates[i].AccessModes) == 0 {
			spec.VolumeClaimTemplates[i].AccessModes = []corev1.PersistentVolumeAccessMode{infrav1.DefaultVolumeAccessMode}
		}
	}
}

// validateMachineSpec checks a machine spec; every error names its field.
func validateMachineSpec(spec *infrav1.KubernetesMachineSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, validateProviderID(spec.ProviderID, path.Child("providerID"))...)
	errs = append(errs, validateImage(spec.Image, path.Child("image"))...)
	errs = append(errs, validateResources(spec.Resources, path.Child("resources"))...)
	errs = append(errs, metav1validation.ValidateLabels(spec.NodeSelector, path.Child("nodeSelector"))...)
	errs = append(errs, validateTolerations(spec.Tolerations, path.Child("tolerations"))...)
	errs = append(errs, validateDNSSubdomain(spec.PriorityClassName, path.Child("priorityClassName"))...)
	errs = append(errs, validateDNSSubdomain(spec.RuntimeClassName, path.Child("runtimeClassName"))...)
	errs = append(errs, validatePodMetadata(spec.PodMetadata, path.Child("podMetadata"))...)
	errs = append(errs, validateVolumeClaimTemplates(spec.VolumeClaimTemplates, path.Child("volumeClaimTemplates"))...)
	errs = append(errs, validateBootstrapTimeout(spec.BootstrapTimeout, path.Child("bootstrapTimeout"))...)
	errs = append(errs, validateSpreading(spec, path)...)
	return errs
}

var (
	supportedWhenUnsatisfiable = []string{string(corev1.DoNotSchedule), string(corev1.ScheduleAnyway)}
	supportedInclusionPolicies = []string{string(corev1.NodeInclusionPolicyHonor), string(corev1.NodeInclusionPolicyIgnore)}
)

// validateSpreading checks spreading and topologySpreadConstraints, which replace it.
func validateSpreading(spec *infrav1.KubernetesMachineSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if spec.Spreading != "" && len(spec.TopologySpreadConstraints) > 0 {
		errs = append(errs, field.Invalid(path.Child("spreading"), spec.Spreading,
			"must be empty when topologySpreadConstraints is set: they replace the provider's spreading"))
	}
	for i, constraint := range spec.TopologySpreadConstraints {
		errs = append(errs, validateTopologySpreadConstraint(constraint, path.Child("topologySpreadConstraints").Index(i))...)
	}
	return errs
}

func validateTopologySpreadConstraint(constraint corev1.TopologySpreadConstraint, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if constraint.MaxSkew < 1 {
		errs = append(errs, field.Invalid(path.Child("maxSkew"), constraint.MaxSkew, "must be at least 1"))
	}
	if constraint.TopologyKey == "" {
		errs = append(errs, field.Required(path.Child("topologyKey"), "names the node label that makes a topology domain"))
	} else {
		for _, msg := range validation.IsQualifiedName(constraint.TopologyKey) {
			errs = append(errs, field.Invalid(path.Child("topologyKey"), constraint.TopologyKey, msg))
		}
	}
	if !slices.Contains(supportedWhenUnsatisfiable, string(constraint.WhenUnsatisfiable)) {
		errs = append(errs, field.NotSupported(path.Child("whenUnsatisfiable"), constraint.WhenUnsatisfiable, supportedWhenUnsatisfiable))
	}
	if constraint.MinDomains != nil && (*constraint.MinDomains < 1 || constraint.WhenUnsatisfiable != corev1.DoNotSchedule) {
		errs = append(errs, field.Invalid(path.Child("minDomains"), *constraint.MinDomains, "must be at least 1, and only with whenUnsatisfiable DoNotSchedule"))
	}
	errs = append(errs, validateInclusionPolicy(constraint.NodeAffinityPolicy, path.Child("nodeAffinityPolicy"))...)
	errs = append(errs, validateInclusionPolicy(constraint.NodeTaintsPolicy, path.Child("nodeTaintsPolicy"))...)
	if constraint.LabelSelector != nil {
		errs = append(errs, metav1validation.ValidateLabelSelector(constraint.LabelSelector, metav1validation.LabelSelectorValidationOptions{}, path.Child("labelSelector"))...)
	}
	for i, key := range constraint.MatchLabelKeys {
		for _, msg := range validation.IsQualifiedName(key) {
			errs = append(errs, field.Invalid(path.Child("matchLabelKeys").Index(i), key, msg))
		}
	}
	if len(constraint.MatchLabelKeys) > 0 && constraint.LabelSelector == nil {
		errs = append(errs, field.Required(path.Child("labelSelector"), "must be set when matchLabelKeys is"))
	}
	return errs
}

func validateInclusionPolicy(policy *corev1.NodeInclusionPolicy, path *field.Path) field.ErrorList {
	if policy == nil || slices.Contains(supportedInclusionPolicies, string(*policy)) {
		return nil
	}
	return field.ErrorList{field.NotSupported(path, *policy, supportedInclusionPolicies)}
}

func validateProviderID(providerID string, path *field.Path) field.ErrorList {
	if providerID == "" {
		return nil
	}
	rest, ok := strings.CutPrefix(providerID, infrav1.ProviderIDPrefix)
	namespace, pod, found := strings.Cut(rest, "/")
	if !ok || !found || len(validation.IsDNS1123Label(namespace)) > 0 || len(validation.IsDNS1123Subdomain(pod)) > 0 {
		return field.ErrorList{field.Invalid(path, providerID, "must have the form kubernetes://<hosting-namespace>/<pod-name>")}
	}
	return nil
}

func validateImage(image string, path *field.Path) field.ErrorList {
	if image == "" {
		return nil
	}
	if _, err := reference.ParseNormalizedNamed(image); err != nil {
		return field.ErrorList{field.Invalid(path, image, fmt.Sprintf("must be a container image reference: %v", err))}
	}
	return nil
}

func validateResources(resources infrav1.NodeResources, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, validateResourceList(resources.Requests, path.Child("requests"))...)
	errs = append(errs, validateResourceList(resources.Limits, path.Child("limits"))...)
	for name, limit := range resources.Limits {
		request, ok := resources.Requests[name]
		if ok && limit.Cmp(request) < 0 {
			errs = append(errs, field.Invalid(path.Child("limits").Key(string(name)), limit.String(),
				fmt.Sprintf("must not be below the request %s", request.String())))
		}
	}
	return errs
}

func validateResourceList(list corev1.ResourceList, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for name, quantity := range list {
		for _, msg := range validation.IsQualifiedName(string(name)) {
			errs = append(errs, field.Invalid(path.Key(string(name)), string(name), msg))
		}
		if quantity.Sign() < 0 {
			errs = append(errs, field.Invalid(path.Key(string(name)), quantity.String(), "must not be negative"))
		}
	}
	return errs
}

func validateTolerations(tolerations []corev1.Toleration, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, toleration := range tolerations {
		p := path.Index(i)
		if toleration.Key != "" {
			for _, msg := range validation.IsQualifiedName(toleration.Key) {
				errs = append(errs, field.Invalid(p.Child("key"), toleration.Key, msg))
			}
		}
		switch toleration.Operator {
		case corev1.TolerationOpEqual, "":
			if toleration.Key == "" {
				errs = append(errs, field.Invalid(p.Child("operator"), toleration.Operator, "must be Exists when key is empty"))
			}
			// The value is matched against a taint's, which is a label value.
			for _, msg := range validation.IsValidLabelValue(toleration.Value) {
				errs = append(errs, field.Invalid(p.Child("value"), toleration.Value, msg))
			}
		case corev1.TolerationOpExists:
			if toleration.Value != "" {
				errs = append(errs, field.Invalid(p.Child("value"), toleration.Value, "must be empty when operator is Exists"))
			}
		default:
			errs = append(errs, field.NotSupported(p.Child("operator"), toleration.Operator, []string{"Equal", "Exists"}))
		}
		switch toleration.Effect {
		case "", corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
		default:
			errs = append(errs, field.NotSupported(p.Child("effect"), toleration.Effect, []string{"NoSchedule", "PreferNoSchedule", "NoExecute"}))
		}
	}
	return errs
}

func validateDNSSubdomain(name string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if name == "" {
		return nil
	}
	for _, msg := range validation.IsDNS1123Subdomain(name) {
		errs = append(errs, field.Invalid(path, name, msg))
	}
	return errs
}

// reservedLabelPrefix marks the labels the provider sets on hosting objects itself.
const reservedLabelPrefix = "infrastructure.cluster.x-k8s.io/"

func validatePodMetadata(metadata infrav1.PodMetadata, path *field.Path) field.ErrorList {
	errs := metav1validation.ValidateLabels(metadata.Labels, path.Child("labels"))
	errs = append(errs, apivalidation.ValidateAnnotations(metadata.Annotations, path.Child("annotations"))...)
	for key := range metadata.Labels {
		if strings.HasPrefix(key, reservedLabelPrefix) || key == clusterv1.ClusterNameLabel {
			errs = append(errs, field.Forbidden(path.Child("labels").Key(key), "is set by the provider to find its node Pods"))
		}
	}
	return errs
}

var supportedAccessModes = []string{
	string(corev1.ReadWriteOnce), string(corev1.ReadOnlyMany), string(corev1.ReadWriteMany), string(corev1.ReadWriteOncePod),
}

func validateVolumeClaimTemplates(templates []infrav1.VolumeClaimTemplate, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, template := range templates {
		p := path.Index(i)
		for _, msg := range validation.IsDNS1123Label(template.Name) {
			errs = append(errs, field.Invalid(p.Child("name"), template.Name, msg))
		}
		if conflict := nodepod.MountPathConflict(template.MountPath); conflict != "" {
			errs = append(errs, field.Invalid(p.Child("mountPath"), template.MountPath, conflict))
		}
		for j := range i {
			if other := templates[j].MountPath; other == template.MountPath || nodepod.IsUnder(template.MountPath, other) || nodepod.IsUnder(other, template.MountPath) {
				errs = append(errs, field.Invalid(p.Child("mountPath"), template.MountPath, fmt.Sprintf("overlaps %s of volumeClaimTemplates[%d]", other, j)))
			}
		}
		if template.StorageClassName != nil {
			errs = append(errs, validateDNSSubdomain(*template.StorageClassName, p.Child("storageClassName"))...)
		}
		if template.Size.Sign() <= 0 {
			errs = append(errs, field.Invalid(p.Child("size"), template.Size.String(), "must be greater than zero"))
		}
		for k, mode := range template.AccessModes {
			if !slices.Contains(supportedAccessModes, string(mode)) {
				errs = append(errs, field.NotSupported(p.Child("accessModes").Index(k), mode, supportedAccessModes))
			}
		}
	}
	return errs
}

func validateBootstrapTimeout(timeout *metav1.Duration, path *field.Path) field.ErrorList {
	if timeout == nil {
		return nil
	}
	if timeout.Duration < MinBootstrapTimeout || timeout.Duration > MaxBootstrapTimeout {
		return field.ErrorList{field.Invalid(path, timeout.Duration.String(),
			fmt.Sprintf("must be between %s and %s", MinBootstrapTimeout, MaxBootstrapTimeout))}
	}
	return nil
}
