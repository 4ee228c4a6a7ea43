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
	bootstrapv1beta1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta1" //nolint:staticcheck // Cluster API's webhooks still convert from v1beta1
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	controlplanev1beta1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta1" //nolint:staticcheck // Cluster API's webhooks still convert from v1beta1
	controlplanev1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta2"
	clusterv1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta1" //nolint:staticcheck // Cluster API's webhooks still convert from v1beta1
	bootstrapwebhooks "sigs.k8s.io/cluster-api/bootstrap/kubeadm/webhooks/admission"
	controlplanewebhooks "sigs.k8s.io/cluster-api/controlplane/kubeadm/webhooks/admission"
	corewebhooks "sigs.k8s.io/cluster-api/core/webhooks/admission"
	"sigs.k8s.io/cluster-api/feature"
	ctrl "sigs.k8s.io/controller-runtime"

	kruntime "k8s.io/apimachinery/pkg/runtime"
)

// addClusterAPIProviderTypes adds the kubeadm bootstrap and control-plane types,
// and the older Cluster API versions their webhooks convert from.
func addClusterAPIProviderTypes(scheme *kruntime.Scheme) error {
	for _, add := range []func(*kruntime.Scheme) error{
		bootstrapv1.AddToScheme, controlplanev1.AddToScheme,
		clusterv1beta1.AddToScheme, bootstrapv1beta1.AddToScheme, controlplanev1beta1.AddToScheme,
	} {
		if err := add(scheme); err != nil {
			return err
		}
	}
	return nil
}

// setupClusterAPIWebhooks serves the webhooks of the Cluster API objects a
// cluster template holds, as Cluster API's own managers would.
func setupClusterAPIWebhooks(mgr ctrl.Manager) error {
	// ClusterClass needs the gate users turn on with CLUSTER_TOPOLOGY=true.
	if err := feature.MutableGates.Set(string(feature.ClusterTopology) + "=true"); err != nil {
		return err
	}
	for _, setup := range []func(ctrl.Manager) error{
		(&corewebhooks.Cluster{Client: mgr.GetClient()}).SetupWebhookWithManager,
		(&corewebhooks.ClusterClass{Client: mgr.GetClient()}).SetupWebhookWithManager,
		(&corewebhooks.Machine{}).SetupWebhookWithManager,
		(&corewebhooks.MachineDeployment{}).SetupWebhookWithManager,
		(&corewebhooks.MachineSet{}).SetupWebhookWithManager,
		(&corewebhooks.MachineHealthCheck{}).SetupWebhookWithManager,
		(&bootstrapwebhooks.KubeadmConfig{}).SetupWebhookWithManager,
		(&bootstrapwebhooks.KubeadmConfigTemplate{}).SetupWebhookWithManager,
		(&controlplanewebhooks.KubeadmControlPlane{}).SetupWebhookWithManager,
		(&controlplanewebhooks.KubeadmControlPlaneTemplate{}).SetupWebhookWithManager,
	} {
		if err := setup(mgr); err != nil {
			return err
		}
	}
	return nil
}
