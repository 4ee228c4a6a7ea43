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
	"testing"
)

const exposition = `# HELP controller_runtime_reconcile_total Total number of reconciliations per controller
# TYPE controller_runtime_reconcile_total counter
controller_runtime_reconcile_total{controller="kubernetescluster",result="success"} 120
controller_runtime_reconcile_total{controller="kubernetesmachine",result="error"} 3
controller_runtime_reconcile_total{controller="kubernetesmachine",result="requeue"} 0
controller_runtime_reconcile_total{controller="kubernetesmachine",result="requeue_after"} 7
controller_runtime_reconcile_total{controller="kubernetesmachine",result="success"} 2990
workqueue_depth{name="kubernetesmachine"} 4
go_goroutines 118
odd_label{path="a \"quoted\" \\ value",controller="kubernetesmachine"} 1e3 1700000000000
`

func TestSumCounter(t *testing.T) {
	got, err := SumCounter(exposition, "controller_runtime_reconcile_total", map[string]string{"controller": "kubernetesmachine"})
	if err != nil || got != 3000 {
		t.Errorf("SumCounter = %g, %v; want 3000 (every result of the kubernetesmachine controller)", got, err)
	}
	got, err = SumCounter(exposition, "go_goroutines", nil)
	if err != nil || got != 118 {
		t.Errorf("go_goroutines = %g, %v; want 118", got, err)
	}
	got, err = SumCounter(exposition, "odd_label", map[string]string{"path": `a "quoted" \ value`})
	if err != nil || got != 1000 {
		t.Errorf("odd_label = %g, %v; want 1000", got, err)
	}
}

func TestSumCounterFailsWithoutSamples(t *testing.T) {
	if _, err := SumCounter(exposition, "controller_runtime_reconcile_total", map[string]string{"controller": "other"}); err == nil {
		t.Error("no error for a controller without samples")
	}
	if _, err := SumCounter("broken{a=1} 2\n", "broken", nil); err == nil {
		t.Error("no error for an unquoted label value")
	}
}
