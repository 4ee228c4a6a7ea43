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

// Package apiprobe measures how long a Kubernetes API server is unreachable
// during a rollout: it polls /readyz at an interval and records every failure.
// Cluster API's upgrade spec in test/capi-e2e runs it through the workload
// cluster's endpoint.
package apiprobe

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Probe polls /readyz of one API server until Stop.
type Probe struct {
	interval time.Duration
	cancel   context.CancelFunc
	done     chan struct{}
	started  time.Time
	stopOnce sync.Once

	mu      sync.Mutex
	count   int
	failed  []string // "<seconds since start>s: <error>"
	run     int      // failures in a row, now
	longest int      // most failures in a row
}

// Start polls the API server of cfg every interval, each request with a
// timeout of two intervals at most.
func Start(ctx context.Context, cfg *rest.Config, interval time.Duration) (*Probe, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.Timeout = 2 * interval
	clients, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	p := &Probe{interval: interval, cancel: cancel, done: make(chan struct{}), started: time.Now()}
	go p.loop(ctx, clients.Discovery().RESTClient())
	return p, nil
}

func (p *Probe) loop(ctx context.Context, api rest.Interface) {
	defer close(p.done)
	ticker := time.NewTicker(p.interval)
	defer ticker.Stop()
	for {
		body, err := api.Get().AbsPath("/readyz").DoRaw(ctx)
		if ctx.Err() != nil {
			return
		}
		if err == nil && string(body) != "ok" {
			err = fmt.Errorf("answered %q", body)
		}
		p.record(err)
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

func (p *Probe) record(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.count++
	if err == nil {
		p.run = 0
		return
	}
	p.run++
	p.longest = max(p.longest, p.run)
	p.failed = append(p.failed, time.Since(p.started).Round(time.Second).String()+": "+err.Error())
}

// Stop ends the polling; it may be called more than once.
func (p *Probe) Stop() {
	p.stopOnce.Do(func() {
		p.cancel()
		<-p.done
	})
}

// Probes is how many requests have been answered or have failed.
func (p *Probe) Probes() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.count
}

// LongestOutage is the longest run of failed probes, as time.
func (p *Probe) LongestOutage() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return time.Duration(p.longest) * p.interval
}

// Report summarises the probes: how many failed, the unavailable seconds (a
// failed probe stands for its interval) and the failures themselves.
func (p *Probe) Report() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := fmt.Sprintf("%d probes of /readyz, %d failed: %s unavailable, longest outage %s",
		p.count, len(p.failed), time.Duration(len(p.failed))*p.interval, time.Duration(p.longest)*p.interval)
	for _, f := range p.failed {
		s += "\n  " + f
	}
	return s
}
