//go:build e2e

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

package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// The Flux objects the test makes in its namespace, and the controllers it runs.
const (
	fluxName         = "fleet" // the GitRepository and the Kustomization
	fluxFieldManager = kustomizeController

	sourceController    = "source-controller" // the binaries' names in FLUX
	kustomizeController = "kustomize-controller"
)

var (
	gitRepositoryKind = schema.GroupVersionKind{Group: "source.toolkit.fluxcd.io", Version: "v1", Kind: "GitRepository"}
	kustomizationKind = schema.GroupVersionKind{Group: "kustomize.toolkit.fluxcd.io", Version: "v1", Kind: "Kustomization"}
)

// flux is the real Flux source-controller and kustomize-controller
// (test/infra/builds/flux.sh), run as processes of this machine against the
// management cluster with its admin kubeconfig, and a Git repository they
// read over HTTP on the loopback (git http-backend).
type flux struct {
	namespace string
	repo      string // the repository's work tree, where the test commits
	url       string // the repository's URL
	logs      string // the controllers' logs, <controller>.log
	binaries  string // the folder of the controllers (FLUX)
}

// startFlux installs Flux's CRDs on the management cluster, starts the two
// controllers and serves an empty repository for GitRepositories of the
// namespace; everything stops when the test ends.
func startFlux(ctx context.Context, t *testing.T, g Gomega, namespace string) *flux {
	t.Helper()
	dir := env.settings["FLUX"]
	g.Expect(dir).NotTo(BeEmpty(), "no FLUX in the environment's settings: run test/infra/env.sh up")
	_, err := env.command(ctx, t, nil, "KUBECTL", "apply", "--server-side", "-f", filepath.Join(dir, "crds"))
	g.Expect(err).NotTo(HaveOccurred())
	_, err = env.command(ctx, t, nil, "KUBECTL", "wait", "--for=condition=Established", "--timeout=60s",
		"crd/gitrepositories.source.toolkit.fluxcd.io", "crd/kustomizations.kustomize.toolkit.fluxcd.io")
	g.Expect(err).NotTo(HaveOccurred())

	f := &flux{namespace: namespace, logs: t.TempDir(), binaries: dir}
	f.repo, f.url = serveGitRepository(t, g)
	storage, storageDir := freeLoopbackAddress(g), filepath.Join(f.logs, "storage")
	g.Expect(os.Mkdir(storageDir, 0o755)).To(Succeed())
	f.start(t, g, sourceController,
		"--storage-path="+storageDir, "--storage-addr="+storage, "--storage-adv-addr="+storage)
	// A commit that fixes what a failing health check waits for is applied at
	// once, not after the Kustomization's timeout (docs/gitops.md).
	f.start(t, g, kustomizeController,
		"--feature-gates=CancelHealthCheckOnNewRevision=true")
	t.Cleanup(func() {
		if t.Failed() {
			f.logTails(t)
		}
		f.deleteObjects(t)
	})
	return f
}

// deleteObjects deletes the Kustomization and the GitRepository while their
// controllers still run, so that their finalizers go (a Kustomization
// deleted with prune deletes what it applied).
func (f *flux) deleteObjects(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, kind := range []schema.GroupVersionKind{kustomizationKind, gitRepositoryKind} {
		obj := &unstructured.Unstructured{}
		obj.SetGroupVersionKind(kind)
		obj.SetNamespace(f.namespace)
		obj.SetName(fluxName)
		if err := client.IgnoreNotFound(env.client.Delete(ctx, obj)); err != nil {
			t.Errorf("deleting %s: %v", kind.Kind, err)
			continue
		}
		for env.client.Get(ctx, client.ObjectKeyFromObject(obj), obj) == nil && ctx.Err() == nil {
			time.Sleep(time.Second)
		}
	}
}

// start runs a controller with no leader election, metrics or health
// endpoints, logging into a file, until the test ends.
func (f *flux) start(t *testing.T, g Gomega, controller string, args ...string) {
	logFile, err := os.Create(f.logOf(controller))
	g.Expect(err).NotTo(HaveOccurred())
	cmd := exec.Command(filepath.Join(f.binaries, controller), append([]string{"--metrics-addr=0", "--health-addr=0", "--log-level=info"}, args...)...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+env.settings["KUBECONFIG"])
	cmd.Stdout, cmd.Stderr = logFile, logFile
	g.Expect(cmd.Start()).To(Succeed())
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		_ = logFile.Close()
	})
}

// logOf is the file a controller logs into.
func (f *flux) logOf(controller string) string { return filepath.Join(f.logs, controller+".log") }

// logTails logs the last lines of both controllers' logs.
func (f *flux) logTails(t *testing.T) {
	for _, name := range []string{sourceController, kustomizeController} {
		data, err := os.ReadFile(f.logOf(name))
		if err != nil {
			t.Logf("%s: %v", name, err)
			continue
		}
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		t.Logf("last lines of %s:\n%s", name, strings.Join(lines[max(0, len(lines)-40):], "\n"))
	}
}

// freeLoopbackAddress is an address on the loopback that nothing listens on.
func freeLoopbackAddress(g Gomega) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	g.Expect(err).NotTo(HaveOccurred())
	address := l.Addr().String()
	g.Expect(l.Close()).To(Succeed())
	return address
}

// serveGitRepository makes an empty repository with branch main and serves
// it read-only over HTTP on the loopback, as a Git host would; it returns
// the work tree and the URL.
func serveGitRepository(t *testing.T, g Gomega) (repo, url string) {
	root := t.TempDir()
	repo = filepath.Join(root, "fleet")
	git, err := exec.LookPath("git")
	g.Expect(err).NotTo(HaveOccurred(), "git is needed to serve the repository")
	out, err := exec.Command(git, "init", "--quiet", "--initial-branch=main", repo).CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred(), string(out))
	server := httptest.NewServer(&cgi.Handler{Path: git, Args: []string{"http-backend"},
		Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}})
	t.Cleanup(server.Close)
	return repo, server.URL + "/fleet"
}

// commit writes the files (a nil content removes the file), commits them and
// returns the revision as Flux names it (main@sha1:<hash>).
func (f *flux) commit(t *testing.T, g Gomega, message string, files map[string][]byte) string {
	t.Helper()
	for name, content := range files {
		path := filepath.Join(f.repo, name)
		if content == nil {
			g.Expect(os.Remove(path)).To(Succeed())
			continue
		}
		g.Expect(os.MkdirAll(filepath.Dir(path), 0o755)).To(Succeed())
		g.Expect(os.WriteFile(path, content, 0o644)).To(Succeed())
	}
	f.git(g, "add", "--all")
	f.git(g, "commit", "--quiet", "--message", message)
	hash := strings.TrimSpace(f.git(g, "rev-parse", "HEAD"))
	t.Logf("committed %q: %s", message, hash)
	return "main@sha1:" + hash
}

func (f *flux) git(g Gomega, args ...string) string {
	cmd := exec.Command("git", append([]string{"-C", f.repo}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=e2e", "GIT_AUTHOR_EMAIL=e2e@localhost",
		"GIT_COMMITTER_NAME=e2e", "GIT_COMMITTER_EMAIL=e2e@localhost")
	out, err := cmd.CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred(), "git %s: %s", strings.Join(args, " "), out)
	return string(out)
}

// createSource creates the GitRepository of the repository and the
// Kustomization of its path with the given spec (sourceRef is set here).
func (f *flux) createSource(ctx context.Context, g Gomega, path string, spec map[string]any) {
	source := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{
		"url": f.url, "interval": "5s", "ref": map[string]any{"branch": "main"},
	}}}
	source.SetGroupVersionKind(gitRepositoryKind)
	source.SetNamespace(f.namespace)
	source.SetName(fluxName)
	g.Expect(env.client.Create(ctx, source)).To(Succeed())

	spec["path"] = path
	spec["sourceRef"] = map[string]any{"kind": "GitRepository", "name": fluxName}
	kustomization := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	kustomization.SetGroupVersionKind(kustomizationKind)
	kustomization.SetNamespace(f.namespace)
	kustomization.SetName(fluxName)
	g.Expect(env.client.Create(ctx, kustomization)).To(Succeed())
}

// kustomization reads the Kustomization.
func (f *flux) kustomization(ctx context.Context, g Gomega) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(kustomizationKind)
	g.Expect(env.client.Get(ctx, client.ObjectKey{Namespace: f.namespace, Name: fluxName}, obj)).To(Succeed())
	return obj
}

// fluxStatus is what the test reads of a Kustomization's status.
type fluxStatus struct {
	Ready                 metav1.Condition
	LastAttemptedRevision string
	LastAppliedRevision   string
	LastHandledReconcile  string
	Inventory             []string
}

func readFluxStatus(g Gomega, obj *unstructured.Unstructured) fluxStatus {
	var status struct {
		Conditions            []metav1.Condition `json:"conditions"`
		LastAttemptedRevision string             `json:"lastAttemptedRevision"`
		LastAppliedRevision   string             `json:"lastAppliedRevision"`
		LastHandledReconcile  string             `json:"lastHandledReconcileAt"`
		Inventory             struct {
			Entries []struct {
				ID string `json:"id"`
			} `json:"entries"`
		} `json:"inventory"`
	}
	data, err := json.Marshal(obj.Object["status"])
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(json.Unmarshal(data, &status)).To(Succeed())
	s := fluxStatus{LastAttemptedRevision: status.LastAttemptedRevision, LastAppliedRevision: status.LastAppliedRevision,
		LastHandledReconcile: status.LastHandledReconcile, Ready: metav1.Condition{Type: "Ready", Status: metav1.ConditionUnknown}}
	for _, c := range status.Conditions {
		if c.Type == "Ready" {
			s.Ready = c
		}
	}
	for _, e := range status.Inventory.Entries {
		s.Inventory = append(s.Inventory, e.ID)
	}
	return s
}

// reconcileNow asks kustomize-controller to reconcile the Kustomization, as
// `flux reconcile` does, and waits until it has.
func (f *flux) reconcileNow(ctx context.Context, g Gomega) fluxStatus {
	requested := time.Now().UTC().Format(time.RFC3339Nano)
	obj := f.kustomization(ctx, g)
	patch := client.MergeFrom(obj.DeepCopy())
	annotations := obj.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations["reconcile.fluxcd.io/requestedAt"] = requested
	obj.SetAnnotations(annotations)
	g.Expect(env.client.Patch(ctx, obj, patch)).To(Succeed())
	var status fluxStatus
	g.Eventually(func(g Gomega) {
		status = readFluxStatus(g, f.kustomization(ctx, g))
		g.Expect(status.LastHandledReconcile).To(Equal(requested))
	}).WithTimeout(3 * time.Minute).WithPolling(time.Second).Should(Succeed())
	return status
}

// applyOutputs returns, for each server-side apply kustomize-controller
// logged after since, its output: object -> action (created, configured,
// unchanged, ...).
func (f *flux) applyOutputs(g Gomega, since time.Time) []map[string]string {
	file, err := os.Open(f.logOf(kustomizeController))
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = file.Close() }() // read only
	var outputs []map[string]string
	scanner := bufio.NewScanner(file)
	scanner.Buffer(make([]byte, 1<<20), 1<<24)
	for scanner.Scan() {
		var line struct {
			Msg    string            `json:"msg"`
			TS     string            `json:"ts"`
			Name   string            `json:"name"`
			Output map[string]string `json:"output"`
		}
		if json.Unmarshal(scanner.Bytes(), &line) != nil || line.Msg != "server-side apply completed" {
			continue
		}
		ts, err := parseLogTime(line.TS)
		g.Expect(err).NotTo(HaveOccurred(), "kustomize-controller's log time")
		if ts.After(since) && line.Name == fluxName {
			outputs = append(outputs, line.Output)
		}
	}
	g.Expect(scanner.Err()).NotTo(HaveOccurred())
	return outputs
}

// parseLogTime reads a Flux log line's time: ISO 8601 (zap's encoder) or RFC 3339.
func parseLogTime(ts string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.000Z0700"} {
		if parsed, err := time.Parse(layout, ts); err == nil {
			return parsed, nil
		}
	}
	return time.Time{}, fmt.Errorf("time %q is neither RFC 3339 nor ISO 8601", ts)
}

// manifest is objects as one multi-document YAML file.
func manifest(g Gomega, objects []*unstructured.Unstructured) []byte {
	var b strings.Builder
	for _, obj := range objects {
		data, err := yaml.Marshal(obj.Object)
		g.Expect(err).NotTo(HaveOccurred())
		fmt.Fprintf(&b, "---\n%s", data)
	}
	return []byte(b.String())
}
