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

// Package controller holds one reconciler per kind: KubernetesCluster and
// KubernetesMachine. The markers below are the least privilege that works: no
// pods/exec, no wildcard.
//
// # Files
//
// A file holds one concern and its name says which: <kind>_controller.go is
// the reconciler (watches, scope, the chain of steps, deletion), <kind>_<thing>.go
// one part of it (kubernetescluster_service.go, kubernetesmachine_bootstrap.go);
// what both reconcilers use is named for what it does (conditions.go,
// finalizers.go, hostingobjects.go, pause.go, logging.go), and setup.go wires both
// reconcilers and the CRD migrator for cmd/main.go and the tests (Setup).
// Each file opens with a line that says what it holds.
//
// # Where things live
//
// The bootstrap contract (the script, the systemd unit that runs it once, the
// sentinel, the failure marker and exit code, the log excerpt) is
// internal/bootstrap's; what a node Pod and the other hosting objects look
// like, their names, labels and ownership, and the inventory of hosting kinds
// (nodepod.Kinds) are internal/nodepod's; the defaults of the API's fields are
// api/v1beta1's (defaults.go). The controller asks them and never spells out
// a name, a kind list or a default again.
//
// # Reconcile
//
// Reconcile gets the object (NotFound ends it), its Cluster API owners
// (missing: log and wait), adds their keys to the logger (withOwnerKeys),
// handles pause, and branches to reconcileDelete or reconcileNormal, which is
// a chain of short steps: each returns (ctrl.Result, error), and a machine
// step that must wait for an event sets machineScope.waiting, which ends the
// chain without a requeue.
//
// # Writes
//
// What is written when:
//   - Identity first. Before anything exists on a hosting cluster, one write
//     persists what finds it again after a crash or a move: the finalizer and
//     owner ID of a KubernetesCluster (persistIdentity), the finalizer and
//     provider ID of a KubernetesMachine (persistFinalizerAndProviderID). The
//     finalizer goes in place of the name releases before v0.2 wrote, and
//     deletion removes both (finalizers.go). Only
//     metadata and spec change in that write; status changes made so far wait
//     for the write at the end.
//   - Everything else once, at the end of the reconcile, and only what
//     changed: metadata and spec in one patch, status (the Ready summary
//     included) in another, nothing when nothing changed.
//   - Both kinds are read and written by internal/writer, with plain merge
//     patches against the object as read: a patch carries only what changed,
//     so labels and annotations that Cluster API or a user set meanwhile are
//     kept, and only the identity write carries a resourceVersion (two
//     reconciles never both create an identity). The writer remembers the
//     resourceVersion of its own last write of each object: a reconcile whose
//     cached copy predates it reads the object live instead of repeating the
//     write. That took writes per machine from 7-9 to 5 (make bench). The
//     status is this controller's alone, so no condition needs the
//     three-way merge of Cluster API's patch helper, which the
//     KubernetesCluster used before with the same two patches.
//   - A paused object gets its Paused condition at once (pause.go) and
//     nothing else.
//
// # Conventions
//
// Conditions are v1beta2 metav1.Conditions named <Kind><Thing>Condition and
// <Kind><Thing><Why>Reason in api/v1beta1/conditions.go, as are the reasons of
// Events; Ready summarises the others. Log with ctrl.LoggerFrom(ctx), objects
// as klog.KObj under their kind's name ("Cluster", "Machine",
// "KubernetesCluster"), messages capitalised without a final period, never a
// Secret's content. Errors say what failed on which object and wrap with %w:
// fmt.Errorf("reading Pod %s on %s: %w", klog.KObj(pod), hosting, err).
// Import aliases are the same everywhere: clusterv1, infrav1, infrav1alpha1,
// corev1, metav1, apierrors, ctrl. Tests that talk to the API run on envtest,
// a real kube-apiserver and etcd (test/envtest); the fake client only tests
// one function.
package controller

// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=kubernetesclusters;kubernetesmachines,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=kubernetesclusters/status;kubernetesmachines/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=kubernetesclusters/finalizers;kubernetesmachines/finalizers,verbs=update
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=kubernetesclustertemplates;kubernetesmachinetemplates,verbs=get;list;watch
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=clusters;machines,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups="",resources=pods/log,verbs=get
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=persistentvolumeclaims,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list;watch
// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups=networking.k8s.io,resources=networkpolicies,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
