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

package capie2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
)

// nodePodLogCollector is the framework's machine log collector for this
// provider: a Machine's logs are its node Pod's console (systemd, containerd,
// kubelet and the bootstrap write there) and the Pod itself, read from the
// hosting cluster. It never execs into a node.
type nodePodLogCollector struct {
	hosting kubernetes.Interface
}

// podOfProviderID splits kubernetes://<hosting namespace>/<pod name>.
func podOfProviderID(providerID string) (namespace, name string, err error) {
	rest, ok := strings.CutPrefix(providerID, infrav1.ProviderIDPrefix)
	if ok {
		namespace, name, ok = strings.Cut(rest, "/")
	}
	if !ok || namespace == "" || name == "" || strings.Contains(name, "/") {
		return "", "", fmt.Errorf("provider ID %q is not kubernetes://<namespace>/<pod>", providerID)
	}
	return namespace, name, nil
}

// CollectMachineLog writes console.log and pod.yaml of the Machine's node Pod
// into outputPath.
func (c nodePodLogCollector) CollectMachineLog(ctx context.Context, _ client.Client, m *clusterv1.Machine, outputPath string) error {
	if m.Spec.ProviderID == "" {
		return nil // no node Pod yet
	}
	namespace, name, err := podOfProviderID(m.Spec.ProviderID)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(outputPath, 0o755); err != nil {
		return fmt.Errorf("collecting the logs of Machine %s: %w", klog.KObj(m), err)
	}
	pod, err := c.hosting.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("getting node Pod %s/%s of Machine %s: %w", namespace, name, klog.KObj(m), err)
	}
	pod.ManagedFields = nil
	data, err := yaml.Marshal(pod)
	if err != nil {
		return fmt.Errorf("writing node Pod %s/%s: %w", namespace, name, err)
	}
	console, logErr := c.hosting.CoreV1().Pods(namespace).GetLogs(name, &corev1.PodLogOptions{Timestamps: true}).DoRaw(ctx)
	return errors.Join(
		os.WriteFile(filepath.Join(outputPath, "pod.yaml"), data, 0o600),
		os.WriteFile(filepath.Join(outputPath, "console.log"), console, 0o600),
		logErr)
}

// CollectMachinePoolLog has nothing to collect: the provider has no machine pools.
func (nodePodLogCollector) CollectMachinePoolLog(context.Context, client.Client, *clusterv1.MachinePool, string) error {
	return nil
}

// CollectInfrastructureLogs has nothing beyond the machines' logs: the
// provider's own log is collected with the other controllers'.
func (nodePodLogCollector) CollectInfrastructureLogs(context.Context, client.Client, *clusterv1.Cluster, string) error {
	return nil
}
