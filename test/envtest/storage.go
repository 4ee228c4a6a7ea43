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

package envtest

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// StoredAPIVersion reads an object straight from etcd and returns the
// apiVersion the API server stored it as: what a storage version migration
// changes, which no API read shows (reads convert to the version asked for).
func (e *Environment) StoredAPIVersion(ctx context.Context, group, resource, namespace, name string) (string, error) {
	etcd, err := clientv3.New(clientv3.Config{
		Endpoints: []string{e.env.ControlPlane.Etcd.URL.String()}, DialTimeout: 5 * time.Second,
	})
	if err != nil {
		return "", fmt.Errorf("connecting to etcd: %w", err)
	}
	defer func() { _ = etcd.Close() }()
	key := path.Join("/registry", group, resource, namespace, name)
	response, err := etcd.Get(ctx, key)
	if err != nil {
		return "", fmt.Errorf("reading %s from etcd: %w", key, err)
	}
	if len(response.Kvs) == 0 {
		return "", fmt.Errorf("no key %s in etcd", key)
	}
	var stored struct {
		APIVersion string `json:"apiVersion"`
	}
	if err := json.Unmarshal(response.Kvs[0].Value, &stored); err != nil {
		return "", fmt.Errorf("decoding %s: %w", key, err)
	}
	return stored.APIVersion, nil
}
