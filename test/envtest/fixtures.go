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

package envtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
)

// The fixtures do what Cluster API's controllers and its kubeadm bootstrap
// provider do for the provider's objects, on an API server without them: the
// Cluster and the KubernetesCluster it owns, the Machine, its bootstrap data
// and the KubernetesMachine it controls. The controller tests, the crash test
// and the scale benchmark build on them.

// MachineVersion is the Kubernetes version of the fixtures' Machines.
const MachineVersion = "v1.36.3"

// ClusterOptions say how CreateCluster's objects differ from the defaults.
type ClusterOptions struct {
	// KubernetesClusterName is the KubernetesCluster's name [the Cluster's].
	KubernetesClusterName string
	Spec                  infrav1.KubernetesClusterSpec
}

// CreateCluster creates a Cluster and its KubernetesCluster, owned by it, both
// labelled with the cluster name.
func CreateCluster(ctx context.Context, c client.Client, namespace, name string, opts ClusterOptions) (*clusterv1.Cluster, *infrav1.KubernetesCluster, error) {
	kcName := opts.KubernetesClusterName
	if kcName == "" {
		kcName = name
	}
	labels := map[string]string{clusterv1.ClusterNameLabel: name}
	cluster := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: labels},
		Spec: clusterv1.ClusterSpec{InfrastructureRef: clusterv1.ContractVersionedObjectReference{
			APIGroup: infrav1.GroupVersion.Group, Kind: "KubernetesCluster", Name: kcName,
		}},
	}
	if err := c.Create(ctx, cluster); err != nil {
		return nil, nil, fmt.Errorf("creating Cluster %s: %w", klog.KObj(cluster), err)
	}
	kc := &infrav1.KubernetesCluster{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: namespace, Name: kcName, Labels: labels,
			OwnerReferences: []metav1.OwnerReference{ownerReference("Cluster", cluster)},
		},
		Spec: opts.Spec,
	}
	if err := c.Create(ctx, kc); err != nil {
		return nil, nil, fmt.Errorf("creating KubernetesCluster %s: %w", klog.KObj(kc), err)
	}
	return cluster, kc, nil
}

// MarkInfrastructureProvisioned sets the Cluster's
// status.initialization.infrastructureProvisioned, as Cluster API's Cluster
// controller does once the KubernetesCluster is provisioned.
func MarkInfrastructureProvisioned(ctx context.Context, c client.Client, key client.ObjectKey) error {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cluster := &clusterv1.Cluster{}
		if err := c.Get(ctx, key, cluster); err != nil {
			return err
		}
		cluster.Status.Initialization.InfrastructureProvisioned = ptr.To(true)
		return c.Status().Update(ctx, cluster)
	})
	if err != nil {
		return fmt.Errorf("marking the infrastructure of Cluster %s provisioned: %w", key, err)
	}
	return nil
}

// MachineOptions say how CreateMachine's objects differ from the defaults.
type MachineOptions struct {
	ControlPlane bool
	// BootstrapData, when set, is created with the Machine as its bootstrap
	// data; without it the Machine waits for a KubeadmConfig's.
	BootstrapData []byte
	Spec          infrav1.KubernetesMachineSpec
}

// CreateMachine creates a Machine of the cluster and the KubernetesMachine it
// controls, and the Machine's bootstrap data when opts has it.
func CreateMachine(ctx context.Context, c client.Client, cluster *clusterv1.Cluster, name string, opts MachineOptions) (*clusterv1.Machine, *infrav1.KubernetesMachine, error) {
	labels := map[string]string{clusterv1.ClusterNameLabel: cluster.Name}
	if opts.ControlPlane {
		labels[clusterv1.MachineControlPlaneLabel] = ""
	}
	machine := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: cluster.Namespace, Name: name, Labels: labels},
		Spec: clusterv1.MachineSpec{
			ClusterName: cluster.Name,
			Version:     MachineVersion,
			Bootstrap:   clusterv1.Bootstrap{ConfigRef: clusterv1.ContractVersionedObjectReference{APIGroup: "bootstrap.cluster.x-k8s.io", Kind: "KubeadmConfig", Name: name}},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: infrav1.GroupVersion.Group, Kind: "KubernetesMachine", Name: name,
			},
		},
	}
	if opts.BootstrapData != nil {
		secret, err := createBootstrapData(ctx, c, machine, opts.BootstrapData)
		if err != nil {
			return nil, nil, err
		}
		machine.Spec.Bootstrap = clusterv1.Bootstrap{DataSecretName: ptr.To(secret.Name)}
	}
	if err := c.Create(ctx, machine); err != nil {
		return nil, nil, fmt.Errorf("creating Machine %s: %w", klog.KObj(machine), err)
	}
	km := &infrav1.KubernetesMachine{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: cluster.Namespace, Name: name, Labels: labels,
			OwnerReferences: []metav1.OwnerReference{ownerReference("Machine", machine)},
		},
		Spec: opts.Spec,
	}
	if err := c.Create(ctx, km); err != nil {
		return nil, nil, fmt.Errorf("creating KubernetesMachine %s: %w", klog.KObj(km), err)
	}
	return machine, km, nil
}

// GiveBootstrapData does what the kubeadm bootstrap provider does once a
// Machine's bootstrap data is ready: the data Secret, and the Machine's
// dataSecretName.
func GiveBootstrapData(ctx context.Context, c client.Client, machine *clusterv1.Machine, data []byte) error {
	secret, err := createBootstrapData(ctx, c, machine, data)
	if err != nil {
		return err
	}
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(machine), machine); err != nil {
			return err
		}
		machine.Spec.Bootstrap.DataSecretName = ptr.To(secret.Name)
		return c.Update(ctx, machine)
	})
}

// BootstrapDataSecretName is the name of the fixtures' bootstrap data Secret
// of a Machine.
func BootstrapDataSecretName(machineName string) string { return machineName + "-bootstrap-data" }

func createBootstrapData(ctx context.Context, c client.Client, machine *clusterv1.Machine, data []byte) (*corev1.Secret, error) {
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: machine.Namespace, Name: BootstrapDataSecretName(machine.Name), Labels: machine.Labels},
		Type:       clusterv1.ClusterSecretType,
		Data:       map[string][]byte{"value": data, "format": []byte("cloud-config")},
	}
	if err := c.Create(ctx, secret); err != nil {
		return nil, fmt.Errorf("creating bootstrap data Secret %s: %w", klog.KObj(secret), err)
	}
	return secret, nil
}

// BootstrapFixture reads one of the kubeadm bootstrap data files in
// internal/bootstrap/testdata (e.g. worker-join.yaml, controlplane-init.yaml).
func BootstrapFixture(name string) ([]byte, error) {
	return os.ReadFile(filepath.Join(RepositoryRoot(), "internal", "bootstrap", "testdata", name))
}

// ownerReference is the controller reference Cluster API sets on the
// infrastructure object of owner.
func ownerReference(kind string, owner client.Object) metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion: clusterv1.GroupVersion.String(), Kind: kind, Name: owner.GetName(), UID: owner.GetUID(),
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
	}
}
