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
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
)

const (
	// hashLength is how many hex digits of sha256 make a shortened name unique.
	hashLength = 8

	// maxLabelLength is the limit of DNS-1123/1035 labels and of label values.
	maxLabelLength = validation.DNS1123LabelMaxLength

	bootstrapSecretSuffix    = "-bootstrap"
	serviceNameSuffix        = "-apiserver"
	controlPlaneBudgetSuffix = "-control-plane"
	workersBudgetSuffix      = "-workers"
	networkPolicySuffix      = "-isolation"
	nodeImageRepository      = "kindest/node:"
)

// PodName is the name of the node Pod of a machine, which also becomes the
// node's hostname and Node name: machineName itself when it is a valid DNS-1123
// label, otherwise a valid label made unique by a hash of machineName.
func PodName(machineName string) string {
	return dnsLabel(machineName)
}

// BootstrapSecretName is the name of the Secret on the hosting cluster that
// holds the bootstrap script of the node Pod podName.
func BootstrapSecretName(podName string) string {
	return podName + bootstrapSecretSuffix
}

// ClaimName is the name of the PersistentVolumeClaim created for the volume
// claim template templateName of the node Pod podName.
func ClaimName(podName, templateName string) string {
	name := podName + "-" + templateName
	if len(validation.IsDNS1123Subdomain(name)) == 0 {
		return name
	}
	return hashedName(sanitize(strings.ToLower(name), isLabelChar), name, validation.DNS1123SubdomainMaxLength)
}

// ServiceName is the name of the control-plane Service of a cluster.
func ServiceName(clusterName string) string {
	return clusterObjectName(clusterName, serviceNameSuffix)
}

// ControlPlaneBudgetName is the name of the PodDisruptionBudget of a cluster's
// control-plane node Pods.
func ControlPlaneBudgetName(clusterName string) string {
	return clusterObjectName(clusterName, controlPlaneBudgetSuffix)
}

// WorkersBudgetName is the name of the PodDisruptionBudget of a cluster's
// worker node Pods.
func WorkersBudgetName(clusterName string) string {
	return clusterObjectName(clusterName, workersBudgetSuffix)
}

// NetworkPolicyName is the name of the NetworkPolicy that isolates a cluster's node Pods.
func NetworkPolicyName(clusterName string) string {
	return clusterObjectName(clusterName, networkPolicySuffix)
}

// clusterObjectName is the name of a cluster-wide hosting object: the cluster
// name and a suffix. It is a DNS-1035 label (what a Service name must be), so a
// cluster name starting with a digit gets a "c" prefix and a hash.
func clusterObjectName(clusterName, suffix string) string {
	name := clusterName + suffix
	if len(validation.IsDNS1035Label(name)) == 0 {
		return name
	}
	prefix := sanitize(strings.ToLower(clusterName), isLabelChar)
	if prefix == "" || prefix[0] < 'a' || prefix[0] > 'z' {
		prefix = "c" + prefix
	}
	return hashedName(prefix, clusterName, maxLabelLength-len(suffix)) + suffix
}

// ProviderID is the providerID of the node that runs in Pod podName of hostingNamespace.
func ProviderID(hostingNamespace, podName string) string {
	return infrav1.ProviderIDPrefix + hostingNamespace + "/" + podName
}

// ImageForVersion is the kind node image of a Kubernetes version such as
// "v1.36.3" or "1.36.3".
func ImageForVersion(version string) string {
	if !strings.HasPrefix(version, "v") {
		version = "v" + version
	}
	return nodeImageRepository + version
}

// dnsLabel returns name when it is a valid DNS-1123 label, otherwise a valid
// one made unique by a hash of name.
func dnsLabel(name string) string {
	if len(validation.IsDNS1123Label(name)) == 0 {
		return name
	}
	return hashedName(sanitize(strings.ToLower(name), isLabelChar), name, maxLabelLength)
}

// labelValue returns value when it is a valid label value, otherwise a valid
// one made unique by a hash of value.
func labelValue(value string) string {
	if len(validation.IsValidLabelValue(value)) == 0 {
		return value
	}
	return hashedName(sanitize(value, isLabelValueChar), value, maxLabelLength)
}

// hashedName cuts prefix so that prefix, a dash and the hash of full fit in
// maxLength, and trims characters a name may not start or end with.
func hashedName(prefix, full string, maxLength int) string {
	sum := sha256.Sum256([]byte(full))
	hash := hex.EncodeToString(sum[:])[:hashLength]
	if budget := maxLength - hashLength - 1; len(prefix) > budget {
		prefix = prefix[:budget]
	}
	prefix = strings.TrimFunc(prefix, func(r rune) bool { return !isAlphanumeric(r) })
	if prefix == "" {
		return hash
	}
	return prefix + "-" + hash
}

// sanitize replaces every character that allowed rejects with a dash.
func sanitize(name string, allowed func(rune) bool) string {
	return strings.Map(func(r rune) rune {
		if allowed(r) {
			return r
		}
		return '-'
	}, name)
}

func isAlphanumeric(r rune) bool {
	return (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9')
}

func isLabelChar(r rune) bool {
	return (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r == '-'
}

func isLabelValueChar(r rune) bool {
	return isAlphanumeric(r) || r == '-' || r == '_' || r == '.'
}
