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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	clusterctlv1 "sigs.k8s.io/cluster-api/cmd/clusterctl/api/v1alpha3"
	"sigs.k8s.io/cluster-api/util/conditions"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/internal/hosting"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/internal/nodepod"
)

// KubeconfigFinalizer keeps a hosting kubeconfig Secret while a KubernetesCluster
// still needs it to delete its hosting objects.
const KubeconfigFinalizer = "infrastructure.cluster.x-k8s.io/hosting-kubeconfig"

// zoneLabel is the well-known label failure domains are discovered from.
const zoneLabel = corev1.LabelTopologyZone

// reconcileHosting connects to the hosting cluster and reports whether it answers.
func (r *KubernetesClusterReconciler) reconcileHosting(ctx context.Context, s *clusterScope) (ctrl.Result, error) {
	if err := r.protectKubeconfigSecret(ctx, s.kc); err != nil {
		return ctrl.Result{}, err
	}
	hostingCluster, err := r.Hosting.For(ctx, s.kc)
	if err != nil {
		reason := infrav1.KubernetesClusterHostingClusterUnreachableReason
		if errors.Is(err, hosting.ErrInvalidKubeconfig) {
			reason = infrav1.KubernetesClusterHostingClusterInvalidReason
		}
		conditions.Set(s.kc, metav1.Condition{
			Type: infrav1.KubernetesClusterHostingClusterReachableCondition, Status: metav1.ConditionFalse,
			Reason: reason, Message: err.Error(),
		})
		// No step runs without a hosting cluster. An invalid or missing Secret is
		// retried with the same backoff as an unreachable cluster: a change of
		// the Secret wakes the cluster at once, but a Secret created anew is not
		// labelled yet, so not watched.
		return ctrl.Result{}, err
	}
	s.hosting = hostingCluster
	conditions.Set(s.kc, metav1.Condition{
		Type: infrav1.KubernetesClusterHostingClusterReachableCondition, Status: metav1.ConditionTrue,
		Reason: infrav1.KubernetesClusterHostingClusterReachableReason,
	})
	return ctrl.Result{}, nil
}

// protectKubeconfigSecret labels the kubeconfig Secret so it is watched and moves
// with the cluster under clusterctl move, and adds a finalizer so it cannot be
// deleted while the cluster still needs it.
func (r *KubernetesClusterReconciler) protectKubeconfigSecret(ctx context.Context, kc *infrav1.KubernetesCluster) error {
	if kc.Spec.HostingCluster == nil || !kc.DeletionTimestamp.IsZero() {
		return nil
	}
	secret := &corev1.Secret{}
	key := client.ObjectKey{Namespace: kc.Namespace, Name: kc.Spec.HostingCluster.SecretName}
	err := r.Client.Get(ctx, key, secret)
	if apierrors.IsNotFound(err) {
		// Not labelled yet, so not in the cache: read it once from the API server.
		err = r.APIReader.Get(ctx, key, secret)
	}
	if apierrors.IsNotFound(err) {
		return nil // the registry reports the missing Secret as a condition
	}
	if err != nil {
		return fmt.Errorf("reading Secret %s: %w", key, err)
	}
	return r.labelKubeconfigSecret(ctx, secret, kc)
}

func (r *KubernetesClusterReconciler) labelKubeconfigSecret(ctx context.Context, secret *corev1.Secret, kc *infrav1.KubernetesCluster) error {
	_, labelled := secret.Labels[hosting.KubeconfigLabel]
	_, movable := secret.Labels[clusterctlv1.ClusterctlMoveLabel]
	_, cached := secret.Labels[clusterv1.ClusterNameLabel]
	if labelled && movable && cached && controllerutil.ContainsFinalizer(secret, KubeconfigFinalizer) {
		return nil
	}
	original := secret.DeepCopy()
	if secret.Labels == nil {
		secret.Labels = map[string]string{}
	}
	secret.Labels[hosting.KubeconfigLabel] = "true"
	secret.Labels[clusterctlv1.ClusterctlMoveLabel] = ""
	if !cached {
		secret.Labels[clusterv1.ClusterNameLabel] = clusterNameOf(kc)
	}
	controllerutil.AddFinalizer(secret, KubeconfigFinalizer)
	if err := r.Client.Patch(ctx, secret, client.MergeFrom(original)); err != nil {
		return fmt.Errorf("labelling Secret %s: %w", klog.KObj(secret), err)
	}
	return nil
}

// releaseKubeconfigSecret drops the Secret's finalizer once no other
// KubernetesCluster of the namespace uses it.
func (r *KubernetesClusterReconciler) releaseKubeconfigSecret(ctx context.Context, kc *infrav1.KubernetesCluster) error {
	if kc.Spec.HostingCluster == nil {
		return nil
	}
	users := &infrav1.KubernetesClusterList{}
	if err := r.Client.List(ctx, users, client.InNamespace(kc.Namespace), client.MatchingFields{hostingSecretIndex: kc.Spec.HostingCluster.SecretName}); err != nil {
		return fmt.Errorf("listing KubernetesClusters using Secret %s: %w", kc.Spec.HostingCluster.SecretName, err)
	}
	for _, user := range users.Items {
		if user.Name != kc.Name {
			return nil
		}
	}
	secret := &corev1.Secret{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: kc.Namespace, Name: kc.Spec.HostingCluster.SecretName}, secret); err != nil {
		return client.IgnoreNotFound(err)
	}
	original := secret.DeepCopy()
	if !controllerutil.RemoveFinalizer(secret, KubeconfigFinalizer) {
		return nil
	}
	return client.IgnoreNotFound(r.Client.Patch(ctx, secret, client.MergeFrom(original)))
}

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

// reconcileFailureDomains publishes the spec's failure domains, or the zones of
// the hosting nodes.
func (r *KubernetesClusterReconciler) reconcileFailureDomains(ctx context.Context, s *clusterScope) (ctrl.Result, error) {
	if len(s.kc.Spec.FailureDomains) > 0 {
		s.kc.Status.FailureDomains = s.kc.Spec.FailureDomains
		return ctrl.Result{}, nil
	}
	nodes, err := s.hostingNodes(ctx)
	if err != nil {
		return ctrl.Result{}, err
	}
	zones := map[string]bool{}
	for _, node := range nodes {
		if zone := node.Labels[zoneLabel]; zone != "" {
			zones[zone] = true
		}
	}
	var domains []clusterv1.FailureDomain
	for zone := range zones {
		domains = append(domains, clusterv1.FailureDomain{Name: zone, ControlPlane: ptr.To(true)})
	}
	sort.Slice(domains, func(i, j int) bool { return domains[i].Name < domains[j].Name })
	s.kc.Status.FailureDomains = domains
	return ctrl.Result{}, nil
}

// deleteClusterObjects deletes the cluster's Service, disruption budgets and
// NetworkPolicy from the hosting cluster, read live (one created moments ago
// may not be in the cache yet), and leaves another owner's objects alone.
func (r *KubernetesClusterReconciler) deleteClusterObjects(ctx context.Context, s *clusterScope) error {
	c := s.hostingObjects()
	for _, obj := range c.Objects() {
		if _, err := deleteOwned(ctx, s.hosting, s.hosting.Reader, c.Owner(), obj); err != nil {
			return err
		}
	}
	return nil
}

// hostingObjects names the cluster's own objects on its hosting cluster and
// their owner.
func (s *clusterScope) hostingObjects() nodepod.Cluster {
	return nodepod.Cluster{
		Namespace: s.kc.Namespace, Name: clusterNameOf(s.kc), HostingNamespace: s.hosting.Namespace,
		OwnerID: s.kc.Annotations[infrav1.OwnerIDAnnotation],
	}
}

// clusterNameOf is the name of the Cluster API Cluster a KubernetesCluster belongs to.
func clusterNameOf(kc *infrav1.KubernetesCluster) string {
	if name := kc.Labels[clusterv1.ClusterNameLabel]; name != "" {
		return name
	}
	for _, owner := range kc.OwnerReferences {
		if owner.Kind == "Cluster" {
			return owner.Name
		}
	}
	return kc.Name
}

// hostingNodes lists the hosting cluster's nodes from the cache (their names,
// zones and addresses: hosting.TrimNode) once per reconcile: the endpoint and
// the failure domains both need them.
func (s *clusterScope) hostingNodes(ctx context.Context) ([]corev1.Node, error) {
	if s.nodes != nil {
		return s.nodes, nil
	}
	list := &corev1.NodeList{}
	if err := s.hosting.Client.List(ctx, list); err != nil {
		return nil, fmt.Errorf("listing nodes of %s: %w", s.hosting.Description, err)
	}
	s.nodes = append([]corev1.Node{}, list.Items...)
	return s.nodes, nil
}
