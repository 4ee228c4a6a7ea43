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

package crash_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"

	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	infracontroller "github.com/capi-kubernetes/cluster-api-provider-kubernetes/internal/controller"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/internal/hosting"
)

// errKilled is what every request of a killed manager gets.
var errKilled = errors.New("the manager was killed")

// writeBudget counts the API writes of one manager process (every client it
// builds shares it) and kills the manager right after the write numbered
// killAfter has been done by the API server: nothing it would do next happens.
// Writes the API server refused (a conflict) are not counted.
type writeBudget struct {
	killAfter int // 0: never
	mu        sync.Mutex
	writes    int
	killedBy  string
	killed    chan struct{}
}

func newWriteBudget(killAfter int) *writeBudget {
	return &writeBudget{killAfter: killAfter, killed: make(chan struct{})}
}

func (b *writeBudget) dead() bool {
	select {
	case <-b.killed:
		return true
	default:
		return false
	}
}

// count records a write that reached the API server.
func (b *writeBudget) count(req *http.Request) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.writes++
	if b.writes == b.killAfter {
		b.killedBy = req.Method + " " + req.URL.Path
		close(b.killed)
	}
}

func (b *writeBudget) total() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.writes
}

// killingTransport sends requests until the budget kills the manager.
type killingTransport struct {
	next   http.RoundTripper
	budget *writeBudget
}

func (t *killingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.budget.dead() {
		return nil, errKilled
	}
	resp, err := t.next.RoundTrip(req)
	if err == nil && isWrite(req) && resp.StatusCode < 300 {
		t.budget.count(req)
	}
	return resp, err
}

// isWrite tells the requests that change state; events are sent in the
// background in no fixed order, so they are not crash points.
func isWrite(req *http.Request) bool {
	return req.Method != http.MethodGet && !strings.HasSuffix(req.URL.Path, "/events")
}

// manager is one run of the provider's controllers, as cmd/main.go sets them
// up, on a connection that can be killed.
type manager struct {
	budget  *writeBudget
	cancel  context.CancelFunc
	stopped chan struct{}
	err     error // why it stopped, once stopped is closed
}

func startManager(killAfter int) (*manager, error) {
	budget := newWriteBudget(killAfter)
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return &killingTransport{next: rt, budget: budget} })
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 env.Scheme,
		Cache:                  hosting.ManagementCacheOptions(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		return nil, err
	}
	if err := setupControllers(mgr); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &manager{budget: budget, cancel: cancel, stopped: make(chan struct{})}
	go func() {
		m.err = mgr.Start(ctx)
		close(m.stopped)
	}()
	go func() {
		select {
		case <-budget.killed:
			cancel()
		case <-ctx.Done():
		}
	}()
	return m, nil
}

func setupControllers(mgr ctrl.Manager) error {
	return infracontroller.Setup(context.Background(), mgr, infracontroller.Options{
		Reconcile:  controller.Options{MaxConcurrentReconciles: 10},
		HostingQPS: 100, HostingBurst: 200,
	})
}

// stop ends the manager and waits until it stopped.
func (m *manager) stop() error {
	m.cancel()
	<-m.stopped
	return m.err
}

// supervisor restarts the provider once it is killed, as a Deployment would.
type supervisor struct {
	mu        sync.Mutex
	current   *manager
	first     *manager
	restarted chan struct{}
	err       error
}

func supervise(killAfter int) (*supervisor, error) {
	first, err := startManager(killAfter)
	if err != nil {
		return nil, err
	}
	s := &supervisor{current: first, first: first, restarted: make(chan struct{})}
	go s.restartWhenKilled()
	return s, nil
}

func (s *supervisor) restartWhenKilled() {
	defer close(s.restarted)
	select {
	case <-s.first.budget.killed:
	case <-s.first.stopped:
		return
	}
	<-s.first.stopped
	next, err := startManager(0)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.current, s.err = next, err
}

// stop ends whichever manager runs; it returns how the first one was killed
// ("" when it was not) and the writes it made.
func (s *supervisor) stop() (killedBy string, writes int, err error) {
	first := s.first
	if !first.budget.dead() {
		err = first.stop()
		<-s.restarted
		if first.budget.dead() { // killed while stopping: its successor runs
			err = errors.Join(err, s.stopCurrent())
		}
		return first.budget.killedBy, first.budget.total(), err
	}
	<-s.restarted
	return first.budget.killedBy, first.budget.total(), s.stopCurrent()
}

func (s *supervisor) stopCurrent() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	return s.current.stop()
}
