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
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"time"
)

// Request is one API request of the audit log. The API server logs a request
// at several stages (ResponseStarted for watches, ResponseComplete, Panic);
// it is one Request, at the time the API server received it.
type Request struct {
	User     string
	Verb     string
	Resource string // resource[/subresource], or the path of a non-resource URL
	Received time.Time
	Code     int // HTTP status of the response; 0 when no stage had one
}

// Key names the request's kind in tallies: "verb resource".
func (r Request) Key() string { return r.Verb + " " + r.Resource }

// auditEvent holds the fields of an audit.k8s.io/v1 Event the benchmark reads.
type auditEvent struct {
	AuditID    string `json:"auditID"`
	Verb       string `json:"verb"`
	RequestURI string `json:"requestURI"`
	User       struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	RequestReceivedTimestamp time.Time `json:"requestReceivedTimestamp"`
}

// resource is what the event's request was about.
func (e *auditEvent) resource() string {
	if e.ObjectRef == nil || e.ObjectRef.Resource == "" {
		path, _, _ := strings.Cut(e.RequestURI, "?")
		return path
	}
	if e.ObjectRef.Subresource != "" {
		return e.ObjectRef.Resource + "/" + e.ObjectRef.Subresource
	}
	return e.ObjectRef.Resource
}

// ReadAuditLog reads a JSON-lines audit log and returns each request once, in
// the order of their first event.
func ReadAuditLog(r io.Reader) ([]Request, error) {
	scanner := bufio.NewScanner(r)
	scanner.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	var requests []Request
	index := map[string]int{}
	for line := 1; scanner.Scan(); line++ {
		if len(strings.TrimSpace(scanner.Text())) == 0 {
			continue
		}
		var event auditEvent
		if err := json.Unmarshal(scanner.Bytes(), &event); err != nil {
			return nil, fmt.Errorf("audit log line %d: %w", line, err)
		}
		i, seen := index[event.AuditID]
		if !seen {
			i = len(requests)
			index[event.AuditID] = i
			requests = append(requests, Request{
				User: event.User.Username, Verb: event.Verb, Resource: event.resource(), Received: event.RequestReceivedTimestamp,
			})
		}
		if event.ResponseStatus != nil {
			requests[i].Code = event.ResponseStatus.Code
		}
	}
	if err := scanner.Err(); err != nil {
		return nil, fmt.Errorf("reading the audit log: %w", err)
	}
	return requests, nil
}

// ReadAuditLogFile reads the audit log at path.
func ReadAuditLogFile(path string) ([]Request, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("opening the audit log: %w", err)
	}
	defer func() { _ = f.Close() }()
	return ReadAuditLog(f)
}

// Window is a half-open interval of time [From, To).
type Window struct {
	From, To time.Time
}

// Contains tells whether t is in the window.
func (w Window) Contains(t time.Time) bool { return !t.Before(w.From) && t.Before(w.To) }

// Duration is the window's length.
func (w Window) Duration() time.Duration { return w.To.Sub(w.From) }

// Tally counts requests by Key.
type Tally map[string]int

// CountRequests tallies the requests of user received in the window.
func CountRequests(requests []Request, user string, window Window) Tally {
	tally := Tally{}
	for _, r := range requests {
		if r.User == user && window.Contains(r.Received) {
			tally[r.Key()]++
		}
	}
	return tally
}

// CountConflicts counts the requests of user in the window that the API server
// answered with 409 Conflict (a stale write, or a create of an existing name).
func CountConflicts(requests []Request, user string, window Window) int {
	n := 0
	for _, r := range requests {
		if r.User == user && window.Contains(r.Received) && r.Code == 409 {
			n++
		}
	}
	return n
}

// Request classes of a Tally.
const (
	ClassWrite = "write" // create, update, patch, delete of objects
	ClassRead  = "read"  // get, list, watch and non-resource reads
	ClassLease = "lease" // leader election: any verb on leases
	ClassAuth  = "auth"  // token and access reviews of the metrics endpoint
)

// ClassOf puts a request key ("verb resource") into one class.
func ClassOf(key string) string {
	verb, resource, _ := strings.Cut(key, " ")
	base, _, _ := strings.Cut(resource, "/")
	switch {
	case base == "leases":
		return ClassLease
	case base == "tokenreviews" || base == "subjectaccessreviews":
		return ClassAuth
	case IsWrite(verb):
		return ClassWrite
	default:
		return ClassRead
	}
}

// IsWrite tells whether an audit verb changes objects.
func IsWrite(verb string) bool {
	switch verb {
	case "create", "update", "patch", "delete", "deletecollection":
		return true
	}
	return false
}

// Class is the number of requests of one class.
func (t Tally) Class(class string) int {
	n := 0
	for key, count := range t {
		if ClassOf(key) == class {
			n += count
		}
	}
	return n
}

// Total is the number of requests of every class.
func (t Tally) Total() int {
	n := 0
	for _, count := range t {
		n += count
	}
	return n
}

// Keys are the tally's keys, most requests first, then by name.
func (t Tally) Keys() []string {
	return slices.SortedFunc(maps.Keys(t), func(a, b string) int {
		if t[a] != t[b] {
			return t[b] - t[a]
		}
		return strings.Compare(a, b)
	})
}
