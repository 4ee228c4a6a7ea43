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
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/rest"
)

// cpuProfiles takes CPU profiles of the API server and the manager at once
// while the machines are provisioned (BENCH_PROFILE_SECONDS), and writes them
// next to the JSON figures, for go tool pprof.
type cpuProfiles struct {
	done chan error
}

// profileTarget is one process's pprof endpoint.
type profileTarget struct {
	name   string
	client *http.Client
	url    string
}

// managerProfile is the manager's pprof endpoint path (with its query) on
// the loopback address it was started with.
func managerProfile(address, path string) profileTarget {
	return profileTarget{name: "manager", client: http.DefaultClient, url: "http://" + address + path}
}

// startCPUProfiles starts both profiles; wait returns when both are written.
func startCPUProfiles(ctx context.Context, apiServer *rest.Config, managerAddress, dir string, duration time.Duration) (*cpuProfiles, error) {
	apiServerClient, err := rest.HTTPClientFor(apiServer)
	if err != nil {
		return nil, fmt.Errorf("a client for the API server's pprof endpoint: %w", err)
	}
	query := "/debug/pprof/profile?seconds=" + strconv.Itoa(int(duration.Seconds()))
	targets := []profileTarget{
		{name: "kube-apiserver", client: apiServerClient, url: strings.TrimSuffix(apiServer.Host, "/") + query},
		managerProfile(managerAddress, query),
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, err
	}
	p := &cpuProfiles{done: make(chan error, len(targets))}
	for _, target := range targets {
		path := filepath.Join(dir, "bench-cpu-"+target.name+".pprof")
		go func() { p.done <- target.fetch(ctx, path) }()
	}
	return p, nil
}

// wait waits for both profiles; a nil p has none.
func (p *cpuProfiles) wait() error {
	if p == nil {
		return nil
	}
	var errs []error
	for range cap(p.done) {
		errs = append(errs, <-p.done)
	}
	return errors.Join(errs...)
}

// fetch writes the target's profile to path.
func (t profileTarget) fetch(ctx context.Context, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, t.url, nil)
	if err != nil {
		return err
	}
	resp, err := t.client.Do(req)
	if err != nil {
		return fmt.Errorf("profiling %s: %w", t.name, err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("profiling %s: %s: %s", t.name, resp.Status, body)
	}
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("reading the profile of %s: %w", t.name, err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return fmt.Errorf("writing the profile of %s: %w", t.name, err)
	}
	return nil
}
