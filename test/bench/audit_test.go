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
	"strings"
	"testing"
	"time"
)

// auditLog is an excerpt of a real audit log (level Metadata), trimmed to the
// fields that matter: a patch of a status, a watch logged when its response
// started and again when it completed, a create answered 409, a lease
// renewal, a non-resource request and a request of another user.
const auditLog = `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"a1","stage":"ResponseComplete","requestURI":"/apis/infrastructure.cluster.x-k8s.io/v1beta1/namespaces/bench-00/kubernetesmachines/m-0/status","verb":"patch","user":{"username":"capk-bench-manager","groups":["system:masters","system:authenticated"]},"objectRef":{"resource":"kubernetesmachines","namespace":"bench-00","name":"m-0","apiGroup":"infrastructure.cluster.x-k8s.io","apiVersion":"v1beta1","subresource":"status"},"responseStatus":{"metadata":{},"code":200},"requestReceivedTimestamp":"2026-01-01T10:00:01.000001Z","stageTimestamp":"2026-01-01T10:00:01.003000Z"}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"a2","stage":"ResponseStarted","requestURI":"/api/v1/pods?labelSelector=x\u0026watch=true","verb":"watch","user":{"username":"capk-bench-manager"},"objectRef":{"resource":"pods","apiVersion":"v1"},"responseStatus":{"metadata":{},"code":200},"requestReceivedTimestamp":"2026-01-01T10:00:02Z","stageTimestamp":"2026-01-01T10:00:02Z"}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"a3","stage":"ResponseComplete","requestURI":"/api/v1/namespaces/bench-00/secrets","verb":"create","user":{"username":"capk-bench-manager"},"objectRef":{"resource":"secrets","namespace":"bench-00","name":"m-0-bootstrap","apiVersion":"v1"},"responseStatus":{"metadata":{},"status":"Failure","reason":"AlreadyExists","code":409},"requestReceivedTimestamp":"2026-01-01T10:00:03Z","stageTimestamp":"2026-01-01T10:00:03Z"}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"a4","stage":"ResponseComplete","requestURI":"/apis/coordination.k8s.io/v1/namespaces/capk-system/leases/controller-leader-election-capk","verb":"update","user":{"username":"capk-bench-manager"},"objectRef":{"resource":"leases","namespace":"capk-system","name":"controller-leader-election-capk","apiGroup":"coordination.k8s.io","apiVersion":"v1"},"responseStatus":{"metadata":{},"code":200},"requestReceivedTimestamp":"2026-01-01T10:00:04Z","stageTimestamp":"2026-01-01T10:00:04Z"}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"a5","stage":"ResponseComplete","requestURI":"/apis?timeout=32s","verb":"get","user":{"username":"capk-bench-manager"},"responseStatus":{"metadata":{},"code":200},"requestReceivedTimestamp":"2026-01-01T10:00:05Z","stageTimestamp":"2026-01-01T10:00:05Z"}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"a6","stage":"ResponseComplete","requestURI":"/api/v1/namespaces/bench-00/pods/m-0/binding","verb":"create","user":{"username":"capk-bench-simulator"},"objectRef":{"resource":"pods","namespace":"bench-00","name":"m-0","apiVersion":"v1","subresource":"binding"},"responseStatus":{"metadata":{},"code":201},"requestReceivedTimestamp":"2026-01-01T10:00:06Z","stageTimestamp":"2026-01-01T10:00:06Z"}

{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"a2","stage":"ResponseComplete","requestURI":"/api/v1/pods?labelSelector=x\u0026watch=true","verb":"watch","user":{"username":"capk-bench-manager"},"objectRef":{"resource":"pods","apiVersion":"v1"},"responseStatus":{"metadata":{},"code":200},"requestReceivedTimestamp":"2026-01-01T10:00:02Z","stageTimestamp":"2026-01-01T10:09:02Z"}
`

func readTestAuditLog(t *testing.T) []Request {
	t.Helper()
	requests, err := ReadAuditLog(strings.NewReader(auditLog))
	if err != nil {
		t.Fatal(err)
	}
	return requests
}

func TestReadAuditLogCountsEachRequestOnce(t *testing.T) {
	requests := readTestAuditLog(t)
	if len(requests) != 6 {
		t.Fatalf("got %d requests, want 6 (the watch's two stages are one request): %+v", len(requests), requests)
	}
	want := []string{
		"patch kubernetesmachines/status", "watch pods", "create secrets", "update leases", "get /apis", "create pods/binding",
	}
	for i, key := range want {
		if requests[i].Key() != key {
			t.Errorf("request %d is %q, want %q", i, requests[i].Key(), key)
		}
	}
	if got := requests[0].Received; !got.Equal(time.Date(2026, 1, 1, 10, 0, 1, 1000, time.UTC)) {
		t.Errorf("received at %s, want 10:00:01.000001", got)
	}
	if requests[2].Code != 409 || requests[5].User != "capk-bench-simulator" {
		t.Errorf("code or user lost: %+v %+v", requests[2], requests[5])
	}
}

func TestReadAuditLogRejectsGarbage(t *testing.T) {
	_, err := ReadAuditLog(strings.NewReader(auditLog + "not json\n"))
	if err == nil || !strings.Contains(err.Error(), "line 9") {
		t.Errorf("got %v, want an error naming line 9", err)
	}
}

func TestCountRequestsByUserWindowAndClass(t *testing.T) {
	requests := readTestAuditLog(t)
	at := func(second int) time.Time { return time.Date(2026, 1, 1, 10, 0, second, 0, time.UTC) }
	tally := CountRequests(requests, "capk-bench-manager", Window{From: at(1), To: at(5)})
	want := Tally{"patch kubernetesmachines/status": 1, "watch pods": 1, "create secrets": 1, "update leases": 1}
	if len(tally) != len(want) {
		t.Fatalf("tally %v, want %v (the window ends before 10:00:05, the binding is another user's)", tally, want)
	}
	for key, n := range want {
		if tally[key] != n {
			t.Errorf("tally[%q] = %d, want %d", key, tally[key], n)
		}
	}
	if w, r, l := tally.Class(ClassWrite), tally.Class(ClassRead), tally.Class(ClassLease); w != 2 || r != 1 || l != 1 {
		t.Errorf("writes, reads, leases = %d, %d, %d; want 2, 1, 1", w, r, l)
	}
	if got := tally.Total(); got != 4 {
		t.Errorf("total %d, want 4", got)
	}
	if got := CountConflicts(requests, "capk-bench-manager", Window{From: at(0), To: at(10)}); got != 1 {
		t.Errorf("conflicts %d, want 1", got)
	}
}

func TestClassOf(t *testing.T) {
	tests := map[string]string{
		"create pods":                     ClassWrite,
		"delete secrets":                  ClassWrite,
		"patch kubernetesmachines/status": ClassWrite,
		"create pods/binding":             ClassWrite,
		"get leases":                      ClassLease,
		"update leases":                   ClassLease,
		"create tokenreviews":             ClassAuth,
		"create subjectaccessreviews":     ClassAuth,
		"list kubernetesmachines":         ClassRead,
		"watch pods":                      ClassRead,
		"get /healthz":                    ClassRead,
	}
	for key, want := range tests {
		if got := ClassOf(key); got != want {
			t.Errorf("ClassOf(%q) = %q, want %q", key, got, want)
		}
	}
}

func TestTallyKeysMostFirst(t *testing.T) {
	keys := Tally{"b": 1, "a": 1, "c": 5}.Keys()
	if strings.Join(keys, ",") != "c,a,b" {
		t.Errorf("keys %v, want c, a, b", keys)
	}
}
