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
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
)

// simulatedNodes is how many fake nodes the simulator spreads node Pods over.
const simulatedNodes = 10

// simulator plays the scheduler and the kubelets for the provider's node Pods:
// it binds each new Pod to a fake node, reports it running and ready, and
// finishes the deletion of Pods being deleted, as a kubelet would.
type simulator struct {
	client   kubernetes.Interface
	factory  informers.SharedInformerFactory
	informer toolscache.SharedIndexInformer
	queue    workqueue.TypedRateLimitingInterface[string]
	workers  int
	nextIP   atomic.Uint32
	failures atomic.Int64
	// started are the Pods reported running, so that a stale informer copy
	// (bound, still Pending) does not make a second status write.
	started sync.Map

	mu sync.Mutex
	// podUIDs are the UIDs of the Pods seen for each machine (namespace/name).
	podUIDs map[string]map[types.UID]bool
	// lastError is the simulator's last failed API request.
	lastError error
}

// newSimulator watches the Pods labelled as the provider's.
func newSimulator(config *rest.Config, workers int) (*simulator, error) {
	clientset, err := kubernetes.NewForConfig(config)
	if err != nil {
		return nil, fmt.Errorf("creating the simulator's client: %w", err)
	}
	selector := labels.SelectorFromSet(labels.Set{infrav1.ManagedByLabel: infrav1.ManagedByValue}).String()
	factory := informers.NewSharedInformerFactoryWithOptions(clientset, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = selector }))
	s := &simulator{
		client:   clientset,
		factory:  factory,
		informer: factory.Core().V1().Pods().Informer(),
		queue:    workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]()),
		workers:  workers,
		podUIDs:  map[string]map[types.UID]bool{},
	}
	_, err = s.informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    s.added,
		UpdateFunc: func(_, obj any) { s.enqueue(obj) },
	})
	if err != nil {
		return nil, fmt.Errorf("watching node Pods: %w", err)
	}
	return s, nil
}

// start runs the informer and the workers until ctx ends.
func (s *simulator) start(ctx context.Context) error {
	s.factory.Start(ctx.Done())
	if !toolscache.WaitForCacheSync(ctx.Done(), s.informer.HasSynced) {
		return errors.New("the node simulator's Pod informer did not sync")
	}
	go func() {
		<-ctx.Done()
		s.queue.ShutDown()
	}()
	for range s.workers {
		go s.work(ctx)
	}
	return nil
}

// added records which machine the Pod belongs to and queues it.
func (s *simulator) added(obj any) {
	if pod, ok := obj.(*corev1.Pod); ok {
		machine := pod.Labels[infrav1.ClusterNamespaceLabel] + "/" + pod.Labels[infrav1.MachineNameLabel]
		s.mu.Lock()
		if s.podUIDs[machine] == nil {
			s.podUIDs[machine] = map[types.UID]bool{}
		}
		s.podUIDs[machine][pod.UID] = true
		s.mu.Unlock()
	}
	s.enqueue(obj)
}

func (s *simulator) enqueue(obj any) {
	if key, err := toolscache.MetaNamespaceKeyFunc(obj); err == nil {
		s.queue.Add(key)
	}
}

// duplicates are the machines that had more than one node Pod.
func (s *simulator) duplicates() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var machines []string
	for machine, uids := range s.podUIDs {
		if len(uids) > 1 {
			machines = append(machines, fmt.Sprintf("%s (%d Pods)", machine, len(uids)))
		}
	}
	sort.Strings(machines)
	return machines
}

// errorSummary tells how many of the simulator's requests failed, if any.
func (s *simulator) errorSummary() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lastError == nil {
		return ""
	}
	return fmt.Sprintf("%d failed simulator requests, the last: %v", s.failures.Load(), s.lastError)
}

func (s *simulator) work(ctx context.Context) {
	for {
		key, shutdown := s.queue.Get()
		if shutdown {
			return
		}
		if err := s.sync(ctx, key); err != nil {
			s.failures.Add(1)
			s.mu.Lock()
			s.lastError = err
			s.mu.Unlock()
			s.queue.AddRateLimited(key)
		} else {
			s.queue.Forget(key)
		}
		s.queue.Done(key)
	}
}

// sync moves one Pod on: deleted for good, bound, or running.
func (s *simulator) sync(ctx context.Context, key string) error {
	obj, exists, err := s.informer.GetIndexer().GetByKey(key)
	if err != nil || !exists {
		return err
	}
	pod, _ := obj.(*corev1.Pod)
	switch {
	case pod.DeletionTimestamp != nil:
		err := s.client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{
			GracePeriodSeconds: ptr.To(int64(0)), Preconditions: &metav1.Preconditions{UID: &pod.UID},
		})
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			return nil
		}
		return err
	case pod.Spec.NodeName == "":
		if err := s.bind(ctx, pod); err != nil {
			return err
		}
		return s.run(ctx, pod)
	case pod.Status.Phase != corev1.PodRunning:
		if _, done := s.started.Load(pod.UID); done {
			return nil
		}
		return s.run(ctx, pod)
	}
	return nil
}

// bind schedules the Pod to one of the fake nodes.
func (s *simulator) bind(ctx context.Context, pod *corev1.Pod) error {
	node := fmt.Sprintf("bench-node-%d", s.nextIP.Load()%simulatedNodes)
	binding := &corev1.Binding{
		ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID},
		Target:     corev1.ObjectReference{Kind: "Node", Name: node},
	}
	err := s.client.CoreV1().Pods(pod.Namespace).Bind(ctx, binding, metav1.CreateOptions{})
	if err != nil && !apierrors.IsConflict(err) { // Conflict: bound already
		return fmt.Errorf("binding Pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	return nil
}

// run reports the Pod running and ready, as its kubelet would.
func (s *simulator) run(ctx context.Context, pod *corev1.Pod) error {
	n := s.nextIP.Add(1)
	now := metav1.NewTime(time.Now())
	podIP := fmt.Sprintf("10.244.%d.%d", (n/250)%250, n%250+1)
	status := corev1.PodStatus{
		Phase:     corev1.PodRunning,
		HostIP:    "172.18.0.2",
		HostIPs:   []corev1.HostIP{{IP: "172.18.0.2"}},
		PodIP:     podIP,
		PodIPs:    []corev1.PodIP{{IP: podIP}},
		StartTime: &now,
		QOSClass:  pod.Status.QOSClass,
	}
	for _, conditionType := range []corev1.PodConditionType{corev1.PodScheduled, corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady} {
		status.Conditions = append(status.Conditions, corev1.PodCondition{Type: conditionType, Status: corev1.ConditionTrue, LastTransitionTime: now})
	}
	for _, container := range pod.Spec.Containers {
		status.ContainerStatuses = append(status.ContainerStatuses, corev1.ContainerStatus{
			Name: container.Name, Image: container.Image, ImageID: container.Image, Ready: true, Started: ptr.To(true),
			ContainerID: fmt.Sprintf("containerd://%032x", n),
			State:       corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
		})
	}
	patch, err := json.Marshal(map[string]any{"status": status})
	if err != nil {
		return err
	}
	_, err = s.client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.MergePatchType, patch, metav1.PatchOptions{}, "status")
	if err != nil {
		return fmt.Errorf("reporting Pod %s/%s running: %w", pod.Namespace, pod.Name, err)
	}
	s.started.Store(pod.UID, true)
	return nil
}
