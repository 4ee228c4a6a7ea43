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

package controller

import "regexp"

// secretFlag matches the values of kubeadm flags that carry credentials, as they
// appear in the join command kubeadm init prints.
var secretFlag = regexp.MustCompile(`(--(?:token|certificate-key|discovery-token-ca-cert-hash)[ =])\S+`)

// redactSecrets hides credentials a node's log may hold before the log is shown
// in a condition or an event.
func redactSecrets(log string) string {
	return secretFlag.ReplaceAllString(log, "${1}<redacted>")
}
