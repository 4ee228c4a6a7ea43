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

package bench

import (
	"strings"
	"testing"

	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/internal/bootstrap"
)

func TestBootstrapDataIsWhatTheProviderRuns(t *testing.T) {
	for _, controlPlane := range []bool{true, false} {
		data := BootstrapData("bench-00", "cluster-007", controlPlane)
		script, err := bootstrap.Render(data, "cloud-config", bootstrap.Node{})
		if err != nil {
			t.Fatalf("control plane %t: the provider rejects the benchmark's bootstrap data: %v\n%s", controlPlane, err, data)
		}
		if len(script.IgnoredKeys) > 0 {
			t.Errorf("control plane %t: the provider ignores keys %v", controlPlane, script.IgnoredKeys)
		}
		want := "kubeadm join"
		if controlPlane {
			want = "kubeadm init"
		}
		if content := string(script.Content); !strings.Contains(content, want) {
			t.Errorf("control plane %t: the script does not run %q", controlPlane, want)
		}
		if !strings.Contains(string(data), "cluster-007-apiserver.bench-00.svc:6443") {
			t.Errorf("control plane %t: the data does not name the control-plane Service", controlPlane)
		}
	}
}
