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

package writer_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capi-kubernetes/cluster-api-provider-kubernetes/api/v1beta1"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/internal/writer"
	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/test/envtest"
)

var (
	env   *envtest.Environment
	names atomic.Int32
)

func TestMain(m *testing.M) {
	envtest.RunMain(m, func(m *testing.M) (int, error) {
		var err error
		if env, err = envtest.Start(envtest.Options{}); err != nil {
			return 0, err
		}
		code := m.Run()
		return code, env.Stop()
	})
}

func fields(km *infrav1.KubernetesMachine) (*metav1.ObjectMeta, any, any) {
	return &km.ObjectMeta, &km.Spec, &km.Status
}

// fixture is a stored KubernetesMachine and a Writer whose requests are counted;
// its cache is the API server itself unless a test says otherwise.
type fixture struct {
	km       *infrav1.KubernetesMachine
	requests *requestCounter
	writer   *writer.Writer[*infrav1.KubernetesMachine]
}

func newFixture(g Gomega, cache client.Client) *fixture {
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("writer-%d", names.Add(1))}}
	g.Expect(env.Client.Create(ctx, ns)).To(Succeed())
	km := &infrav1.KubernetesMachine{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "m", Finalizers: []string{"test/keep"}}}
	g.Expect(env.Client.Create(ctx, km)).To(Succeed())
	if cache == nil {
		cache = env.Client
	}
	requests := &requestCounter{Client: cache}
	return &fixture{km: km, requests: requests,
		writer: writer.New(client.Client(requests), client.Reader(env.Client), []string{infrav1.MachineFinalizer, infrav1.LegacyMachineFinalizer}, fields)}
}

func (f *fixture) stored(g Gomega) *infrav1.KubernetesMachine {
	km := &infrav1.KubernetesMachine{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(f.km), km)).To(Succeed())
	return km
}

// deleteHeldBy gives the fixture's machine only the finalizer name and deletes
// it, so that it stays, being deleted, until that name is removed.
func (f *fixture) deleteHeldBy(g Gomega, finalizer string) {
	ctx := context.Background()
	f.km.Finalizers = []string{finalizer}
	g.Expect(env.Client.Update(ctx, f.km)).To(Succeed())
	g.Expect(env.Client.Delete(ctx, f.km)).To(Succeed())
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(f.km), f.km)).To(Succeed())
}

func ready(km *infrav1.KubernetesMachine) {
	km.Status.Conditions = append(km.Status.Conditions, metav1.Condition{
		Type: "Ready", Status: metav1.ConditionTrue, Reason: "Ready", LastTransitionTime: metav1.Now(),
	})
}

func TestWriteSendsOneRequestPerPartThatChanged(t *testing.T) {
	for _, tc := range []struct {
		name                string
		change              func(*infrav1.KubernetesMachine)
		patches, statusOnes int
	}{
		{"nothing", func(*infrav1.KubernetesMachine) {}, 0, 0},
		{"a label", func(km *infrav1.KubernetesMachine) { km.Labels = map[string]string{"a": "b"} }, 1, 0},
		{"the spec", func(km *infrav1.KubernetesMachine) { km.Spec.ProviderID = "kubernetes://ns/pod" }, 1, 0},
		{"the status", ready, 0, 1},
		{"a label and the status", func(km *infrav1.KubernetesMachine) { km.Labels = map[string]string{"a": "b"}; ready(km) }, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			f := newFixture(g, nil)
			base := f.km.DeepCopy()
			tc.change(f.km)
			want := f.km.DeepCopy()

			g.Expect(f.writer.Write(context.Background(), base, f.km)).To(Succeed())

			g.Expect(f.requests.patches.Load()).To(BeEquivalentTo(tc.patches), "metadata and spec patches")
			g.Expect(f.requests.statusPatches.Load()).To(BeEquivalentTo(tc.statusOnes), "status patches")
			stored := f.stored(g)
			g.Expect(stored.Labels).To(Equal(want.Labels))
			g.Expect(stored.Spec).To(Equal(want.Spec))
			g.Expect(stored.Status.Conditions).To(HaveLen(len(want.Status.Conditions)))
			g.Expect(f.km.Status.Conditions).To(HaveLen(len(want.Status.Conditions)), "the status in memory survives the metadata patch")
			g.Expect(f.km.ResourceVersion).To(Equal(stored.ResourceVersion), "obj is what is stored")
		})
	}
}

func TestPersistStoresMetadataAndSpecAndKeepsStatusChangesForWrite(t *testing.T) {
	g := NewWithT(t)
	f := newFixture(g, nil)
	ctx := context.Background()
	ready(f.km)
	base := f.km.DeepCopy()
	f.km.Finalizers = append(f.km.Finalizers, infrav1.MachineFinalizer)
	f.km.Spec.ProviderID = "kubernetes://ns/pod"

	stored, err := f.writer.Persist(ctx, base, f.km)

	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(f.stored(g).Finalizers).To(ContainElement(infrav1.MachineFinalizer))
	g.Expect(f.stored(g).Spec.ProviderID).To(Equal("kubernetes://ns/pod"))
	g.Expect(f.stored(g).Status.Conditions).To(BeEmpty(), "Persist writes no status")
	g.Expect(stored.Status.Conditions).To(BeEmpty(), "the returned base is what is stored")
	g.Expect(f.km.Status.Conditions).To(HaveLen(1), "the status change waits in obj")

	g.Expect(f.writer.Write(ctx, stored, f.km)).To(Succeed())
	g.Expect(f.requests.patches.Load()).To(BeEquivalentTo(1), "only Persist's patch")
	g.Expect(f.requests.statusPatches.Load()).To(BeEquivalentTo(1))
	g.Expect(f.stored(g).Status.Conditions).To(HaveLen(1))
}

func TestPersistFailsWhenTheObjectChangedSinceBase(t *testing.T) {
	g := NewWithT(t)
	f := newFixture(g, nil)
	ctx := context.Background()
	other := f.km.DeepCopy()
	other.Labels = map[string]string{"written": "meanwhile"}
	g.Expect(env.Client.Update(ctx, other)).To(Succeed())
	base := f.km.DeepCopy()
	f.km.Finalizers = append(f.km.Finalizers, infrav1.MachineFinalizer)

	_, err := f.writer.Persist(ctx, base, f.km)

	g.Expect(apierrors.IsConflict(err)).To(BeTrue(), "want a conflict, got %v", err)
	g.Expect(err.Error()).To(ContainSubstring("KubernetesMachine"))
	g.Expect(f.stored(g).Finalizers).NotTo(ContainElement(infrav1.MachineFinalizer))
}

func TestGetReadsLiveWhileTheCacheLacksTheLastWrite(t *testing.T) {
	g := NewWithT(t)
	cache := &staleCache{Client: env.Client}
	f := newFixture(g, cache)
	ctx := context.Background()
	key := client.ObjectKeyFromObject(f.km)
	cache.freeze(g, key)
	base := f.km.DeepCopy()
	ready(f.km)
	g.Expect(f.writer.Write(ctx, base, f.km)).To(Succeed())

	read := &infrav1.KubernetesMachine{}
	g.Expect(f.writer.Get(ctx, key, read)).To(Succeed())
	g.Expect(read.Status.Conditions).To(HaveLen(1), "the write is read back although the cache is stale")

	again := &infrav1.KubernetesMachine{}
	g.Expect(f.writer.Get(ctx, key, again)).To(Succeed())
	g.Expect(again.Status.Conditions).To(BeEmpty(), "one live read per own write: then the cache is trusted")
}

func TestWriteSkipsTheStatusOfAnObjectWhoseFinalizerItRemoved(t *testing.T) {
	g := NewWithT(t)
	f := newFixture(g, nil)
	ctx := context.Background()
	f.deleteHeldBy(g, infrav1.MachineFinalizer)
	base := f.km.DeepCopy()
	f.km.Finalizers = nil
	ready(f.km)

	g.Expect(f.writer.Write(ctx, base, f.km)).To(Succeed())

	g.Expect(f.requests.patches.Load()).To(BeEquivalentTo(1))
	g.Expect(f.requests.statusPatches.Load()).To(BeZero())
	err := env.Client.Get(ctx, client.ObjectKeyFromObject(f.km), &infrav1.KubernetesMachine{})
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the finalizer's removal ended the deletion: %v", err)
}

// An object being deleted that carries only an older name of the finalizer is
// still the reconciler's: its status is written.
func TestWriteKeepsWritingTheStatusWhileALegacyFinalizerHoldsTheObject(t *testing.T) {
	g := NewWithT(t)
	f := newFixture(g, nil)
	ctx := context.Background()
	f.deleteHeldBy(g, infrav1.LegacyMachineFinalizer)
	base := f.km.DeepCopy()
	ready(f.km)

	g.Expect(f.writer.Write(ctx, base, f.km)).To(Succeed())

	g.Expect(f.requests.statusPatches.Load()).To(BeEquivalentTo(1))
	g.Expect(f.stored(g).Status.Conditions).To(HaveLen(1))
	f.km.Finalizers = nil
	g.Expect(env.Client.Update(ctx, f.km)).To(Succeed(), "let the object go")
}

func TestWriteOfAnObjectThatIsGoneIsNoError(t *testing.T) {
	g := NewWithT(t)
	f := newFixture(g, nil)
	ctx := context.Background()
	gone := f.km.DeepCopy()
	gone.Finalizers = nil
	g.Expect(env.Client.Update(ctx, gone)).To(Succeed())
	g.Expect(env.Client.Delete(ctx, gone)).To(Succeed())
	base := f.km.DeepCopy()
	f.km.Labels = map[string]string{"a": "b"}
	ready(f.km)

	g.Expect(f.writer.Write(ctx, base, f.km)).To(Succeed())
	g.Expect(f.requests.patches.Load()).To(BeEquivalentTo(1))
	g.Expect(f.requests.statusPatches.Load()).To(BeEquivalentTo(1))
}

// requestCounter counts the patches sent through it.
type requestCounter struct {
	client.Client
	patches, statusPatches atomic.Int32
}

func (c *requestCounter) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	c.patches.Add(1)
	return c.Client.Patch(ctx, obj, patch, opts...)
}

func (c *requestCounter) Status() client.SubResourceWriter {
	return &statusCounter{SubResourceWriter: c.Client.Status(), counter: c}
}

type statusCounter struct {
	client.SubResourceWriter
	counter *requestCounter
}

func (c *statusCounter) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	c.counter.statusPatches.Add(1)
	return c.SubResourceWriter.Patch(ctx, obj, patch, opts...)
}

// staleCache answers Get of a frozen object with its copy from when it was
// frozen, as an informer that has not seen the later writes yet.
type staleCache struct {
	client.Client
	mu     sync.Mutex
	frozen map[client.ObjectKey]*infrav1.KubernetesMachine
}

func (c *staleCache) freeze(g Gomega, key client.ObjectKey) {
	km := &infrav1.KubernetesMachine{}
	g.Expect(c.Client.Get(context.Background(), key, km)).To(Succeed())
	c.mu.Lock()
	defer c.mu.Unlock()
	c.frozen = map[client.ObjectKey]*infrav1.KubernetesMachine{key: km}
}

func (c *staleCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	c.mu.Lock()
	frozen, ok := c.frozen[key]
	c.mu.Unlock()
	if km, isMachine := obj.(*infrav1.KubernetesMachine); ok && isMachine {
		frozen.DeepCopyInto(km)
		return nil
	}
	return c.Client.Get(ctx, key, obj, opts...)
}
