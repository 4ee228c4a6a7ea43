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
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// pprofServer answers a CPU profile request with body, and records the request.
func pprofServer(t *testing.T, body string, status int, requested *string) *httptest.Server {
	t.Helper()
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		*requested = r.URL.RequestURI()
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(server.Close)
	return server
}

func TestCPUProfilesAreWrittenForBothProcesses(t *testing.T) {
	var apiServerRequest, managerRequest string
	apiServer := pprofServer(t, "api server profile", http.StatusOK, &apiServerRequest)
	manager := pprofServer(t, "manager profile", http.StatusOK, &managerRequest)
	dir := filepath.Join(t.TempDir(), "out")
	// envtest's configuration names the API server with a trailing slash.
	profiles, err := startCPUProfiles(t.Context(), &rest.Config{Host: apiServer.URL + "/"},
		strings.TrimPrefix(manager.URL, "http://"), dir, 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := profiles.wait(); err != nil {
		t.Fatal(err)
	}
	for _, request := range []string{apiServerRequest, managerRequest} {
		if request != "/debug/pprof/profile?seconds=3" {
			t.Errorf("requested %q, want /debug/pprof/profile?seconds=3", request)
		}
	}
	for file, want := range map[string]string{"bench-cpu-kube-apiserver.pprof": "api server profile", "bench-cpu-manager.pprof": "manager profile"} {
		got, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil || string(got) != want {
			t.Errorf("%s: %q, %v; want %q", file, got, err, want)
		}
	}
}

func TestCPUProfileFailureNamesTheProcess(t *testing.T) {
	var apiServerRequest, managerRequest string
	apiServer := pprofServer(t, "404 page not found", http.StatusNotFound, &apiServerRequest)
	manager := pprofServer(t, "profile", http.StatusOK, &managerRequest)
	profiles, err := startCPUProfiles(t.Context(), &rest.Config{Host: apiServer.URL},
		strings.TrimPrefix(manager.URL, "http://"), t.TempDir(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	err = profiles.wait()
	if err == nil || !strings.Contains(err.Error(), "profiling kube-apiserver: 404 Not Found: 404 page not found") {
		t.Errorf("error %v does not name the API server and its answer", err)
	}
}

func TestNoProfilesWaitsForNothing(t *testing.T) {
	var none *cpuProfiles
	if err := none.wait(); err != nil {
		t.Errorf("wait without profiles: %v", err)
	}
}
