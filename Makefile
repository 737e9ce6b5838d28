# mcpdrift — make targets. `make run` and `make test` are all a newcomer needs.

GO        ?= go
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -X main.version=$(VERSION)
BIN       := bin
# The embedded store needs cgo (ClickHouse needs the stacks of cgo threads).
export CGO_ENABLED := 1

.PHONY: all build run test test-race fuzz bench libchdb promtool chromium otelcol test-gateway vet clean help plugin plugin-deps test-plugin test-mcpts bench-mcpts demo telemetrygen-run

all: build

help:
	@echo "make run        fetch libchdb if needed, build, and run the all-in-one on the embedded store"
	@echo "make test       fetch libchdb if needed and run every test against the real engine: embedded,"
	@echo "                a ClickHouse server and a 2-shard cluster (started from libchdb by the tests)"
	@echo "make test-race  run the concurrent packages under the race detector"
	@echo "make fuzz       run each fuzz target for a bounded number of inputs (FUZZTIME)"
	@echo "make bench      run the benchmark suite and print figures against same-run baselines;"
	@echo "                BENCHARGS='-suite collector' measures the OpenTelemetry Collector with the ClickHouse"
	@echo "                exporter beside serve (builds deploy/otelcol/bench-builder.yaml once: minutes)"
	@echo "make demo       run a server on a temporary directory, simulate 50,000 events, print a report"
	@echo "make libchdb    fetch libchdb.so into the per-user cache (or honour CHDB_LIB_PATH)"
	@echo "make chromium   install Debian's chromium, the browser the console's tests drive (or honour CHROMIUM)"
	@echo "make promtool   install promtool (Prometheus's rule checker) into the per-user cache (or honour PROMTOOL)"
	@echo "make otelcol    build the OpenTelemetry Collector of deploy/otelcol/builder.yaml into the per-user cache"
	@echo "make test-gateway  run deploy/otelcol/gateway.yaml on that Collector in front of mcpdrift with tokens"
	@echo "make build      build bin/mcpdrift, bin/ingest and bin/api"
	@echo "make vet        go vet and gofmt"
	@echo "make plugin     build the Grafana plugin (frontend, backend for this machine, manifest) into grafana-plugin/dist;"
	@echo "                PLUGIN_MAGE=buildAll for every platform"
	@echo "make test-plugin  build the plugin, then run its Go (dist/ included), type and jest tests"
	@echo "make test-mcpts   the TypeScript instrumentation: npm ci, its unit and npm pack tests, then the end-to-end"
	@echo "                  runs against mcpdrift serve (TypeScript and Go servers and clients)"
	@echo "make bench-mcpts  CPU per tools/call of the TypeScript instrumentation against the bare SDK (npm run bench)"
	@echo "make telemetrygen-run  drive a running mcpdrift with telemetrygen"
	@echo "make clean      remove bin/"

libchdb:
	@scripts/fetch-libchdb.sh >/dev/null

# promtool checks and unit-tests deploy/prometheus's alert rules (go test
# ./deploy); built from the Go module proxy once, then cached.
promtool:
	@GO=$(GO) scripts/install-promtool.sh >/dev/null

# Chromium, which the console's tests (internal/console TestConsole) drive
# with chromedp: Debian's chromium package, installed by apt-get once.
chromium:
	@scripts/install-chromium.sh >/dev/null

# The Collector the gateway test runs deploy/otelcol/gateway.yaml on, built
# by the Collector Builder from the Go module proxy once per manifest.
otelcol:
	@GO=$(GO) scripts/otelcol-build.sh >/dev/null

# The shipped gateway on a real Collector in front of mcpdrift serve with
# tokens: events in = events stored (deploy TestGatewayCollector, which make
# test skips while the Collector is not built).
test-gateway: libchdb otelcol
	MCPDRIFT_REQUIRE_CHDB=1 MCPDRIFT_REQUIRE_OTELCOL=1 $(GO) test -count=1 -timeout 10m -run TestGatewayCollector -v ./deploy/

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN)/ ./cmd/...

run: libchdb build
	$(BIN)/mcpdrift serve $(ARGS)

# A server on a temporary data directory, 50,000 simulated drift events, and
# the adapter retirement report; the server stops when the demo ends.
demo: libchdb build
	@BIN=$(BIN) scripts/demo.sh

vet:
	$(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1)

# MCPDRIFT_REQUIRE_CHDB turns "library missing" from a skip into a failure,
# MCPDRIFT_REQUIRE_PROMTOOL "promtool missing", MCPDRIFT_REQUIRE_CHROMIUM
# "chromium missing".
# The end-to-end suites with real processes — the scale-out roles on a
# cluster with a shard killed, the ingester killed and starved — and the
# upgrade under load (two migrators while writers insert, server and
# cluster) run verbosely, so that their figures (sent, acknowledged,
# stored, duplicates) print in the log.
# mcpts/e2e runs in test-mcpts, once the TypeScript programs are built.
E2E_PKGS := ./internal/testing/scaleouttest/ ./internal/testing/faulttest/ ./internal/testing/upgradetest/
test: libchdb promtool chromium vet
	MCPDRIFT_REQUIRE_CHDB=1 MCPDRIFT_REQUIRE_PROMTOOL=1 MCPDRIFT_REQUIRE_CHROMIUM=1 $(GO) test -count=1 -timeout 20m $$($(GO) list ./... | grep -v -e /internal/testing/scaleouttest -e /internal/testing/faulttest -e /internal/testing/upgradetest -e /mcpts/)
	MCPDRIFT_REQUIRE_CHDB=1 $(GO) test -count=1 -timeout 20m -v $(E2E_PKGS)
	MCPDRIFT_REQUIRE_CHDB=1 $(MAKE) test-plugin
	MCPDRIFT_REQUIRE_CHDB=1 $(MAKE) test-mcpts

# The packages whose goroutines share state — the batcher, the spool, the
# server backend's sender, the assembly — under the race detector. Tests
# of how much an INSERT allocates (RACE_SKIP) run in make test only: the
# race runtime changes what a run allocates (its sync.Pool drops objects
# at random, for one), so their bounds mean nothing under it.
RACE_PKGS := ./internal/ingest/ ./internal/receiver/ ./internal/spool/ ./store/clickhouse/ ./internal/app/
RACE_SKIP := ^TestInsertBufferGrownOnce$$
test-race: libchdb
	MCPDRIFT_REQUIRE_CHDB=1 $(GO) test -race -count=1 -timeout 20m -skip '$(RACE_SKIP)' $(RACE_PKGS)

# Every Fuzz function in the module (found by go test -list), each for
# FUZZTIME: a count of inputs (Nx) or a duration; see scripts/fuzz.sh.
FUZZTIME ?= 20000x
fuzz:
	GO=$(GO) scripts/fuzz.sh $(FUZZTIME)

# BENCHARGS='-suite collector' also builds the Collector of
# deploy/otelcol/bench-builder.yaml (the bench runs scripts/otelcol-build.sh
# with GO), cached by the manifest's content; no other target builds it.
bench: libchdb
	GO=$(GO) $(GO) run ./bench $(BENCHARGS)

# The README's telemetrygen command line against a running mcpdrift (make run
# in another terminal); skipped with the install line when telemetrygen is
# not installed.
telemetrygen-run: build
	scripts/telemetrygen-run.sh $(TELEMETRYGEN_ENDPOINT)

clean:
	rm -rf $(BIN)

# The Grafana data source plugin (grafana-plugin/, its own Go module and
# npm package). Its backend is pure Go (CGO_ENABLED=0) and must not link the
# store: `plugin-deps` checks that it imports nothing of this module but
# apiv1, the API's wire types, which imports only the standard library. Its tests start a real API over the
# embedded store, so they need cgo and libchdb like the rest.
# The backend is built as create-plugin projects build it: mage (pinned by
# the tool directive of grafana-plugin/go.mod) with the plugin SDK's build
# package, which writes dist/go_plugin_build_manifest beside the
# executables. PLUGIN_MAGE is the mage target: build:backend builds for
# this machine; buildAll for every platform the SDK builds (linux amd64,
# arm64, arm; darwin amd64, arm64; windows amd64), as a release needs:
#   make plugin PLUGIN_MAGE=buildAll
PLUGIN_DIR  := grafana-plugin
PLUGIN_MAGE ?= build:backend

$(PLUGIN_DIR)/node_modules/.package-lock.json: $(PLUGIN_DIR)/package-lock.json
	cd $(PLUGIN_DIR) && npm ci --no-audit --no-fund

plugin-deps:
	@cd $(PLUGIN_DIR) && CGO_ENABLED=0 $(GO) build ./pkg/...
	@cd $(PLUGIN_DIR) && bad="$$($(GO) list -deps ./pkg | grep '^github.com/mcpdrift/mcpdrift/' | grep -v -e '^github.com/mcpdrift/mcpdrift/grafana-plugin/' -e '^github.com/mcpdrift/mcpdrift/apiv1$$')"; \
		if [ -n "$$bad" ]; then echo "the plugin binary must not import the server (apiv1, the API's types, only):"; echo "$$bad"; exit 1; fi

plugin: plugin-deps $(PLUGIN_DIR)/node_modules/.package-lock.json
	cd $(PLUGIN_DIR) && npm run build
	cd $(PLUGIN_DIR) && $(GO) tool mage -v $(PLUGIN_MAGE)

# MCPDRIFT_REQUIRE_CHDB as in `make test`: set it to fail instead of skip
# when libchdb is missing. The Go tests check the dist/ that `plugin` built
# (MCPDRIFT_REQUIRE_PLUGIN_DIST: fail, not skip, without it).
test-plugin: plugin
	cd $(PLUGIN_DIR) && $(GO) vet ./...
	@test -z "$$(cd $(PLUGIN_DIR) && gofmt -l pkg Magefile.go)" || (echo "gofmt needed:"; cd $(PLUGIN_DIR) && gofmt -l pkg Magefile.go; exit 1)
	cd $(PLUGIN_DIR) && MCPDRIFT_REQUIRE_PLUGIN_DIST=1 $(GO) test -count=1 -timeout 10m ./...
	cd $(PLUGIN_DIR) && npm run typecheck && npm test -- --ci

# The TypeScript instrumentation (mcpts/, the npm package @mcpdrift/mcpts):
# its npm packages installed from package-lock.json (npm ci: the npm
# registry only), its unit tests with Node's test runner and the check of
# the tarball npm pack makes (npm test), then the end-to-end runs against a
# real mcpdrift serve: mcpts/e2e, a Go test package that starts serve in
# process and node for the TypeScript servers and clients, which npm test
# has just built. MCPDRIFT_REQUIRE_MCPTS turns "node or the programs
# missing" from a skip into a failure.
MCPTS_DIR := mcpts

$(MCPTS_DIR)/node_modules/.package-lock.json: $(MCPTS_DIR)/package-lock.json
	cd $(MCPTS_DIR) && npm ci --no-audit --no-fund

test-mcpts: libchdb $(MCPTS_DIR)/node_modules/.package-lock.json
	cd $(MCPTS_DIR) && npm test
	MCPDRIFT_REQUIRE_CHDB=1 MCPDRIFT_REQUIRE_MCPTS=1 $(GO) test -count=1 -timeout 10m -v ./mcpts/e2e/

# CPU per tools/call, instrumented and bare, side by side: ratios, never a
# pass or fail on time.
bench-mcpts: $(MCPTS_DIR)/node_modules/.package-lock.json
	cd $(MCPTS_DIR) && npm run bench
