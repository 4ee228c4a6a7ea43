// Wrapper module that pins kind, whose module zip carries the recipe of its
// node image (images/base: the Dockerfile with the versions it builds, and the
// files it copies), read by ../kind-base.sh and the node image build. Its
// go.sum makes the build reproducible.
module github.com/capi-kubernetes/cluster-api-provider-kubernetes/test/infra/builds/kind

go 1.26.0

require sigs.k8s.io/kind v0.33.0

require github.com/pkg/errors v0.9.1 // indirect
