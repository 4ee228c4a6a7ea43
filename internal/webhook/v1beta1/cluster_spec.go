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
	"net"
	"strconv"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
)

// defaultClusterSpec sets the defaults of a cluster spec; applying it twice
// changes nothing.
func defaultClusterSpec(spec *infrav1.KubernetesClusterSpec) {
	if spec.ControlPlaneService.Type == "" {
		spec.ControlPlaneService.Type = infrav1.DefaultServiceType
	}
	if spec.ControlPlaneService.Port == 0 {
		spec.ControlPlaneService.Port = infrav1.DefaultAPIServerPort
	}
	if spec.DisruptionBudgets.ControlPlane == "" {
		spec.DisruptionBudgets.ControlPlane = infrav1.ControlPlaneBudgetQuorum
	}
	if spec.NetworkIsolation.Mode == "" {
		spec.NetworkIsolation.Mode = infrav1.NetworkIsolationEnabled
	}
	if spec.HostingCluster != nil && spec.HostingCluster.Key == "" {
		spec.HostingCluster.Key = infrav1.DefaultKubeconfigKey
	}
}

// validateClusterSpec checks a cluster spec; every error names its field.
func validateClusterSpec(spec *infrav1.KubernetesClusterSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, validateEndpoint(spec.ControlPlaneEndpoint, path.Child("controlPlaneEndpoint"))...)
	errs = append(errs, validateHostingCluster(spec.HostingCluster, path.Child("hostingCluster"))...)
	errs = append(errs, validateControlPlaneService(spec.ControlPlaneService, path.Child("controlPlaneService"))...)
	errs = append(errs, validateFailureDomains(spec.FailureDomains, path.Child("failureDomains"))...)
	errs = append(errs, validateWorkersMaxUnavailable(spec.DisruptionBudgets.WorkersMaxUnavailable, path.Child("disruptionBudgets", "workersMaxUnavailable"))...)
	for i, peer := range spec.NetworkIsolation.APIServerClients {
		errs = append(errs, validatePeer(peer, path.Child("networkIsolation", "apiServerClients").Index(i))...)
	}
	return errs
}

func validateWorkersMaxUnavailable(value *intstr.IntOrString, path *field.Path) field.ErrorList {
	if value == nil {
		return nil
	}
	if value.Type == intstr.Int {
		if value.IntVal < 0 {
			return field.ErrorList{field.Invalid(path, value.IntVal, "must not be negative")}
		}
		return nil
	}
	percent, err := strconv.Atoi(strings.TrimSuffix(value.StrVal, "%"))
	if !strings.HasSuffix(value.StrVal, "%") || err != nil || percent < 0 || percent > 100 {
		return field.ErrorList{field.Invalid(path, value.StrVal, "must be a number or a percentage between 0% and 100%")}
	}
	return nil
}

// validatePeer checks one NetworkPolicy peer: selectors or an IP block, not both.
func validatePeer(peer networkingv1.NetworkPolicyPeer, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	selectors := peer.PodSelector != nil || peer.NamespaceSelector != nil
	switch {
	case selectors && peer.IPBlock != nil:
		errs = append(errs, field.Invalid(path, "ipBlock", "must set either podSelector and namespaceSelector, or ipBlock, not both"))
	case !selectors && peer.IPBlock == nil:
		errs = append(errs, field.Required(path, "podSelector, namespaceSelector or ipBlock"))
	}
	options := metav1validation.LabelSelectorValidationOptions{}
	if peer.PodSelector != nil {
		errs = append(errs, metav1validation.ValidateLabelSelector(peer.PodSelector, options, path.Child("podSelector"))...)
	}
	if peer.NamespaceSelector != nil {
		errs = append(errs, metav1validation.ValidateLabelSelector(peer.NamespaceSelector, options, path.Child("namespaceSelector"))...)
	}
	if peer.IPBlock != nil {
		errs = append(errs, validateIPBlock(*peer.IPBlock, path.Child("ipBlock"))...)
	}
	return errs
}

// validateIPBlock checks the CIDR and that every exception lies inside it.
func validateIPBlock(block networkingv1.IPBlock, path *field.Path) field.ErrorList {
	_, network, err := net.ParseCIDR(block.CIDR)
	if err != nil {
		return field.ErrorList{field.Invalid(path.Child("cidr"), block.CIDR, "must be a CIDR such as 10.0.0.0/8")}
	}
	var errs field.ErrorList
	for i, except := range block.Except {
		_, inner, err := net.ParseCIDR(except)
		outerSize, _ := network.Mask.Size()
		if err != nil {
			errs = append(errs, field.Invalid(path.Child("except").Index(i), except, "must be a CIDR"))
			continue
		}
		if innerSize, _ := inner.Mask.Size(); !network.Contains(inner.IP) || innerSize <= outerSize {
			errs = append(errs, field.Invalid(path.Child("except").Index(i), except, fmt.Sprintf("must be a strict subset of %s", block.CIDR)))
		}
	}
	return errs
}

func validateEndpoint(endpoint clusterv1.APIEndpoint, path *field.Path) field.ErrorList {
	if endpoint.Host == "" && endpoint.Port == 0 {
		return nil
	}
	var errs field.ErrorList
	if net.ParseIP(endpoint.Host) == nil && len(validation.IsDNS1123Subdomain(endpoint.Host)) > 0 {
		errs = append(errs, field.Invalid(path.Child("host"), endpoint.Host, "must be an IP address or a DNS name"))
	}
	errs = append(errs, validatePort(endpoint.Port, path.Child("port"))...)
	return errs
}

func validatePort(port int32, path *field.Path) field.ErrorList {
	if port < 1 || port > 65535 {
		return field.ErrorList{field.Invalid(path, port, "must be between 1 and 65535")}
	}
	return nil
}

func validateHostingCluster(hosting *infrav1.HostingClusterReference, path *field.Path) field.ErrorList {
	if hosting == nil {
		return nil
	}
	var errs field.ErrorList
	if hosting.SecretName == "" {
		errs = append(errs, field.Required(path.Child("secretName"), "names the kubeconfig Secret in the cluster's namespace"))
	}
	errs = append(errs, validateDNSSubdomain(hosting.SecretName, path.Child("secretName"))...)
	for _, msg := range validation.IsConfigMapKey(hosting.Key) {
		errs = append(errs, field.Invalid(path.Child("key"), hosting.Key, msg))
	}
	if hosting.Namespace != "" {
		for _, msg := range validation.IsDNS1123Label(hosting.Namespace) {
			errs = append(errs, field.Invalid(path.Child("namespace"), hosting.Namespace, msg))
		}
	}
	return errs
}

var supportedServiceTypes = []string{
	string(infrav1.ServiceTypeClusterIP), string(infrav1.ServiceTypeNodePort), string(infrav1.ServiceTypeLoadBalancer),
}

func validateControlPlaneService(service infrav1.ControlPlaneService, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if !sets.New(supportedServiceTypes...).Has(string(service.Type)) {
		errs = append(errs, field.NotSupported(path.Child("type"), service.Type, supportedServiceTypes))
	}
	errs = append(errs, validatePort(service.Port, path.Child("port"))...)
	errs = append(errs, metav1validation.ValidateLabels(service.Labels, path.Child("labels"))...)
	errs = append(errs, apivalidation.ValidateAnnotations(service.Annotations, path.Child("annotations"))...)
	for key := range service.Labels {
		if strings.HasPrefix(key, reservedLabelPrefix) {
			errs = append(errs, field.Forbidden(path.Child("labels").Key(key), "is set by the provider to find its Services"))
		}
	}
	return errs
}

func validateFailureDomains(domains []clusterv1.FailureDomain, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[string]()
	for i, domain := range domains {
		p := path.Index(i).Child("name")
		switch {
		case domain.Name == "":
			errs = append(errs, field.Required(p, "names the failure domain"))
		case seen.Has(domain.Name):
			errs = append(errs, field.Duplicate(p, domain.Name))
		default:
			for _, msg := range validation.IsValidLabelValue(domain.Name) {
				errs = append(errs, field.Invalid(p, domain.Name, msg+" (it becomes the value of a zone label)"))
			}
		}
		seen.Insert(domain.Name)
	}
	return errs
}
