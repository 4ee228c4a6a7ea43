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

// A hostingLimit is a failure in a node's log that no retry of the node can
// fix: its hosting node is short of something all node Pods on it share.
type hostingLimit struct {
	symptom *regexp.Regexp
	lack    string
}

// raiseInotify is what a hosting node short of inotify instances needs.
const raiseInotify = "raise fs.inotify.max_user_instances (to 8192) and fs.inotify.max_user_watches (to 524288) " +
	"on the hosting nodes, as kind asks"

var hostingLimits = []hostingLimit{{
	// systemd: "Failed to create control group inotify object: Too many open
	// files"; kubelet: "inotify_init: too many open files"; containerd:
	// "failed to create fsnotify watcher: too many open files".
	symptom: regexp.MustCompile(`(?i)(inotify|fsnotify)[^\n]*too many open files`),
	lack:    "the hosting node is out of inotify instances, which every node Pod on it shares (they all run as root): " + raiseInotify,
}, {
	// kubeadm, when containerd came up without its CRI plugin, which on a
	// hosting node short of inotify instances fails to start its watcher.
	symptom: regexp.MustCompile(`unknown service runtime\.v1\.RuntimeService`),
	lack:    "containerd in the node runs without its CRI service, as it does when the hosting node is out of inotify instances: " + raiseInotify,
}}

// HostingNodeLimit says what the hosting node lacks when the node's log shows a
// failure that only the hosting node's settings can fix, and "" otherwise.
func HostingNodeLimit(log string) string {
	for _, limit := range hostingLimits {
		if limit.symptom.MatchString(log) {
			return limit.lack
		}
	}
	return ""
}
