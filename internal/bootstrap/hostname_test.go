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

package bootstrap

import (
	"testing"

	. "github.com/onsi/gomega"
)

func TestSubstituteHostnameReplacesInstanceDataVariables(t *testing.T) {
	g := NewWithT(t)
	data := []byte("name: '{{ ds.meta_data.local_hostname }}'\nother: {{ds.meta_data.hostname}}\nkept: {{ v1.local_hostname }}\n")
	got := string(substituteHostname(data, "node-a"))
	g.Expect(got).To(Equal("name: 'node-a'\nother: node-a\nkept: {{ v1.local_hostname }}\n"))
}
