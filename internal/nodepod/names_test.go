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
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/util/validation"
)

func TestPodNameKeepsMachineNamesThatAreValidLabels(t *testing.T) {
	for _, name := range []string{"machine-0", "cp-abcde", strings.Repeat("a", 63), "0-starts-with-digit"} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(PodName(name)).To(Equal(name))
		})
	}
}

func TestPodNameMakesAValidDeterministicLabelOfAnyMachineName(t *testing.T) {
	tests := []struct {
		name        string
		machineName string
	}{
		{name: "300 characters", machineName: strings.Repeat("a", 300)},
		{name: "64 characters", machineName: strings.Repeat("b", 64)},
		{name: "dotted", machineName: "md-0.example.com"},
		{name: "long and dotted", machineName: strings.Repeat("node.", 60)},
		{name: "dash at the cut", machineName: strings.Repeat("a", 53) + "-" + strings.Repeat("b", 20)},
		{name: "underscores", machineName: "my_machine"},
		{name: "upper case", machineName: "Machine-0"},
		{name: "only invalid characters", machineName: "..."},
		{name: "empty", machineName: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			got := PodName(tt.machineName)
			g.Expect(validation.IsDNS1123Label(got)).To(BeEmpty())
			g.Expect(len(got)).To(BeNumerically("<=", 63))
			g.Expect(got).NotTo(Equal(tt.machineName))
			g.Expect(PodName(tt.machineName)).To(Equal(got), "deterministic")
		})
	}
}

func TestShortenedNamesDifferForInputsThatShareALongPrefix(t *testing.T) {
	prefix := strings.Repeat("x", 300)
	tests := []struct {
		name string
		of   func(string) string
		a, b string
	}{
		{name: "PodName, long", of: PodName, a: prefix + "a", b: prefix + "b"},
		{name: "PodName, sanitized alike", of: PodName, a: "a.b", b: "a_b"},
		{name: "ServiceName", of: ServiceName, a: "1" + prefix[:60] + "a", b: "1" + prefix[:60] + "b"},
		{name: "ClaimName", of: func(s string) string { return ClaimName("pod", s) }, a: prefix + "a", b: prefix + "b"},
		{name: "label value", of: labelValue, a: prefix + "a", b: prefix + "b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(tt.of(tt.a)).NotTo(Equal(tt.of(tt.b)))
		})
	}
}

func TestServiceNameIsAValidDNS1035Label(t *testing.T) {
	tests := []struct {
		clusterName string
		want        string // "" when only validity is checked
	}{
		{clusterName: "my-cluster", want: "my-cluster-apiserver"},
		{clusterName: strings.Repeat("c", 53), want: strings.Repeat("c", 53) + "-apiserver"},
		{clusterName: "1st-cluster"},
		{clusterName: "0"},
		{clusterName: strings.Repeat("c", 63)},
		{clusterName: "9" + strings.Repeat("c", 62)},
		{clusterName: "dotted.cluster"},
	}
	for _, tt := range tests {
		t.Run(tt.clusterName, func(t *testing.T) {
			g := NewWithT(t)
			got := ServiceName(tt.clusterName)
			g.Expect(validation.IsDNS1035Label(got)).To(BeEmpty())
			g.Expect(got).To(HaveSuffix("-apiserver"))
			g.Expect(ServiceName(tt.clusterName)).To(Equal(got), "deterministic")
			if tt.want != "" {
				g.Expect(got).To(Equal(tt.want))
			}
		})
	}
}

func TestClaimNameIsAValidSubdomain(t *testing.T) {
	tests := []struct {
		name, podName, templateName string
		want                        string // "" when only validity is checked
	}{
		{name: "plain", podName: "cp-0", templateName: "etcd", want: "cp-0-etcd"},
		{name: "longest valid inputs", podName: strings.Repeat("p", 63), templateName: strings.Repeat("t", 63),
			want: strings.Repeat("p", 63) + "-" + strings.Repeat("t", 63)},
		{name: "invalid template name", podName: "cp-0", templateName: "Etcd_Data"},
		{name: "too long", podName: strings.Repeat("p", 200), templateName: strings.Repeat("t", 100)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			got := ClaimName(tt.podName, tt.templateName)
			g.Expect(validation.IsDNS1123Subdomain(got)).To(BeEmpty())
			if tt.want != "" {
				g.Expect(got).To(Equal(tt.want))
			}
		})
	}
}

func TestDerivedNames(t *testing.T) {
	tests := []struct {
		name, got, want string
	}{
		{name: "bootstrap Secret", got: BootstrapSecretName("cp-0"), want: "cp-0-bootstrap"},
		{name: "providerID", got: ProviderID("hosting-ns", "cp-0"), want: "kubernetes://hosting-ns/cp-0"},
		{name: "image of a v-version", got: ImageForVersion("v1.36.3"), want: "kindest/node:v1.36.3"},
		{name: "image of a bare version", got: ImageForVersion("1.36.3"), want: "kindest/node:v1.36.3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(tt.got).To(Equal(tt.want))
		})
	}
}
