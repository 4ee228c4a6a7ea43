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

// Package bench is the provider's scale benchmark (make bench): the real
// manager binary provisions and deletes many KubernetesMachines on a real
// kube-apiserver and etcd, while a node simulator in the benchmark plays the
// scheduler and the kubelets. In the same run a plain client makes the same
// writes for as many machines of its own (baseline.go): the rate the
// manager's is measured against. The API server's audit log tells the
// manager's requests from everyone else's.
//
// The benchmark itself builds only with the bench tag; the files without it
// (settings, audit log analysis, statistics, the report) are plain functions
// with unit tests that run with go test ./test/bench.
package bench
