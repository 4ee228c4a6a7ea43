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

package apiprobe

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// TestProbeRecordsOutages runs the probe against a server that answers ok,
// then fails three times in a row, then answers ok again.
func TestProbeRecordsOutages(t *testing.T) {
	var requests atomic.Int32
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/readyz" {
			t.Errorf("probed %s, want /readyz", r.URL.Path)
		}
		if n := requests.Add(1); n >= 3 && n <= 5 {
			http.Error(w, "etcd not ready", http.StatusInternalServerError)
			return
		}
		_, _ = w.Write([]byte("ok"))
	}))
	defer server.Close()

	p, err := Start(context.Background(), &rest.Config{Host: server.URL}, 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for p.Probes() < 8 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	p.Stop()
	p.Stop() // a second Stop is harmless

	if got := p.Probes(); got < 8 {
		t.Fatalf("Probes() = %d after 10 s, want at least 8", got)
	}
	if got, want := p.LongestOutage(), 30*time.Millisecond; got != want {
		t.Errorf("LongestOutage() = %s, want %s", got, want)
	}
	report := p.Report()
	if !strings.Contains(report, "3 failed") || strings.Count(report, "etcd not ready") != 3 {
		t.Errorf("Report() does not list the three failures:\n%s", report)
	}
}

// TestProbeRefusesABadConfig checks that a config the client cannot use is an error.
func TestProbeRefusesABadConfig(t *testing.T) {
	if _, err := Start(context.Background(), &rest.Config{Host: "https://x",
		TLSClientConfig: rest.TLSClientConfig{CAFile: "/does/not/exist"}}, time.Second); err == nil {
		t.Fatal("Start accepted a CA file that does not exist")
	}
}
