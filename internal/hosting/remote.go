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

package hosting

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"k8s.io/apimachinery/pkg/types"
)

// remote is a running cached client for one remote hosting cluster.
type remote struct {
	cluster          cluster.Cluster
	config           *rest.Config
	cancel           context.CancelFunc
	hash             [32]byte
	defaultNamespace string
	description      string
	users            map[types.NamespacedName]struct{}

	mu        sync.Mutex
	lastError error
}

func (rc *remote) stop() { rc.cancel() }

func (rc *remote) hostingCluster(namespace string) *Cluster {
	if namespace == "" {
		namespace = rc.defaultNamespace
	}
	return &Cluster{
		Client: rc.cluster.GetClient(), Reader: rc.cluster.GetAPIReader(), Config: rc.config,
		Namespace: namespace, Description: rc.description,
	}
}

// healthy returns the last health check's error.
func (rc *remote) healthy() error {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.lastError
}

// checkHealth probes /readyz until ctx ends and calls changed whenever the result
// flips between healthy and not.
func (rc *remote) checkHealth(ctx context.Context, changed func()) {
	httpClient, err := rest.HTTPClientFor(rc.config)
	if err != nil {
		rc.setHealth(fmt.Errorf("%w: %s: %v", ErrUnreachable, rc.description, err), changed)
		return
	}
	ticker := time.NewTicker(HealthCheckInterval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
			rc.setHealth(rc.probe(ctx, httpClient), changed)
		}
	}
}

func (rc *remote) probe(ctx context.Context, httpClient *http.Client) error {
	ctx, cancel := context.WithTimeout(ctx, RequestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rc.config.Host+"/readyz", nil)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrUnreachable, rc.description, err)
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrUnreachable, rc.description, err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%w: %s: /readyz answered %s", ErrUnreachable, rc.description, resp.Status)
	}
	return nil
}

func (rc *remote) setHealth(err error, changed func()) {
	rc.mu.Lock()
	flipped := (err == nil) != (rc.lastError == nil)
	rc.lastError = err
	rc.mu.Unlock()
	if flipped {
		changed()
	}
}
