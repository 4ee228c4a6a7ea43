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
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// A `go test -fuzz` coordinator replaces its worker process now and then (to
// minimize an input, at the end), without the worker running its cleanup. A
// worker's etcd and kube-apiserver must then neither keep the worker's pipes
// open (the coordinator would wait for them forever) nor outlive it.

// prepareFuzzWorker does both for a fuzzing worker, and nothing otherwise.
func prepareFuzzWorker() error {
	if !slices.ContainsFunc(os.Args, func(arg string) bool { return strings.HasPrefix(arg, "-test.fuzzworker") }) {
		return nil
	}
	// The pipes to the coordinator are file descriptors 3 and 4, passed
	// without close-on-exec.
	syscall.CloseOnExec(3)
	syscall.CloseOnExec(4)
	return dieWithTheWorker()
}

// dieWithTheWorker points KUBEBUILDER_ASSETS at wrappers that start etcd and
// kube-apiserver with a parent-death signal (setpriv, from util-linux).
func dieWithTheWorker() error {
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	wrappers, err := os.MkdirTemp("", "capk-fuzz-worker-")
	if err != nil {
		return err
	}
	for _, name := range []string{"etcd", "kube-apiserver"} {
		script := fmt.Sprintf("#!/bin/sh\nexec setpriv --pdeathsig KILL -- %q \"$@\"\n", filepath.Join(assets, name))
		if err := os.WriteFile(filepath.Join(wrappers, name), []byte(script), 0o755); err != nil {
			return err
		}
	}
	return os.Setenv("KUBEBUILDER_ASSETS", wrappers)
}
