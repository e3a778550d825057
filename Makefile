# CAPTF — make targets. `make test` and `make demo` build any missing tool
# themselves (hack/tools/build.sh, cached outside the repository).
SHELL := /usr/bin/env bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

TOOLS_DIR := $(shell hack/tools/build.sh --print-dir)
CONTROLLER_GEN := $(TOOLS_DIR)/bin/controller-gen
GOLANGCI_LINT := $(TOOLS_DIR)/bin/golangci-lint
# Most of a test's time is spent waiting on Jobs, Leases and requeues, not
# on a core: run more tests and packages side by side than the defaults
# (GOMAXPROCS, 2 here). Test binaries are linked without DWARF (-w): each
# link takes a quarter less CPU. They are built with -trimpath: what Go's
# build cache keeps for them is then not tied to the checkout's directory,
# so a fresh clone (CI's) compiles only what changed instead of every CAPTF
# package, and finds the test binaries of TEST_BIN_DIR up to date.
GO_TEST_FLAGS ?= -count=1 -timeout=45m -parallel=8 -p=3 -trimpath -ldflags=-w
# make test keeps the test binaries here between runs (hack/testrun): only
# those of packages that changed, or import one that did, are linked again.
TEST_BIN_DIR ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/captf/testbin
BENCH_FLAGS ?= -run=^$$ -bench=. -benchmem

.PHONY: help
help: ## Show the targets.
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  %-12s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: tools
tools: ## Build every pinned external binary missing from the tool cache.
	hack/tools/build.sh control-plane capi runtimes codegen monitoring shell

.PHONY: tools-dir
tools-dir: ## Print the tool cache directory (use with make -s).
	@echo $(TOOLS_DIR)

.PHONY: generate
generate: ## Regenerate deepcopy code, CRDs (from the API types) and the manager ClusterRole (from +kubebuilder:rbac markers).
	hack/tools/build.sh codegen
	$(CONTROLLER_GEN) object:headerFile=hack/boilerplate.go.txt paths=./api/...
	rm -rf config/crd/bases
	$(CONTROLLER_GEN) crd paths=./api/... output:crd:dir=config/crd/bases
	$(CONTROLLER_GEN) rbac:roleName=captf-manager-role paths=./internal/... output:rbac:dir=config/rbac

.PHONY: verify
verify: generate ## Fail on stale generated code, gofmt, vet or lint findings.
	@if [ -n "$$(git status --porcelain -- api config)" ]; then \
		git status --porcelain -- api config; git diff -- api config | head -50; \
		echo "generated files are stale: run make generate and commit the result" >&2; exit 1; fi
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "$$out"; echo "gofmt needed: run gofmt -w on the files above" >&2; exit 1; fi
	go vet ./...
	d=$$(mktemp -d) && hack/tools/shell-module.sh $$d/shell && (cd $$d/shell && go vet -tags captfshell ./...); rc=$$?; rm -rf $$d; exit $$rc
	go vet -tags captfsoak ./internal/crashpoint ./internal/workspace ./test/e2e
	go vet -tags e2eclusterctl ./test/e2e
	hack/tools/build.sh lint
	$(GOLANGCI_LINT) run ./...
	$(GOLANGCI_LINT) run --build-tags captfsoak ./internal/crashpoint/... ./internal/workspace/... ./test/e2e/...
	$(GOLANGCI_LINT) run --build-tags e2eclusterctl ./test/e2e/...

# On two cores the suite is bound by CPU. The end-to-end flows and the
# lifecycle tests each run a control plane, a manager and many Jobs; side by
# side they slowed every API request past the bounds of their steps. So
# they run one after the other: the flows with the runner's tests (one run
# at a time) and the short packages, then the lifecycle tests. Both groups
# report before the target fails.
.PHONY: test
test: ## Run every test against the real control plane and runtimes.
	hack/tools/build.sh control-plane capi runtimes codegen monitoring shell
	@# The longest packages first: they start in the order given.
	CAPTF_TOOLS=$(TOOLS_DIR) go run ./hack/testrun -bin-dir $(TEST_BIN_DIR) $(GO_TEST_FLAGS) \
		./test/e2e ./internal/runner ./... --then ./test/lifecycle

.PHONY: e2e-clusterctl
e2e-clusterctl: ## clusterctl init, upgrade and move for real, between local environments (the commands of docs/getting-started.md).
	hack/tools/build.sh control-plane capi runtimes shell
	CAPTF_TOOLS=$(TOOLS_DIR) go test -tags e2eclusterctl -count=1 -timeout=40m -trimpath -ldflags=-w -run '^TestClusterctl(InitAndUpgrade|Move)$$' ./test/e2e

VERSION ?=
.PHONY: release
release: ## Write release VERSION (vX.Y.Z) as a clusterctl repository under out/repository/infrastructure-terraform/VERSION/, and the tfcapi-lint binaries under out/tfcapi-lint/VERSION/.
	@if [ -z "$(VERSION)" ]; then echo "make release needs VERSION=vX.Y.Z" >&2; exit 2; fi
	go run ./hack/release --version $(VERSION) --out out/repository

.PHONY: images
images: ## Build the manager image and the module base images as OCI image layouts under out/images/ (no container daemon; VERSION and REVISION optional).
	hack/tools/build.sh runtimes shell
	go run ./hack/images --tools $(TOOLS_DIR) --out out/images $(if $(VERSION),--version $(VERSION)) $(if $(REVISION),--revision $(REVISION))

.PHONY: bench
bench: ## Run the benchmarks; each prints its ratio against a baseline.
	hack/tools/build.sh control-plane capi runtimes
	CAPTF_TOOLS=$(TOOLS_DIR) go test $(BENCH_FLAGS) ./...

SCALE_PROFILE_DIR ?= $(CURDIR)/out/scale-profiles
.PHONY: scale
scale: ## Fleet scale (docs/performance.md): provisioning throughput, reaction time, idle fleet and cold start, in two lanes (hack/scale.sh); ends with one line per target, met or missed.
	hack/tools/build.sh control-plane capi runtimes
	CAPTF_TOOLS=$(TOOLS_DIR) CAPTF_SCALE_PROFILE_DIR=$(SCALE_PROFILE_DIR) hack/scale.sh

SOAK_DURATION ?= 10m
.PHONY: soak
soak: ## Crash soak: provision, change, scale and delete while the manager is SIGKILLed (SOAK_DURATION, default 10m); prints its figures.
	hack/tools/build.sh control-plane capi runtimes
	CAPTF_TOOLS=$(TOOLS_DIR) SOAK_DURATION=$(SOAK_DURATION) go test -tags captfsoak -count=1 -timeout=90m -v -run '^TestSoak$$' ./test/e2e

.PHONY: demo
demo: ## Watch CAPTF provision, then destroy, the quickstart on a real control plane with a local node.
	hack/tools/build.sh control-plane capi runtimes
	go run ./cmd/captf-dev --tools $(TOOLS_DIR) demo
