// Helper programs of the hosting-cluster environment (test/infra/hosting). A module
// of its own so that go-containerregistry and the CRI client never enter the
// provider's root go.mod.
module github.com/capi-kubernetes/cluster-api-provider-kubernetes/test/infra/hosting

go 1.26.0

require (
	github.com/google/go-containerregistry v0.22.1
	github.com/google/nftables v0.3.0
	google.golang.org/grpc v1.79.3
	k8s.io/cri-api v0.36.3
)

require (
	github.com/google/go-cmp v0.7.0 // indirect
	github.com/klauspost/compress v1.19.2 // indirect
	github.com/mdlayher/netlink v1.7.3-0.20250113171957-fbb4dce95f42 // indirect
	github.com/mdlayher/socket v0.5.0 // indirect
	github.com/opencontainers/go-digest v1.0.0 // indirect
	github.com/opencontainers/image-spec v1.1.1 // indirect
	golang.org/x/net v0.49.0 // indirect
	golang.org/x/sync v0.22.0 // indirect
	golang.org/x/sys v0.47.0 // indirect
	golang.org/x/text v0.33.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20260128011058-8636f8732409 // indirect
	google.golang.org/protobuf v1.36.12-0.20260120151049-f2248ac996af // indirect
)
