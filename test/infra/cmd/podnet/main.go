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

// Command podnet is the pod network of workload clusters built from the
// offline node image: a DaemonSet (test/infra/podnet/podnet.yaml, its image is
// preloaded in the node image) that, from the Nodes' spec.podCIDRs,
//   - writes the node's CNI configuration (ptp + host-local on its own CIDR),
//   - routes every other node's CIDR via that node's InternalIP when it is on
//     this node's link (host-gw: node Pods on one hosting node share its
//     subnet), else through a VXLAN device (node Pods on other hosting nodes;
//     -encap always tunnels every peer, never none),
//   - masquerades pod traffic that leaves the cluster's pod CIDRs.
//
// The hosting cluster of the tests (test/infra/hosting/nodes.sh) runs it on
// each hosting node for the routes only (-cni-conf "" -masquerade=false).
//
// It watches Nodes, so it reacts to joins and removals without polling.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig (default: the in-cluster ServiceAccount)")
	nodeName := flag.String("node-name", os.Getenv("NODE_NAME"), "name of this Node (default: $NODE_NAME, else the hostname)")
	cniConf := flag.String("cni-conf", "/etc/cni/net.d/10-podnet.conflist", "CNI configuration file to write (none if empty)")
	masquerade := flag.Bool("masquerade", true, "masquerade pod traffic that leaves the cluster's pod CIDRs")
	encap := flag.String("encap", encapAuto, "which peers VXLAN reaches: auto (those not on this node's link), always or never")
	flag.Parse()
	if !slices.Contains(encapModes, *encap) {
		fmt.Fprintf(os.Stderr, "podnet: -encap %q: must be one of %s\n", *encap, strings.Join(encapModes, ", "))
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	a := &agent{nodeName: *nodeName, cniConf: *cniConf, masquerade: *masquerade, encap: *encap, run: runCommand}
	if err := run(ctx, *kubeconfig, a); err != nil {
		fmt.Fprintln(os.Stderr, "podnet:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, kubeconfig string, a *agent) error {
	if a.nodeName == "" {
		var err error
		if a.nodeName, err = os.Hostname(); err != nil {
			return err
		}
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	cfg.UserAgent = "podnet"
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	if err := waitForAPI(ctx, cfg); err != nil {
		return err
	}
	factory := informers.NewSharedInformerFactory(client, 0)
	nodes := factory.Core().V1().Nodes()
	wake := make(chan struct{}, 1)
	notify := func(any) {
		select {
		case wake <- struct{}{}:
		default:
		}
	}
	if _, err := nodes.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: notify, UpdateFunc: func(_, n any) { notify(n) }, DeleteFunc: notify,
	}); err != nil {
		return err
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-wake:
		}
		list, err := nodes.Lister().List(labels.Everything())
		if err == nil {
			err = a.sync(list)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "podnet: sync:", err)
			time.AfterFunc(2*time.Second, func() { notify(nil) })
		}
	}
}

// internalIP is the node's first InternalIP address.
func internalIP(n *corev1.Node) string {
	for _, a := range n.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			return a.Address
		}
	}
	return ""
}

// waitForAPI asks the API server for its version every half second until it
// answers. A new node reaches it through the kubernetes Service's ClusterIP,
// which works only once kube-proxy has programmed it; the informers' own
// retries back off, doubling up to 30 s, and kept new Nodes NotReady for up
// to 35 s after kube-proxy was ready.
func waitForAPI(ctx context.Context, cfg *rest.Config) error {
	probe := rest.CopyConfig(cfg)
	probe.Timeout = time.Second
	client, err := kubernetes.NewForConfig(probe)
	if err != nil {
		return err
	}
	for {
		if _, err := client.Discovery().ServerVersion(); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}
