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
	"os"
	"path/filepath"
	"strconv"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crenvtest "sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/capi-kubernetes/cluster-api-provider-kubernetes/test/envtest"
)

// The API server users of the benchmark besides envtest's admin, which the
// benchmark's own setup and checks use: the audit log tells their requests apart.
const (
	// managerUser is the manager binary under test.
	managerUser = "capk-bench-manager"
	// simulatorUser is the node simulator (scheduler and kubelets).
	simulatorUser = "capk-bench-simulator"
	// rawUser creates the Pods of the raw create rate.
	rawUser = "capk-bench-raw"
	// baselineUser makes the baseline's writes.
	baselineUser = "capk-bench-baseline"
	// systemNamespace holds the manager's leader election lease and the
	// metrics reader's ServiceAccount, as capk-system does in a real install.
	systemNamespace = "capk-system"
)

// auditPolicy logs every request's metadata once it is answered.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
`

// environment is a kube-apiserver and etcd with the provider's and Cluster
// API's CRDs, the provider's webhook configurations and an audit log.
type environment struct {
	env      *crenvtest.Environment
	scheme   *kruntime.Scheme
	client   client.Client // the benchmark's own (admin) client
	dir      string
	auditLog string
	admin    *rest.Config
	users    map[string]*crenvtest.AuthenticatedUser
}

// startEnvironment starts the API server with its files under dir; etcd
// syncs its writes to disk as in production unless noFsync.
func startEnvironment(dir string, noFsync bool) (*environment, error) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		return nil, errors.New("KUBEBUILDER_ASSETS is not set: run the benchmark with 'make bench'")
	}
	// The benchmark's own informers log nothing worth reading; the manager logs to its file.
	ctrl.SetLogger(logr.Discard())
	scheme, err := envtest.NewScheme()
	if err != nil {
		return nil, err
	}
	capiCRDs, err := envtest.ClusterAPICRDs()
	if err != nil {
		return nil, err
	}
	root := envtest.RepositoryRoot()
	e := &environment{scheme: scheme, dir: dir, auditLog: filepath.Join(dir, "audit.log"), users: map[string]*crenvtest.AuthenticatedUser{}}
	policy := filepath.Join(dir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
		return nil, fmt.Errorf("writing the audit policy: %w", err)
	}
	e.env = &crenvtest.Environment{
		Scheme:                scheme,
		CRDDirectoryPaths:     append([]string{filepath.Join(root, "config", "crd", "bases")}, capiCRDs...),
		ErrorIfCRDPathMissing: true,
		WebhookInstallOptions: crenvtest.WebhookInstallOptions{Paths: []string{filepath.Join(root, "config", "webhook")}},
	}
	e.env.ControlPlane.GetAPIServer().Configure().
		Set("audit-policy-file", policy).
		Set("audit-log-path", e.auditLog).
		// room for more control-plane Services than envtest's /24 holds
		Set("service-cluster-ip-range", "10.0.0.0/16")
	// envtest turns etcd's fsync off for speed; a production etcd syncs every commit.
	e.env.ControlPlane.Etcd = &crenvtest.Etcd{}
	e.env.ControlPlane.Etcd.Configure().Set("unsafe-no-fsync", strconv.FormatBool(noFsync))
	config, err := e.env.Start()
	if err != nil {
		return nil, errors.Join(fmt.Errorf("starting kube-apiserver and etcd: %w", err), e.env.Stop())
	}
	e.admin = config
	if err := e.setUp(); err != nil {
		return nil, errors.Join(err, e.env.Stop())
	}
	return e, nil
}

// setUp adds the users and the namespaces every phase needs.
func (e *environment) setUp() error {
	var err error
	if e.client, err = client.New(e.admin, client.Options{Scheme: e.scheme}); err != nil {
		return fmt.Errorf("creating the benchmark's client: %w", err)
	}
	for _, name := range []string{managerUser, simulatorUser, rawUser, baselineUser} {
		user, err := e.env.AddUser(crenvtest.User{Name: name, Groups: []string{"system:masters"}}, &rest.Config{QPS: 100000, Burst: 100000})
		if err != nil {
			return fmt.Errorf("adding API server user %s: %w", name, err)
		}
		e.users[name] = user
	}
	return createNamespace(context.Background(), e.client, systemNamespace)
}

// config is the REST configuration of the simulator's, the raw creator's or
// the baseline's user: no client-side rate limit.
func (e *environment) config(user string) *rest.Config {
	return rest.CopyConfig(e.users[user].Config())
}

// writeKubeconfig writes a kubeconfig for user to path.
func (e *environment) writeKubeconfig(user, path string) error {
	data, err := e.users[user].KubeConfig()
	if err != nil {
		return fmt.Errorf("writing a kubeconfig for %s: %w", user, err)
	}
	return os.WriteFile(path, data, 0o600)
}

// webhook is where the API server calls the provider's webhooks.
func (e *environment) webhook() crenvtest.WebhookInstallOptions { return e.env.WebhookInstallOptions }

// stop stops the API server and etcd.
func (e *environment) stop() error { return e.env.Stop() }

// createNamespace creates a namespace that allows privileged Pods, as node Pods are.
func createNamespace(ctx context.Context, c client.Client, name string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name:   name,
		Labels: map[string]string{"pod-security.kubernetes.io/enforce": "privileged"},
	}}
	if err := c.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", name, err)
	}
	return nil
}

// metricsToken creates a ServiceAccount allowed to get /metrics, as Prometheus
// would have, and returns a token for it from the TokenRequest API.
func (e *environment) metricsToken(ctx context.Context) (string, error) {
	const name = "capk-bench-metrics-reader"
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: systemNamespace, Name: name}}
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Rules:      []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}},
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: systemNamespace, Name: name}},
	}
	for _, obj := range []client.Object{sa, role, binding} {
		if err := e.client.Create(ctx, obj); err != nil {
			return "", fmt.Errorf("creating %T %s for the metrics reader: %w", obj, obj.GetName(), err)
		}
	}
	request := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(3 * 3600))}}
	if err := e.client.SubResource("token").Create(ctx, sa, request); err != nil {
		return "", fmt.Errorf("requesting a token for ServiceAccount %s/%s: %w", systemNamespace, name, err)
	}
	return request.Status.Token, nil
}
