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

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
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
	restClient, err := rest.UnversionedRESTClientFor(healthConfig(rc.config))
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
			rc.setHealth(rc.probe(ctx, restClient), changed)
		}
	}
}

// healthConfig is the hosting cluster's config for plain requests such as
// /readyz: client-go joins the path to the server URL, whatever its form
// ("https://host:6443/", or a path behind a proxy), never by concatenation.
func healthConfig(config *rest.Config) *rest.Config {
	health := rest.CopyConfig(config)
	health.GroupVersion = &schema.GroupVersion{}
	health.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	return health
}

func (rc *remote) probe(ctx context.Context, restClient rest.Interface) error {
	ctx, cancel := context.WithTimeout(ctx, RequestTimeout)
	defer cancel()
	var status int
	err := restClient.Get().AbsPath("/readyz").Do(ctx).StatusCode(&status).Error()
	if err != nil && status == 0 {
		return fmt.Errorf("%w: %s: %v", ErrUnreachable, rc.description, err)
	}
	if status != http.StatusOK {
		return fmt.Errorf("%w: %s: /readyz answered %d %s", ErrUnreachable, rc.description, status, http.StatusText(status))
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
