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

package bootstrap

import "regexp"

// hostnameVariable matches the cloud-init instance-data variables bootstrap
// templates use for the machine's name; a node Pod has no instance data.
var hostnameVariable = regexp.MustCompile(`\{\{\s*ds\.meta_data\.(local_)?hostname\s*\}\}`)

// substituteHostname replaces {{ ds.meta_data.hostname }} and
// {{ ds.meta_data.local_hostname }} with the node's hostname, as cloud-init would.
func substituteHostname(data []byte, hostname string) []byte {
	return hostnameVariable.ReplaceAllLiteral(data, []byte(hostname))
}
