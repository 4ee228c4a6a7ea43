# cluster-api-provider-kubernetes: a Cluster API infrastructure provider whose Nodes are Pods.

SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec
export GOTOOLCHAIN := local

IMG ?= controller:latest
# The release the manifests describe, and the image clusterctl installs by default
# (users override it with CAPK_IMAGE).
VERSION ?= v0.2.0
RELEASE_IMAGE ?= ghcr.io/capi-kubernetes/cluster-api-provider-kubernetes:$(VERSION)
# The image `make image` builds: the one the release manifests default to, unless
# CAPK_IMAGE names another (clusterctl reads the same variable).
CAPK_IMAGE ?= $(RELEASE_IMAGE)
# The OCI image-layout tarball `make image` writes.
IMAGE_TAR ?= $(abspath bin/manager-image.tar)
ROOT := $(abspath .)
BIN := $(ROOT)/bin
export PATH := $(BIN):$(PATH)

# Tool versions, installed from the Go module proxy into ./bin.
CONTROLLER_GEN_VERSION ?= v0.21.0
CONVERSION_GEN_VERSION ?= v0.36.3
KUSTOMIZE_VERSION ?= v5.8.2
GOLANGCI_LINT_VERSION ?= v2.15.0

CONTROLLER_GEN := $(BIN)/controller-gen-$(CONTROLLER_GEN_VERSION)
CONVERSION_GEN := $(BIN)/conversion-gen-$(CONVERSION_GEN_VERSION)
KUSTOMIZE := $(BIN)/kustomize-$(KUSTOMIZE_VERSION)
GOLANGCI_LINT := $(BIN)/golangci-lint-$(GOLANGCI_LINT_VERSION)

.PHONY: all
all: build

##@ Help

.PHONY: help
help: ## Show the targets.
	@awk 'BEGIN {FS = ":.*##"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  %-22s %s\n", $$1, $$2 } /^##@/ { printf "\n%s\n", substr($$0, 5) }' $(MAKEFILE_LIST)

##@ Development

.PHONY: generate
generate: $(CONTROLLER_GEN) $(CONVERSION_GEN) ## Generate deepcopy and conversion code.
	$(CONTROLLER_GEN) object:headerFile="hack/boilerplate.go.txt" paths="./api/..."
	$(CONVERSION_GEN) --go-header-file=hack/boilerplate.go.txt --output-file=zz_generated.conversion.go ./api/v1alpha1

.PHONY: manifests
manifests: $(CONTROLLER_GEN) ## Generate CRDs, RBAC and webhook manifests.
	$(CONTROLLER_GEN) rbac:roleName=manager-role crd webhook paths="./..." output:crd:artifacts:config=config/crd/bases

.PHONY: verify-generated
verify-generated: generate manifests ## Fail when generated files differ from the committed ones.
	@if [ -n "$$(git status --porcelain -- api config internal cmd)" ]; then \
		git status --porcelain -- api config internal cmd; git diff --stat -- api config internal cmd; \
		echo "generated files are stale: run 'make generate manifests' and commit the result"; exit 1; fi

.PHONY: fmt
fmt: ## Run gofmt.
	gofmt -l -w $$(git ls-files '*.go')

.PHONY: vet
vet: ## Run go vet.
	go vet ./...

.PHONY: lint
lint: $(GOLANGCI_LINT) ## Run golangci-lint (includes gofmt and go vet) on the provider and on the test/infra and test/capi-e2e modules.
	$(GOLANGCI_LINT) run ./...
	cd test/infra && $(GOLANGCI_LINT) run ./...
	cd test/capi-e2e && $(GOLANGCI_LINT) run ./...

.PHONY: test-assets
test-assets: ## Build etcd and kube-apiserver from source into the version-named cache (skipped when present).
	@hack/kube-binaries.sh etcd kube-apiserver

.PHONY: test
test: generate manifests release-manifests ## Run unit, envtest and clusterctl tests on a real kube-apiserver and etcd built from source, and the test/infra unit tests.
	KUBEBUILDER_ASSETS="$$(hack/kube-binaries.sh etcd kube-apiserver)" \
	CLUSTERCTL="$$(hack/cluster-api-binaries.sh clusterctl)/clusterctl" \
	go test ./... -count=1 $(TEST_ARGS)
	cd test/infra && go test ./... -count=1
	cd test/capi-e2e && go test ./... -count=1

.PHONY: test-e2e
test-e2e: release-manifests ## Run the end-to-end tests (root): local hosting cluster, clusterctl init, workload clusters of node Pods.
	@# test/infra/env.sh (called by the tests) builds and caches everything else.
	go test -tags e2e ./test/e2e/... -count=1 -v -timeout 80m $(TEST_ARGS)

.PHONY: test-e2e-rolling-drain
test-e2e-rolling-drain: release-manifests ## Run the zones test (root) with a rolling drain of all three hosting nodes (make test-e2e drains one).
	CAPK_E2E_ROLLING_DRAIN=1 go test -tags e2e ./test/e2e/... -count=1 -v -timeout 80m -run TestHostingZones $(TEST_ARGS)

.PHONY: test-e2e-cgroupv2
test-e2e-cgroupv2: release-manifests ## Run a workload cluster with its worker on the cgroup v2 hosting node (root; a VM under qemu's software CPU, joined by test/infra/env.sh vm-node).
	go test -tags 'e2e cgroupv2' ./test/e2e/... -count=1 -v -timeout 80m -run TestCgroupV2HostingNode $(TEST_ARGS)

.PHONY: test-capi-e2e
test-capi-e2e: release-manifests $(KUSTOMIZE) ## Run Cluster API's own e2e specs (root) against the provider on the local environment (reused when it runs).
	KUSTOMIZE=$(KUSTOMIZE) test/capi-e2e/run.sh

.PHONY: quickstart
quickstart: release-manifests ## The main job (root): hosting/management cluster, CAPI and this provider, a workload cluster of node Pods.
	test/infra/quickstart.sh

.PHONY: quickstart-down
quickstart-down: ## Remove everything quickstart (or test/infra/env.sh up) created.
	test/infra/env.sh down

# Fuzz targets as <package>:<target>. Without -fuzzminimizetime, every input
# that finds new coverage is minimized for 60 s and a short run does nothing else.
FUZZ_TARGETS ?= ./internal/bootstrap:FuzzRender \
	./api/v1alpha1:FuzzKubernetesMachineConversion ./api/v1alpha1:FuzzKubernetesClusterConversion \
	./internal/webhook/v1beta1/admission:FuzzKubernetesMachineAdmission
FUZZTIME ?= 20s

.PHONY: fuzz
fuzz: ## Run every fuzz target for FUZZTIME (plain go test runs only their seeds).
	@export KUBEBUILDER_ASSETS="$$(hack/kube-binaries.sh etcd kube-apiserver)"; \
	for target in $(FUZZ_TARGETS); do \
		echo "--- $$target ($(FUZZTIME))"; \
		hack/fuzz.sh "$$target" $(FUZZTIME) || exit 1; \
	done

.PHONY: bench
bench: build ## Scale benchmark (not part of make test): 1,000 machines across 100 clusters on a real API server; writes out/bench-results.json
	@# Sizes and timings: BENCH_CLUSTERS, BENCH_MACHINES_PER_CLUSTER, BENCH_STEADY_SECONDS, BENCH_MANAGER_ARGS,
	@# BENCH_OUTPUT and more (docs/performance.md); BENCH_ARGS adds go test flags.
	KUBEBUILDER_ASSETS="$$(hack/kube-binaries.sh etcd kube-apiserver)" go test -tags bench ./test/bench -run '^$$' -bench BenchmarkScale -benchtime 1x -timeout 60m -v $(BENCH_ARGS)

.PHONY: bench-nodes
bench-nodes: release-manifests ## Time to a working cluster against its floor (root, the e2e environment; not part of make test): out/bench-nodes/
	go test -tags e2e ./test/e2e -run '^$$' -bench BenchmarkNodeFloor -benchtime 1x -count=1 -v -timeout 60m $(TEST_ARGS)

.PHONY: bench-density
bench-density: release-manifests ## Clusters per hosting node (root, the e2e environment; not part of make test): out/bench-density/; BENCH_DENSITY_MAX caps the clusters (12)
	go test -tags e2e ./test/e2e -run '^$$' -bench BenchmarkDensity -benchtime 1x -count=1 -v -timeout 120m $(TEST_ARGS)

.PHONY: test-clusterctl
test-clusterctl: release-manifests ## Run only the clusterctl tests (generate every flavor, apply to a real API server).
	KUBEBUILDER_ASSETS="$$(hack/kube-binaries.sh etcd kube-apiserver)" \
	CLUSTERCTL="$$(hack/cluster-api-binaries.sh clusterctl)/clusterctl" \
	go test ./test/clusterctl/... -count=1 -v $(TEST_ARGS)

##@ Build

.PHONY: build
build: generate ## Build the manager binary.
	CGO_ENABLED=0 go build -trimpath -o bin/manager ./cmd

.PHONY: image
image: ## Build the manager image without a container engine: an OCI tarball (IMAGE_TAR) named CAPK_IMAGE.
	@# Same image as the Dockerfile: a static binary at /manager run as 65532, nothing else.
	CGO_ENABLED=0 GOOS=linux go build -trimpath -ldflags "-s -w" -o bin/image/manager ./cmd
	"$$(test/infra/tools.sh)/oci-image" -ref "$(CAPK_IMAGE)" -out "$(IMAGE_TAR)" \
		-file bin/image/manager:/manager:0755 -user 65532:65532 -entrypoint '["/manager"]'
	@echo "wrote $(IMAGE_TAR) ($(CAPK_IMAGE))"

.PHONY: docker-build
docker-build: ## Build the manager image with Docker (for users who have a Docker engine).
	docker build -t $(IMG) .

.PHONY: verify-kustomize
verify-kustomize: manifests $(KUSTOMIZE) ## Fail unless kustomize build config/default renders the same bytes twice.
	@$(KUSTOMIZE) build config/default > /tmp/capk-install-1.yaml
	@$(KUSTOMIZE) build config/default > /tmp/capk-install-2.yaml
	@cmp /tmp/capk-install-1.yaml /tmp/capk-install-2.yaml && echo "kustomize build config/default is deterministic"

.PHONY: build-installer
build-installer: manifests $(KUSTOMIZE) ## Render config/default into dist/install.yaml.
	mkdir -p dist
	$(KUSTOMIZE) build config/default > dist/install.yaml

##@ Release

.PHONY: release-manifests
release-manifests: manifests $(KUSTOMIZE) ## Write the clusterctl artifacts to out/: components, metadata, templates.
	mkdir -p out
	$(KUSTOMIZE) build config/default | \
		sed 's#image: controller:latest#image: $${CAPK_IMAGE:=$(RELEASE_IMAGE)}#' > out/infrastructure-components.yaml
	cp metadata.yaml out/metadata.yaml
	cp templates/cluster-template*.yaml templates/clusterclass-*.yaml out/

##@ Tools

$(BIN):
	mkdir -p $(BIN)

$(CONTROLLER_GEN): | $(BIN)
	GOBIN=$(BIN) go install sigs.k8s.io/controller-tools/cmd/controller-gen@$(CONTROLLER_GEN_VERSION)
	mv $(BIN)/controller-gen $@

$(CONVERSION_GEN): | $(BIN)
	GOBIN=$(BIN) go install k8s.io/code-generator/cmd/conversion-gen@$(CONVERSION_GEN_VERSION)
	mv $(BIN)/conversion-gen $@

$(KUSTOMIZE): | $(BIN)
	GOBIN=$(BIN) go install sigs.k8s.io/kustomize/kustomize/v5@$(KUSTOMIZE_VERSION)
	mv $(BIN)/kustomize $@

$(GOLANGCI_LINT): | $(BIN)
	GOBIN=$(BIN) go install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
	mv $(BIN)/golangci-lint $@
