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

// Command timeline shows where the time to a working cluster went: per
// machine, when its Machine was created, its bootstrap data was ready, its
// node Pod was created, scheduled and started, systemd in the node reached
// its target, the bootstrap began and ended, and its Node registered and
// became Ready; per cluster, when the control plane was initialized and the
// Cluster became Available. Everything comes from the API objects and the node
// Pods' console logs (no exec into a node). It prints a table and writes the
// timeline as JSON and as an SVG Gantt chart.
//
// usage: timeline -kubeconfig <management> -namespace <ns> -cluster <name> [-floor] [-json file] [-svg file]
//
// With -floor it reads a floor run of make bench-nodes instead: node Pods
// started by hand with the provider's labels for <name>, no Cluster API
// objects; the timeline then starts at the first node Pod's creation and
// ends when every Node is Ready.
//
// The node Pods are looked for on the management cluster, in the cluster's
// namespace (the default hosting); the workload cluster's kubeconfig is its
// Cluster API Secret <cluster>-kubeconfig.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

func main() {
	kubeconfig := flag.String("kubeconfig", os.Getenv("KUBECONFIG"), "the management cluster's kubeconfig")
	namespace := flag.String("namespace", "default", "the Cluster's namespace")
	cluster := flag.String("cluster", "", "the Cluster's name")
	jsonOut := flag.String("json", "", "write the timeline as JSON to this file")
	svgOut := flag.String("svg", "", "write the timeline as an SVG Gantt chart to this file")
	floor := flag.Bool("floor", false, "read a floor run of make bench-nodes: node Pods without Cluster API objects")
	flag.Parse()
	if *cluster == "" {
		fail(fmt.Errorf("-cluster is required"))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	t, err := collect(ctx, *kubeconfig, *namespace, *cluster, *floor)
	if err != nil {
		fail(err)
	}
	if err := writeTable(os.Stdout, t); err != nil {
		fail(err)
	}
	if err := writeFiles(t, *jsonOut, *svgOut); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "timeline:", err)
	os.Exit(1)
}

// collect reads everything the timeline needs from the management cluster,
// the node Pods' logs and the workload cluster.
func collect(ctx context.Context, kubeconfig, namespace, cluster string, floor bool) (Timeline, error) {
	config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return Timeline{}, fmt.Errorf("reading the kubeconfig: %w", err)
	}
	dyn, err := dynamic.NewForConfig(config)
	if err != nil {
		return Timeline{}, err
	}
	core, err := kubernetes.NewForConfig(config)
	if err != nil {
		return Timeline{}, err
	}
	m := &management{dynamic: dyn, core: core, namespace: namespace, cluster: cluster}
	if floor {
		return m.collectFloor(ctx)
	}
	clusterMilestones, err := m.clusterMilestones(ctx)
	if err != nil {
		return Timeline{}, err
	}
	machines, err := m.machines(ctx)
	if err != nil {
		return Timeline{}, err
	}
	if err := m.addNodePods(ctx, machines); err != nil {
		return Timeline{}, err
	}
	if err := m.addNodes(ctx, machines); err != nil {
		return Timeline{}, err
	}
	return buildTimeline(namespace, cluster, clusterMilestones, machines), nil
}

func writeFiles(t Timeline, jsonOut, svgOut string) error {
	if jsonOut != "" {
		data, err := json.MarshalIndent(t, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(jsonOut, append(data, '\n'), 0o644); err != nil { //nolint:gosec // a report
			return err
		}
	}
	if svgOut != "" {
		f, err := os.Create(svgOut) //nolint:gosec // a path the user gave
		if err != nil {
			return err
		}
		if err := writeSVG(f, t); err != nil {
			_ = f.Close()
			return err
		}
		return f.Close()
	}
	return nil
}
