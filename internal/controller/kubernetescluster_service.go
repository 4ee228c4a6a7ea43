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

// A workload cluster's control-plane Service on its hosting cluster, and the endpoint it gives.

package controller

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"sort"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	ctrl "sigs.k8s.io/controller-runtime"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/internal/hosting"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/internal/nodepod"
)

// reconcileService creates or updates the control-plane Service and fills the
// endpoint from it.
func (r *KubernetesClusterReconciler) reconcileService(ctx context.Context, s *clusterScope) (ctrl.Result, error) {
	c := s.hostingObjects()
	desired := nodepod.NewService(c, s.kc.Spec.ControlPlaneService)
	service, err := r.applyService(ctx, s.hosting, c.Owner(), desired)
	if err != nil {
		conditions.Set(s.kc, metav1.Condition{
			Type: infrav1.KubernetesClusterLoadBalancerAvailableCondition, Status: metav1.ConditionFalse,
			Reason: conditionReason(err, infrav1.KubernetesClusterLoadBalancerServiceNotAppliedReason), Message: err.Error(),
		})
		return ctrl.Result{}, err
	}
	endpoint, waiting := s.kc.Spec.ControlPlaneEndpoint, ""
	if !endpoint.IsValid() {
		endpoint, waiting = r.endpointOf(ctx, s, service)
	}
	if waiting != "" {
		conditions.Set(s.kc, metav1.Condition{
			Type: infrav1.KubernetesClusterLoadBalancerAvailableCondition, Status: metav1.ConditionFalse,
			Reason: infrav1.KubernetesClusterLoadBalancerWaitingForAddressReason, Message: waiting,
		})
		return ctrl.Result{}, nil
	}
	s.kc.Spec.ControlPlaneEndpoint = endpoint
	s.kc.Status.Initialization.Provisioned = ptr.To(true)
	conditions.Set(s.kc, metav1.Condition{
		Type: infrav1.KubernetesClusterLoadBalancerAvailableCondition, Status: metav1.ConditionTrue,
		Reason:  infrav1.KubernetesClusterLoadBalancerAvailableReason,
		Message: fmt.Sprintf("Service %s/%s serves %s", service.Namespace, service.Name, net.JoinHostPort(endpoint.Host, strconv.Itoa(int(endpoint.Port)))),
	})
	return ctrl.Result{}, nil
}

// applyService creates the Service or brings the fields the provider owns back
// to the desired values, leaving fields the API server fills alone; it returns
// the Service as it now is.
func (r *KubernetesClusterReconciler) applyService(ctx context.Context, hostingCluster *hosting.Cluster, owner nodepod.Owner, desired *corev1.Service) (*corev1.Service, error) {
	existing := &corev1.Service{}
	created, err := applyHostingObject(ctx, hostingCluster, owner, desired, existing, func() bool {
		updated := existing.DeepCopy()
		updated.Labels, updated.Annotations = desired.Labels, desired.Annotations
		updated.Spec.Type, updated.Spec.Selector = desired.Spec.Type, desired.Spec.Selector
		updated.Spec.PublishNotReadyAddresses = desired.Spec.PublishNotReadyAddresses
		updated.Spec.Ports = mergeServicePorts(existing.Spec.Ports, desired.Spec.Ports)
		if equality.Semantic.DeepEqual(existing, updated) {
			return false
		}
		*existing = *updated
		return true
	})
	if created {
		return desired, err
	}
	return existing, err
}

// mergeServicePorts keeps the node ports the API server allocated.
func mergeServicePorts(existing, desired []corev1.ServicePort) []corev1.ServicePort {
	merged := make([]corev1.ServicePort, len(desired))
	for i, port := range desired {
		merged[i] = port
		for _, old := range existing {
			if old.Name == port.Name && port.NodePort == 0 {
				merged[i].NodePort = old.NodePort
			}
		}
	}
	return merged
}

// endpointOf derives the control-plane endpoint from the Service, or says what it
// waits for.
func (r *KubernetesClusterReconciler) endpointOf(ctx context.Context, s *clusterScope, service *corev1.Service) (clusterv1.APIEndpoint, string) {
	port := service.Spec.Ports[0]
	switch service.Spec.Type {
	case corev1.ServiceTypeLoadBalancer:
		for _, ingress := range service.Status.LoadBalancer.Ingress {
			if host := cmp.Or(ingress.IP, ingress.Hostname); host != "" {
				return clusterv1.APIEndpoint{Host: host, Port: port.Port}, ""
			}
		}
		return clusterv1.APIEndpoint{}, "waiting for the hosting cluster's load balancer to give the Service an address"
	case corev1.ServiceTypeNodePort:
		host, err := firstNodeAddress(ctx, s)
		if err != nil || host == "" || port.NodePort == 0 {
			return clusterv1.APIEndpoint{}, fmt.Sprintf("waiting for a hosting node address and a node port: %v", err)
		}
		return clusterv1.APIEndpoint{Host: host, Port: port.NodePort}, ""
	default:
		if service.Spec.ClusterIP == "" || service.Spec.ClusterIP == corev1.ClusterIPNone {
			return clusterv1.APIEndpoint{}, "waiting for the Service's cluster IP"
		}
		return clusterv1.APIEndpoint{Host: service.Spec.ClusterIP, Port: port.Port}, ""
	}
}

// firstNodeAddress returns the InternalIP of the hosting node whose name sorts
// first, so the choice is stable.
func firstNodeAddress(ctx context.Context, s *clusterScope) (string, error) {
	nodes, err := s.hostingNodes(ctx)
	if err != nil {
		return "", err
	}
	sorted := slices.Clone(nodes)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	for _, node := range sorted {
		for _, address := range node.Status.Addresses {
			if address.Type == corev1.NodeInternalIP {
				return address.Address, nil
			}
		}
	}
	return "", errors.New("no hosting node has an InternalIP")
}
