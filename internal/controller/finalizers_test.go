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

package controller_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
)

// Objects that a release before v0.2 finalized, with the finalizer names the
// API server warns about, get the path-qualified names in their place; one
// deleted before that still goes, and leaves nothing on the hosting cluster.
func TestLegacyFinalizersAreReplacedAndHonoured(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	tc, tm, _ := provisionedWorker(t, g, "legacy", infrav1.KubernetesClusterSpec{})

	setPaused(g, tc, true) // as a v0.1 manager left them
	setFinalizers(g, tc.kc, infrav1.LegacyClusterFinalizer)
	setFinalizers(g, tm.km, infrav1.LegacyMachineFinalizer)
	setPaused(g, tc, false)
	eventuallyKubernetesCluster(g, client.ObjectKeyFromObject(tc.kc), func(g Gomega, kc *infrav1.KubernetesCluster) {
		g.Expect(kc.Finalizers).To(ConsistOf(infrav1.ClusterFinalizer))
	})
	eventuallyKubernetesMachine(g, client.ObjectKeyFromObject(tm.km), func(g Gomega, km *infrav1.KubernetesMachine) {
		g.Expect(km.Finalizers).To(ConsistOf(infrav1.MachineFinalizer))
	})

	setPaused(g, tc, true)
	setFinalizers(g, tc.kc, infrav1.LegacyClusterFinalizer)
	setFinalizers(g, tm.km, infrav1.LegacyMachineFinalizer)
	g.Expect(env.Client.Delete(ctx, tm.km)).To(Succeed())
	g.Expect(env.Client.Delete(ctx, tc.kc)).To(Succeed())
	setPaused(g, tc, false)
	for _, obj := range []client.Object{tm.km, tc.kc} {
		g.Eventually(func() bool {
			return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj))
		}, 20*time.Second).Should(BeTrue(), "%s deleted with only the legacy finalizer goes", obj.GetName())
	}
	expectNothingLeft(g, env.Client, tc.namespace)
}

// setFinalizers replaces obj's finalizers, retrying when a controller writes in between.
func setFinalizers(g Gomega, obj client.Object, finalizers ...string) {
	ctx := context.Background()
	g.Eventually(func() error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		obj.SetFinalizers(finalizers)
		return env.Client.Update(ctx, obj)
	}, 10*time.Second).Should(Succeed())
}

// The API server takes the provider's finalizer names without the warning it
// gives a name without a path (as the legacy names were).
func TestFinalizerNamesDrawNoWarning(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	namespace := newNamespace(t)
	warnings := &warningRecorder{}
	cfg := rest.CopyConfig(env.Config)
	cfg.WarningHandler = warnings
	c, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	g.Expect(err).NotTo(HaveOccurred())
	for _, tt := range []struct {
		finalizer string
		warned    bool
	}{
		{finalizer: infrav1.ClusterFinalizer},
		{finalizer: infrav1.MachineFinalizer},
		{finalizer: infrav1.LegacyClusterFinalizer, warned: true},
		{finalizer: infrav1.LegacyMachineFinalizer, warned: true},
	} {
		// A custom resource that no controller of the provider writes (a
		// built-in kind refuses a name without a path outright).
		obj := &infrav1.KubernetesMachineTemplate{ObjectMeta: metav1.ObjectMeta{
			Namespace: namespace, GenerateName: "finalized-", Finalizers: []string{tt.finalizer},
		}}
		g.Expect(c.Create(ctx, obj)).To(Succeed())
		if tt.warned {
			g.Expect(warnings.take()).To(ContainElement(ContainSubstring(tt.finalizer)), "the check tells a legacy name")
		} else {
			g.Expect(warnings.take()).To(BeEmpty(), tt.finalizer)
		}
		obj.Finalizers = nil
		g.Expect(c.Update(ctx, obj)).To(Succeed())
		g.Expect(c.Delete(ctx, obj)).To(Succeed())
	}
}
