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
	"time"
)

func TestPercentile(t *testing.T) {
	values := []time.Duration{}
	for i := 100; i >= 1; i-- { // unsorted on purpose
		values = append(values, time.Duration(i)*time.Millisecond)
	}
	tests := []struct {
		p    float64
		want time.Duration
	}{
		{50, 50 * time.Millisecond},
		{99, 99 * time.Millisecond},
		{100, 100 * time.Millisecond},
		{0.1, 1 * time.Millisecond},
	}
	for _, tt := range tests {
		if got := Percentile(values, tt.p); got != tt.want {
			t.Errorf("Percentile(1..100 ms, %g) = %s, want %s", tt.p, got, tt.want)
		}
	}
	if values[0] != 100*time.Millisecond {
		t.Error("Percentile sorted its argument in place")
	}
}

func TestPercentileOfFewValues(t *testing.T) {
	three := []time.Duration{3 * time.Second, time.Second, 2 * time.Second}
	if got := Percentile(three, 50); got != 2*time.Second {
		t.Errorf("p50 of 1, 2, 3 s = %s, want 2s", got)
	}
	if got := Percentile(three, 99); got != 3*time.Second {
		t.Errorf("p99 of 1, 2, 3 s = %s, want 3s", got)
	}
	if got := Percentile(nil, 99); got != 0 {
		t.Errorf("p99 of nothing = %s, want 0", got)
	}
}

func TestRates(t *testing.T) {
	if got := PerSecond(100, 4*time.Second); got != 25 {
		t.Errorf("PerSecond(100, 4s) = %g, want 25", got)
	}
	if got := PerSecond(100, 0); got != 0 {
		t.Errorf("PerSecond(100, 0) = %g, want 0", got)
	}
	if got := Ratio(1, 0); got != 0 {
		t.Errorf("Ratio(1, 0) = %g, want 0", got)
	}
}
