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

package clusterctl

import (
	"slices"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
)

// secretVerbs are the only verbs on Secrets the manager gets, in every
// namespace: it creates and deletes bootstrap Secrets in hosting namespaces
// (any namespace that holds a cluster), reads bootstrap data and kubeconfigs,
// and patches a hosting kubeconfig Secret's labels and finalizer.
var secretVerbs = []string{"get", "list", "watch", "create", "patch", "delete"}

// forbiddenResources are subresources that would let the manager run
// commands in, or proxy to, node Pods and Nodes.
var forbiddenResources = []string{"pods/exec", "pods/attach", "pods/portforward", "nodes/proxy", "services/proxy"}

// readVerbs are what the manager may do with any CRD: the CRD migrator
// watches their metadata.
var readVerbs = []string{"get", "list", "watch"}

// forbiddenVerbs would let the manager grant itself more than it has.
var forbiddenVerbs = []string{"escalate", "bind", "impersonate", "deletecollection"}

// TestComponentsGrantLeastPrivilege reads every rule of the rendered
// components (what clusterctl init installs) and the manager's security
// context.
func TestComponentsGrantLeastPrivilege(t *testing.T) {
	g := NewWithT(t)
	rules, deployments := 0, 0
	for _, obj := range readComponents(t, g) {
		switch obj.GetKind() {
		case "ClusterRole", "Role":
			role := &rbacv1.ClusterRole{}
			g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, role)).To(Succeed())
			for _, rule := range role.Rules {
				expectLeastPrivilege(g, obj.GetKind()+" "+obj.GetName(), rule)
				rules++
			}
		case "Deployment":
			expectRestrictedManager(g, obj)
			deployments++
		}
	}
	g.Expect(rules).To(BeNumerically(">", 5), "the components hold the manager's rules")
	g.Expect(deployments).To(Equal(1))
}

func expectLeastPrivilege(g Gomega, role string, rule rbacv1.PolicyRule) {
	for _, field := range [][]string{rule.APIGroups, rule.Resources, rule.Verbs, rule.NonResourceURLs} {
		g.Expect(field).NotTo(ContainElement(ContainSubstring("*")), "%s: no wildcards: %+v", role, rule)
	}
	g.Expect(rule.Resources).NotTo(ContainElement(BeElementOf(forbiddenResources)), "%s: %+v", role, rule)
	g.Expect(rule.Verbs).NotTo(ContainElement(BeElementOf(forbiddenVerbs)), "%s: %+v", role, rule)
	if slices.Contains(rule.APIGroups, "") && slices.Contains(rule.Resources, "secrets") {
		g.Expect(rule.Verbs).To(HaveEach(BeElementOf(secretVerbs)), "%s: Secret verbs: %+v", role, rule)
	}
	if slices.Contains(rule.APIGroups, "apiextensions.k8s.io") && !slices.Equal(rule.Verbs, readVerbs) {
		g.Expect(rule.ResourceNames).NotTo(BeEmpty(), "%s: CRD writes on named CRDs only: %+v", role, rule)
		g.Expect(rule.ResourceNames).To(HaveEach(HaveSuffix("."+infrav1.GroupVersion.Group)),
			"%s: CRD writes on the provider's own CRDs only: %+v", role, rule)
	}
}

// expectRestrictedManager checks the manager Pod: non-root, read-only root
// filesystem, no privilege escalation, no capabilities.
func expectRestrictedManager(g Gomega, obj *unstructured.Unstructured) {
	podSpec, found, err := unstructured.NestedMap(obj.Object, "spec", "template", "spec")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(found).To(BeTrue())
	spec := &corev1.PodSpec{}
	g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(podSpec, spec)).To(Succeed())
	g.Expect(spec.SecurityContext).NotTo(BeNil())
	g.Expect(spec.SecurityContext.RunAsNonRoot).To(HaveValue(BeTrue()), "runAsNonRoot")
	g.Expect(spec.Containers).NotTo(BeEmpty())
	for _, c := range spec.Containers {
		sc := c.SecurityContext
		g.Expect(sc).NotTo(BeNil(), "container %s", c.Name)
		g.Expect(sc.ReadOnlyRootFilesystem).To(HaveValue(BeTrue()), "container %s: readOnlyRootFilesystem", c.Name)
		g.Expect(sc.AllowPrivilegeEscalation).To(HaveValue(BeFalse()), "container %s: allowPrivilegeEscalation", c.Name)
		g.Expect(ptr.Deref(sc.Privileged, false)).To(BeFalse(), "container %s: privileged", c.Name)
		g.Expect(sc.Capabilities).NotTo(BeNil(), "container %s", c.Name)
		g.Expect(sc.Capabilities.Drop).To(ContainElement(corev1.Capability("ALL")), "container %s: capabilities", c.Name)
		g.Expect(sc.Capabilities.Add).To(BeEmpty(), "container %s: capabilities", c.Name)
	}
}
