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

// Command kind-recipe-check compares a node image (an OCI image-layout
// tarball, as test/infra/node-image/build-kind.sh writes it) with kind's own
// recipe, read from the kind module's images/base folder, and fails on any
// difference:
//   - every file of images/base/files is in the image byte for byte, with the
//     mode the Dockerfile's COPY gives it;
//   - every program the Dockerfile builds from source was built from its
//     module at the version of the Dockerfile's ARG (Go build information);
//   - every package of its clean-install is installed (dpkg's status);
//   - the units it enables and masks are enabled and masked;
//   - its entrypoint, environment and stop signal, /sbin/init,
//     /etc/kubernetes/manifests, the runtime spec with kind's hook, and what
//     `kind build node-image` adds: kubeadm, kubelet, kubectl, /kind/version
//     and the preloaded containerd store.
//
// Usage:
//
//	kind-recipe-check -image node.tar -recipe <kind>/images/base -kubernetes-version v1.36.3
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	imageFile := flag.String("image", "", "the node image, an OCI image-layout tarball")
	recipeDir := flag.String("recipe", "", "kind's images/base folder")
	kubeVersion := flag.String("kubernetes-version", "", "the Kubernetes version the image must carry")
	flag.Parse()
	if *imageFile == "" || *recipeDir == "" || *kubeVersion == "" {
		fmt.Fprintln(os.Stderr, "kind-recipe-check: -image, -recipe and -kubernetes-version are required")
		os.Exit(2)
	}
	problems, err := run(*imageFile, *recipeDir, *kubeVersion)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kind-recipe-check:", err)
		os.Exit(1)
	}
	if len(problems) > 0 {
		for _, p := range problems {
			fmt.Fprintln(os.Stderr, "kind-recipe-check:", p)
		}
		os.Exit(1)
	}
}

func run(imageFile, recipeDir, kubeVersion string) ([]string, error) {
	r, err := readRecipe(recipeDir)
	if err != nil {
		return nil, err
	}
	img, err := openImage(imageFile)
	if err != nil {
		return nil, err
	}
	problems, err := checkImage(img, r, kindPrograms, kubeVersion)
	if err == nil && len(problems) == 0 {
		fmt.Printf("%s follows kind's recipe: %s\n", imageFile, summary(r, kindPrograms))
	}
	return problems, err
}
