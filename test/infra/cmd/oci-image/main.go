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

// Command oci-image assembles a container image without a container engine and
// writes it as an OCI image-layout tarball that `ctr images import` loads under
// its full reference (the io.containerd.image.name annotation), so images exist
// in containerd without any registry.
//
// Layers are uncompressed tar files (-layer, in order) plus, last, one layer
// made of single files (-file SRC:DEST[:MODE]). Uncompressed layers cost no
// gzip time on import, which matters for the ~1 GB node image on two cores.
//
//	oci-image -ref registry.k8s.io/pause:3.10.2 -out pause.tar \
//	  -file ./pause:/pause -entrypoint '["/pause"]' -user 65535:65535
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
)

// stringList is a repeatable flag.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

// options are the image's reference, layers and runtime configuration.
type options struct {
	ref        string
	out        string
	layers     stringList
	files      stringList
	env        stringList
	entrypoint []string
	cmd        []string
	user       string
	workdir    string
	stopSignal string
}

func main() {
	o, err := parseFlags(os.Args[1:])
	if err == nil {
		err = build(o)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "oci-image:", err)
		os.Exit(1)
	}
}

func parseFlags(args []string) (options, error) {
	var o options
	var entrypoint, cmd string
	fs := flag.NewFlagSet("oci-image", flag.ContinueOnError)
	fs.StringVar(&o.ref, "ref", "", "image reference, e.g. registry.k8s.io/pause:3.10.2 (required)")
	fs.StringVar(&o.out, "out", "", "OCI image-layout tarball to write (required)")
	fs.Var(&o.layers, "layer", "uncompressed tar file to add as a layer (repeatable, in order)")
	fs.Var(&o.files, "file", "SRC:DEST[:MODE] file for the last layer, mode in octal (repeatable)")
	fs.Var(&o.env, "env", "K=V environment variable of the image (repeatable)")
	fs.StringVar(&entrypoint, "entrypoint", "", "entrypoint as a JSON array")
	fs.StringVar(&cmd, "cmd", "", "command as a JSON array")
	fs.StringVar(&o.user, "user", "", "user[:group] the image runs as")
	fs.StringVar(&o.workdir, "workdir", "", "working directory")
	fs.StringVar(&o.stopSignal, "stop-signal", "", "signal that stops the container, e.g. SIGRTMIN+3")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if o.ref == "" || o.out == "" {
		return o, fmt.Errorf("-ref and -out are required")
	}
	if len(o.layers) == 0 && len(o.files) == 0 {
		return o, fmt.Errorf("an image needs at least one -layer or -file")
	}
	for _, spec := range o.files {
		if _, _, _, err := parseFileSpec(spec); err != nil {
			return o, err
		}
	}
	var err error
	if o.entrypoint, err = jsonArray("-entrypoint", entrypoint); err != nil {
		return o, err
	}
	o.cmd, err = jsonArray("-cmd", cmd)
	return o, err
}

func jsonArray(flagName, value string) ([]string, error) {
	if value == "" {
		return nil, nil
	}
	var out []string
	if err := json.Unmarshal([]byte(value), &out); err != nil {
		return nil, fmt.Errorf("%s must be a JSON array of strings: %w", flagName, err)
	}
	return out, nil
}
