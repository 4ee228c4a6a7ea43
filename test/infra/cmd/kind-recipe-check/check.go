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

package main

import (
	"archive/tar"
	"bytes"
	"debug/buildinfo"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// checkImage compares the image with kind's recipe and returns every difference.
func checkImage(img *image, r recipe, programs []program, kubeVersion string) ([]string, error) {
	problems := checkConfig(img.config)
	for _, check := range []func() ([]string, error){
		func() ([]string, error) { return checkFiles(img, r) },
		func() ([]string, error) { return checkPrograms(img, r, programs) },
		func() ([]string, error) { return checkPackages(img, r) },
		func() ([]string, error) { return checkUnits(img, r), nil },
		func() ([]string, error) { return checkNode(img, kubeVersion) },
	} {
		found, err := check()
		if err != nil {
			return nil, err
		}
		problems = append(problems, found...)
	}
	return problems, nil
}

// checkConfig: the Dockerfile's ENV, STOPSIGNAL and the entrypoint kind's
// node image build sets.
func checkConfig(c v1.ConfigFile) []string {
	var problems []string
	if want := []string{"/usr/local/bin/entrypoint", "/sbin/init"}; !slices.Equal(c.Config.Entrypoint, want) {
		problems = append(problems, fmt.Sprintf("entrypoint is %q, want %q", c.Config.Entrypoint, want))
	}
	if !slices.Contains(c.Config.Env, "container=docker") {
		problems = append(problems, fmt.Sprintf("environment %q lacks container=docker", c.Config.Env))
	}
	if c.Config.StopSignal != "SIGRTMIN+3" {
		problems = append(problems, fmt.Sprintf("stop signal is %q, want SIGRTMIN+3", c.Config.StopSignal))
	}
	return problems
}

// checkFiles: every file of images/base/files is in the image byte for byte,
// with the Dockerfile's mode.
func checkFiles(img *image, r recipe) ([]string, error) {
	paths := make([]string, 0, len(r.files))
	for p := range r.files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	got, err := img.contents(paths...)
	if err != nil {
		return nil, err
	}
	var problems []string
	for _, p := range paths {
		want, err := os.ReadFile(r.files[p])
		if err != nil {
			return nil, err
		}
		data, ok := got[p]
		e, _, _ := img.lookup(p)
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("/%s: kind's file is missing", p))
		case !bytes.Equal(data, want):
			problems = append(problems, fmt.Sprintf("/%s: differs from kind's %s", p, r.files[p]))
		case e.header.Mode&0o7777 != fileMode(p):
			problems = append(problems, fmt.Sprintf("/%s: mode %o, kind's Dockerfile gives %o", p,
				e.header.Mode&0o7777, fileMode(p)))
		}
	}
	return problems, nil
}

// checkPrograms: every program kind builds is there, built from its module at
// the version of the Dockerfile's ARG (read from the Go build information).
func checkPrograms(img *image, r recipe, programs []program) ([]string, error) {
	paths := make([]string, 0, len(programs))
	for _, p := range programs {
		paths = append(paths, p.path)
	}
	got, err := img.contents(paths...)
	if err != nil {
		return nil, err
	}
	var problems []string
	for _, p := range programs {
		if problem := checkProgram(p, got[p.path], r.args[p.arg]); problem != "" {
			problems = append(problems, "/"+p.path+": "+problem)
		}
	}
	return problems, nil
}

func checkProgram(p program, data []byte, want string) string {
	if want == "" {
		return "kind's Dockerfile has no ARG " + p.arg
	}
	if data == nil {
		return "missing"
	}
	info, err := buildinfo.Read(bytes.NewReader(data))
	if err != nil {
		return "no Go build information: " + err.Error()
	}
	got := moduleVersion(info, p.module)
	if got != want {
		return fmt.Sprintf("built from %s %q, kind's %s is %s", p.module, got, p.arg, want)
	}
	return ""
}

// moduleVersion is the version of module in the build, the main module's or a
// dependency's; "" when the binary has none of it.
func moduleVersion(info *buildinfo.BuildInfo, module string) string {
	if info.Main.Path == module {
		return info.Main.Version
	}
	for _, dep := range info.Deps {
		if dep.Path == module {
			if dep.Replace != nil {
				return dep.Replace.Version
			}
			return dep.Version
		}
	}
	return ""
}

// checkPackages: every package of the Dockerfile's clean-install is installed.
func checkPackages(img *image, r recipe) ([]string, error) {
	got, err := img.contents("var/lib/dpkg/status")
	if err != nil {
		return nil, err
	}
	installed := installedPackages(got["var/lib/dpkg/status"])
	var problems []string
	for _, p := range r.packages {
		if !installed[p] {
			problems = append(problems, "package "+p+" of kind's Dockerfile is not installed")
		}
	}
	return problems, nil
}

// checkUnits: the units the Dockerfile enables are wanted by
// multi-user.target, the ones it masks link to /dev/null.
func checkUnits(img *image, r recipe) []string {
	var problems []string
	for _, u := range r.enabled {
		if !img.isSymlink("etc/systemd/system/multi-user.target.wants/"+u, "") {
			problems = append(problems, u+" is not enabled (kind's Dockerfile enables it)")
		}
	}
	for _, u := range r.masked {
		if !img.isSymlink("etc/systemd/system/"+u, "/dev/null") {
			problems = append(problems, u+" is not masked (kind's Dockerfile masks it)")
		}
	}
	return problems
}

// isSymlink reports whether p itself is a symbolic link, to target unless
// target is empty.
func (img *image) isSymlink(p, target string) bool {
	e, ok := img.entries[p]
	return ok && e.header.Typeflag == tar.TypeSymlink && (target == "" || e.header.Linkname == target)
}

// checkNode: what the Dockerfile's RUN lines and `kind build node-image`
// add: /sbin/init, /etc/kubernetes/manifests, the runtime spec with kind's
// hook, the Kubernetes binaries, /kind/version, the preloaded image store.
func checkNode(img *image, kubeVersion string) ([]string, error) {
	got, err := img.contents("kind/version", "etc/containerd/cri-base.json")
	if err != nil {
		return nil, err
	}
	var problems []string
	if _, resolved, _ := img.lookup("sbin/init"); resolved != "usr/lib/systemd/systemd" {
		problems = append(problems, fmt.Sprintf("/sbin/init resolves to /%s, want /usr/lib/systemd/systemd", resolved))
	}
	for _, p := range []string{"usr/bin/kubeadm", "usr/bin/kubelet", "usr/bin/kubectl",
		"var/lib/containerd/io.containerd.metadata.v1.bolt/meta.db"} {
		if e, _, ok := img.lookup(p); !ok || e.header.Typeflag != tar.TypeReg {
			problems = append(problems, "/"+p+" is missing")
		}
	}
	if e, _, ok := img.lookup("etc/kubernetes/manifests"); !ok || e.header.Typeflag != tar.TypeDir {
		problems = append(problems, "/etc/kubernetes/manifests is missing")
	}
	if v := string(got["kind/version"]); v != kubeVersion {
		problems = append(problems, fmt.Sprintf("/kind/version is %q, want %q", v, kubeVersion))
	}
	return append(problems, checkRuntimeSpec(got["etc/containerd/cri-base.json"])...), nil
}

// checkRuntimeSpec: cri-base.json is `ctr oci spec` with kind's
// createContainer hook and without rlimits.
func checkRuntimeSpec(data []byte) []string {
	var spec struct {
		Process map[string]json.RawMessage `json:"process"`
		Hooks   struct {
			CreateContainer []struct {
				Path string `json:"path"`
			} `json:"createContainer"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(data, &spec); err != nil {
		return []string{"/etc/containerd/cri-base.json: " + err.Error()}
	}
	var problems []string
	if _, ok := spec.Process["rlimits"]; ok {
		problems = append(problems, "/etc/containerd/cri-base.json sets rlimits; kind's deletes them")
	}
	if len(spec.Hooks.CreateContainer) == 0 ||
		spec.Hooks.CreateContainer[len(spec.Hooks.CreateContainer)-1].Path != "/kind/bin/mount-product-files.sh" {
		problems = append(problems, "/etc/containerd/cri-base.json lacks kind's createContainer hook")
	}
	return problems
}

// summary says what was compared, for the line printed on success.
func summary(r recipe, programs []program) string {
	return strings.Join([]string{
		fmt.Sprintf("%d files", len(r.files)),
		fmt.Sprintf("%d programs", len(programs)),
		fmt.Sprintf("%d packages", len(r.packages)),
		fmt.Sprintf("%d units", len(r.enabled)+len(r.masked)),
	}, ", ")
}
