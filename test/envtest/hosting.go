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
	"errors"
	"fmt"
	"net/url"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crenvtest "sigs.k8s.io/controller-runtime/pkg/envtest"
)

// HostingCluster is a second real kube-apiserver and etcd that plays a remote
// hosting cluster: no CRDs, no webhooks, reached through a kubeconfig.
type HostingCluster struct {
	Client     client.Client
	Config     *rest.Config
	Kubeconfig []byte
	env        *crenvtest.Environment
}

// StartHostingCluster starts the remote hosting cluster, with the CRDs in
// crdPaths when given (a bare API server to install components on).
func StartHostingCluster(crdPaths ...string) (*HostingCluster, error) {
	scheme, err := NewScheme()
	if err != nil {
		return nil, err
	}
	env := &crenvtest.Environment{Scheme: scheme, CRDDirectoryPaths: crdPaths, ErrorIfCRDPathMissing: true}
	config, err := env.Start()
	if err != nil {
		return nil, errors.Join(fmt.Errorf("starting the hosting cluster's kube-apiserver and etcd: %w", err), env.Stop())
	}
	c, err := client.New(config, client.Options{Scheme: scheme})
	if err != nil {
		return nil, errors.Join(err, env.Stop())
	}
	kubeconfig, err := KubeconfigFor(config, "")
	if err != nil {
		return nil, errors.Join(err, env.Stop())
	}
	return &HostingCluster{Client: c, Config: config, Kubeconfig: kubeconfig, env: env}, nil
}

// KubeconfigThrough is a kubeconfig that reaches the hosting cluster through
// proxy, with the credentials of config (the cluster's own when nil).
func (h *HostingCluster) KubeconfigThrough(proxy *Proxy, config *rest.Config) ([]byte, error) {
	if config == nil {
		config = h.Config
	}
	through := rest.CopyConfig(config)
	through.Host = "https://" + proxy.Address()
	return KubeconfigFor(through, "")
}

// APIServerAddress is the host:port of the hosting cluster's API server.
func (h *HostingCluster) APIServerAddress() (string, error) {
	u, err := url.Parse(h.Config.Host)
	if err != nil {
		return "", err
	}
	return u.Host, nil
}

// AddUser gives the hosting cluster a new administrator and returns its
// credentials: a new valid credential to rotate a kubeconfig to.
func (h *HostingCluster) AddUser(name string) (*rest.Config, error) {
	user, err := h.env.AddUser(crenvtest.User{Name: name, Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return nil, err
	}
	return user.Config(), nil
}

// Stop stops the hosting cluster's API server and etcd.
func (h *HostingCluster) Stop() error { return h.env.Stop() }

// KubeconfigFor writes a kubeconfig for a rest.Config (client certificates, as
// envtest hands out); namespace sets the context's namespace when not empty.
func KubeconfigFor(config *rest.Config, namespace string) ([]byte, error) {
	kubeconfig := clientcmdapi.NewConfig()
	kubeconfig.Clusters["hosting"] = &clientcmdapi.Cluster{Server: config.Host, CertificateAuthorityData: config.CAData}
	kubeconfig.AuthInfos["hosting"] = &clientcmdapi.AuthInfo{
		ClientCertificateData: config.CertData, ClientKeyData: config.KeyData, Token: config.BearerToken,
	}
	kubeconfig.Contexts["hosting"] = &clientcmdapi.Context{Cluster: "hosting", AuthInfo: "hosting", Namespace: namespace}
	kubeconfig.CurrentContext = "hosting"
	return clientcmd.Write(*kubeconfig)
}
