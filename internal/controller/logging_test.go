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

package controller

import (
	"context"
	"testing"

	"github.com/go-logr/logr/funcr"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
)

func TestWithOwnerKeysNamesTheClusterAndTheMachine(t *testing.T) {
	g := NewWithT(t)
	var lines []string
	log := funcr.New(func(prefix, args string) { lines = append(lines, args) }, funcr.Options{})
	ctx := ctrl.LoggerInto(context.Background(), log)
	cluster := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c"}}
	machine := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "m"}}

	ctrl.LoggerFrom(withOwnerKeys(ctx, cluster, machine)).Info("both")
	ctrl.LoggerFrom(withOwnerKeys(ctx, cluster, nil)).Info("cluster only")
	ctrl.LoggerFrom(withOwnerKeys(ctx, nil, nil)).Info("none")

	g.Expect(lines).To(Equal([]string{
		`"level"=0 "msg"="both" "Cluster"={"name"="c" "namespace"="ns"} "Machine"={"name"="m" "namespace"="ns"}`,
		`"level"=0 "msg"="cluster only" "Cluster"={"name"="c" "namespace"="ns"}`,
		`"level"=0 "msg"="none"`,
	}))
}
