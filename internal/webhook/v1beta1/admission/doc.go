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

// Package admission holds the tests of the webhooks as the API server calls
// them: a real kube-apiserver and etcd with the CRDs and the webhooks
// installed (test/envtest), conversion between the served versions, and the
// fuzzing of admission. The table tests of the validation rules themselves
// are in the webhook package and run without an API server.
package admission
