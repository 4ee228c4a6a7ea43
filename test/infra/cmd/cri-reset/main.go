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

// Command cri-reset stops and removes every Pod sandbox of a CRI runtime, as
// `kubeadm reset` does with crictl (which Debian does not package). Going
// through the CRI rather than killing processes matters: StopPodSandbox runs
// the CNI DEL that deletes the veth, releases the host-local IP, drops the CNI
// result cache in /var/lib/cni and unmounts the network namespace. Run it
// after the kubelet has stopped, or the kubelet recreates the sandboxes.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func main() {
	socket := flag.String("socket", "", "path of the CRI runtime's unix socket")
	grace := flag.Duration("grace", 10*time.Second, "time a container gets between its stop signal and SIGKILL")
	flag.Parse()
	if *socket == "" {
		fmt.Fprintln(os.Stderr, "cri-reset: -socket is required")
		os.Exit(2)
	}
	if err := run(*socket, *grace); err != nil {
		fmt.Fprintln(os.Stderr, "cri-reset:", err)
		os.Exit(1)
	}
}

func run(socket string, grace time.Duration) error {
	conn, err := grpc.NewClient("unix://"+socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close() }() // nothing was written
	rt := runtimeapi.NewRuntimeServiceClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), grace+2*time.Minute)
	defer cancel()
	if err := stopContainers(ctx, rt, grace); err != nil {
		return err
	}
	return removeSandboxes(ctx, rt)
}

// stopContainers stops all running containers at once, each with its image's
// stop signal and the grace period, so a node Pod's systemd gets the chance to
// shut down cleanly and the total wait is one grace period, not one per Pod.
func stopContainers(ctx context.Context, rt runtimeapi.RuntimeServiceClient, grace time.Duration) error {
	list, err := rt.ListContainers(ctx, &runtimeapi.ListContainersRequest{})
	if err != nil {
		return fmt.Errorf("list containers: %w", err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(list.Containers))
	for _, c := range list.Containers {
		if c.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
			continue
		}
		wg.Add(1)
		go func(id string) {
			defer wg.Done()
			req := &runtimeapi.StopContainerRequest{ContainerId: id, Timeout: int64(grace.Seconds())}
			if _, err := rt.StopContainer(ctx, req); err != nil {
				errs <- fmt.Errorf("stop container %s: %w", id, err)
			}
		}(c.Id)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		return err
	}
	fmt.Printf("stopped %d containers\n", len(list.Containers))
	return nil
}

// removeSandboxes stops (CNI DEL, netns unmount) and then removes every sandbox.
func removeSandboxes(ctx context.Context, rt runtimeapi.RuntimeServiceClient) error {
	list, err := rt.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	if err != nil {
		return fmt.Errorf("list sandboxes: %w", err)
	}
	for _, sb := range list.Items {
		if _, err := rt.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: sb.Id}); err != nil {
			return fmt.Errorf("stop sandbox %s (%s/%s): %w", sb.Id, sb.Metadata.Namespace, sb.Metadata.Name, err)
		}
		if _, err := rt.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: sb.Id}); err != nil {
			return fmt.Errorf("remove sandbox %s: %w", sb.Id, err)
		}
	}
	fmt.Printf("removed %d pod sandboxes\n", len(list.Items))
	return nil
}
