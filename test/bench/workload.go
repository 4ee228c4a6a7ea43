//go:build bench

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

package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/test/envtest"
)

// rawNamespace holds the Pods of the raw create rate.
const rawNamespace = "capk-bench-raw"

// The namespaces of the provider's clusters and of the baseline's machines
// are these prefixes and a number.
const (
	providerNamespacePrefix = "bench"
	baselineNamespacePrefix = "baseline"
)

// namespaceName is the i-th namespace of a prefix.
func namespaceName(prefix string, i int) string { return fmt.Sprintf("%s-%02d", prefix, i) }

// parallel calls fn(0) to fn(n-1) from workers goroutines and returns the
// errors (at most 10 of them).
func parallel(n, workers int, fn func(i int) error) error {
	jobs := make(chan int)
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Go(func() {
			for i := range jobs {
				if err := fn(i); err != nil {
					mu.Lock()
					if len(errs) < 10 {
						errs = append(errs, err)
					}
					mu.Unlock()
				}
			}
		})
	}
	for i := range n {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	return errors.Join(errs...)
}

// rawCreator creates and deletes the Pods of the raw create rate with a plain
// clientset.
type rawCreator struct {
	clientset *kubernetes.Clientset
}

// newRawCreator makes the clientset and the namespace of the raw Pods.
func newRawCreator(ctx context.Context, config *rest.Config) (*rawCreator, error) {
	clientset, err := kubernetes.NewForConfig(config)
	if err != nil {
		return nil, fmt.Errorf("creating the raw creator's client: %w", err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: rawNamespace}}
	if _, err := clientset.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("creating namespace %s: %w", rawNamespace, err)
	}
	return &rawCreator{clientset: clientset}, nil
}

// create creates pods simple Pods with workers goroutines and returns how long
// that took.
func (c *rawCreator) create(ctx context.Context, pods, workers int) (time.Duration, error) {
	start := time.Now()
	err := parallel(pods, workers, func(i int) error {
		_, err := c.clientset.CoreV1().Pods(rawNamespace).Create(ctx, rawPod(i), metav1.CreateOptions{})
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("creating the raw Pods: %w", err)
	}
	return time.Since(start), nil
}

// deleteAll deletes the raw Pods and waits until they are gone.
func (c *rawCreator) deleteAll(ctx context.Context) error {
	deleteNow := metav1.DeleteOptions{GracePeriodSeconds: ptr.To(int64(0))}
	if err := c.clientset.CoreV1().Pods(rawNamespace).DeleteCollection(ctx, deleteNow, metav1.ListOptions{}); err != nil {
		return fmt.Errorf("deleting the raw Pods: %w", err)
	}
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		list, err := c.clientset.CoreV1().Pods(rawNamespace).List(ctx, metav1.ListOptions{Limit: 1})
		return err == nil && len(list.Items) == 0, err
	})
	if err != nil {
		return fmt.Errorf("waiting for the raw Pods to be gone: %w", err)
	}
	return nil
}

// rawPod is a plain Pod of one container, never scheduled.
func rawPod(i int) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("raw-%05d", i), Labels: map[string]string{"app": "capk-bench-raw"}},
		Spec: corev1.PodSpec{
			AutomountServiceAccountToken:  ptr.To(false),
			TerminationGracePeriodSeconds: ptr.To(int64(0)),
			Containers:                    []corev1.Container{{Name: "pause", Image: "registry.k8s.io/pause:3.10"}},
		},
	}
}

// benchCluster is one workload cluster of the benchmark.
type benchCluster struct {
	namespace, name string
}

// benchMachine is one machine of the benchmark.
type benchMachine struct {
	cluster      benchCluster
	name         string
	controlPlane bool
}

// key is the machine's namespace/name, as the tracker knows it.
func (m benchMachine) key() client.ObjectKey {
	return client.ObjectKey{Namespace: m.cluster.namespace, Name: m.name}
}

// layout spreads the clusters over the namespaces of prefix and lists every
// cluster's machines: first the control-plane machine of every cluster, then
// the workers, as Cluster API creates them.
func layout(s Settings, prefix string) ([]benchCluster, []benchMachine) {
	clusters := make([]benchCluster, s.Clusters)
	for i := range clusters {
		clusters[i] = benchCluster{namespace: namespaceName(prefix, i%s.Namespaces), name: fmt.Sprintf("cluster-%03d", i)}
	}
	var machines []benchMachine
	for j := range s.MachinesPerCluster {
		for _, c := range clusters {
			m := benchMachine{cluster: c, name: fmt.Sprintf("%s-md-%02d", c.name, j), controlPlane: j == 0}
			if m.controlPlane {
				m.name = c.name + "-control-plane-0"
			}
			machines = append(machines, m)
		}
	}
	return clusters, machines
}

// setUpClusters creates the namespaces, Clusters and KubernetesClusters, waits
// until the provider provisioned every KubernetesCluster, and marks each
// Cluster's infrastructure provisioned, as Cluster API's Cluster controller would.
func setUpClusters(ctx context.Context, c client.Client, s Settings, clusters []benchCluster) error {
	for i := range s.Namespaces {
		if err := createNamespace(ctx, c, namespaceName(providerNamespacePrefix, i)); err != nil {
			return err
		}
	}
	if err := parallel(len(clusters), s.CreateWorkers, func(i int) error { return createCluster(ctx, c, clusters[i]) }); err != nil {
		return err
	}
	err := wait.PollUntilContextTimeout(ctx, time.Second, s.ProvisionTimeout, true, func(ctx context.Context) (bool, error) {
		list := &infrav1.KubernetesClusterList{}
		if err := c.List(ctx, list); err != nil {
			return false, err
		}
		provisioned := 0
		for _, kc := range list.Items {
			if ptr.Deref(kc.Status.Initialization.Provisioned, false) {
				provisioned++
			}
		}
		return provisioned == len(clusters), nil
	})
	if err != nil {
		return fmt.Errorf("waiting for the provider to provision %d KubernetesClusters: %w", len(clusters), err)
	}
	return nil
}

// waitAllWaiting waits until the provider reports every KubernetesMachine as
// waiting for its Cluster's infrastructure.
func waitAllWaiting(ctx context.Context, c client.Client, machines int, timeout time.Duration) error {
	err := wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		list := &infrav1.KubernetesMachineList{}
		if err := c.List(ctx, list); err != nil {
			return false, err
		}
		waiting := 0
		for _, km := range list.Items {
			c := meta.FindStatusCondition(km.Status.Conditions, infrav1.KubernetesMachinePodProvisionedCondition)
			if c != nil && c.Reason == infrav1.KubernetesMachineWaitingForClusterInfrastructureReason {
				waiting++
			}
		}
		return waiting == machines, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for the provider to see %d machines wait for their cluster: %w", machines, err)
	}
	return nil
}

// createCluster creates a Cluster and its KubernetesCluster, owned by it.
func createCluster(ctx context.Context, c client.Client, bc benchCluster) error {
	_, _, err := envtest.CreateCluster(ctx, c, bc.namespace, bc.name, envtest.ClusterOptions{
		Spec: infrav1.KubernetesClusterSpec{ControlPlaneService: infrav1.ControlPlaneService{Type: infrav1.ServiceTypeClusterIP}},
	})
	return err
}

// markInfrastructureProvisioned sets the Cluster's
// status.initialization.infrastructureProvisioned.
func markInfrastructureProvisioned(ctx context.Context, c client.Client, bc benchCluster) error {
	return envtest.MarkInfrastructureProvisioned(ctx, c, client.ObjectKey{Namespace: bc.namespace, Name: bc.name})
}

// createMachine does what the kubeadm bootstrap provider and Cluster API's
// Machine controller do for one machine: the bootstrap data Secret, the
// Machine that names it, and the KubernetesMachine owned by the Machine.
func createMachine(ctx context.Context, c client.Client, m benchMachine) error {
	cluster := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: m.cluster.namespace, Name: m.cluster.name}}
	_, _, err := envtest.CreateMachine(ctx, c, cluster, m.name, envtest.MachineOptions{
		ControlPlane:  m.controlPlane,
		BootstrapData: BootstrapData(m.cluster.namespace, m.cluster.name, m.controlPlane),
		Spec:          machineSpec(),
	})
	return err
}

// machineSpec is the spec of every KubernetesMachine of the benchmark, the
// provider's and the baseline's.
func machineSpec() infrav1.KubernetesMachineSpec {
	return infrav1.KubernetesMachineSpec{
		Image: "kindest/node:" + envtest.MachineVersion,
		Resources: infrav1.NodeResources{Requests: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("1Gi"),
		}},
	}
}

// deleteMachine deletes the machine's KubernetesMachine, Machine and bootstrap
// data Secret; the provider's finalizer keeps the KubernetesMachine until its
// node Pod, bootstrap Secret and claims are gone.
func deleteMachine(ctx context.Context, c client.Client, m benchMachine) error {
	meta := metav1.ObjectMeta{Namespace: m.cluster.namespace, Name: m.name}
	objects := []client.Object{
		&infrav1.KubernetesMachine{ObjectMeta: meta},
		&clusterv1.Machine{ObjectMeta: meta},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: meta.Namespace, Name: envtest.BootstrapDataSecretName(m.name)}},
	}
	for _, obj := range objects {
		if err := c.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting %T %s/%s: %w", obj, obj.GetNamespace(), obj.GetName(), err)
		}
	}
	return nil
}

// leftovers counts the provider's node Pods, bootstrap Secrets and claims still
// present in every namespace.
func leftovers(ctx context.Context, c client.Client) (pods, secrets, claims int, err error) {
	selector := client.MatchingLabels{infrav1.ManagedByLabel: infrav1.ManagedByValue}
	podList, secretList, claimList := &corev1.PodList{}, &corev1.SecretList{}, &corev1.PersistentVolumeClaimList{}
	for _, list := range []client.ObjectList{podList, secretList, claimList} {
		if err := c.List(ctx, list, selector); err != nil {
			return 0, 0, 0, fmt.Errorf("listing the provider's %T: %w", list, err)
		}
	}
	return len(podList.Items), len(secretList.Items), len(claimList.Items), nil
}
