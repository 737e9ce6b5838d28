# mcpdrift — make targets. `make run` and `make test` are all a newcomer needs.

GO        ?= go
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -X main.version=$(VERSION)
BIN       := bin
# The embedded store needs cgo (ClickHouse needs the stacks of cgo threads).
export CGO_ENABLED := 1

.PHONY: all build run test test-short fuzz bench libchdb vet fmt clean help

all: build

help:
	@echo "make run      fetch libchdb if needed, build, and run the all-in-one on the embedded store"
	@echo "make test     fetch libchdb if needed and run every test against the real engine"
	@echo "make bench    run the benchmark suite and print figures against same-run baselines"
	@echo "make libchdb  fetch libchdb.so into the per-user cache (or honour CHDB_LIB_PATH)"
	@echo "make fuzz     run each fuzz target for a short, bounded time"

libchdb:
	@scripts/fetch-libchdb.sh >/dev/null

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN)/ ./cmd/...

run: libchdb build
	$(BIN)/mcpdrift serve $(ARGS)

# A server on a temporary data directory, 50,000 simulated drift events, and
# the adapter retirement report; the server stops when the demo ends.
.PHONY: demo
demo: libchdb build
	@BIN=$(BIN) scripts/demo.sh

vet:
	$(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1)

# MCPDRIFT_REQUIRE_CHDB turns "library missing" from a skip into a failure.
test: libchdb vet
	MCPDRIFT_REQUIRE_CHDB=1 $(GO) test -count=1 -timeout 20m ./...

FUZZTIME ?= 20s
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeLogs$$' -fuzztime $(FUZZTIME) ./otelschema
	$(GO) test -run '^$$' -fuzz '^FuzzHTTPLogs$$' -fuzztime $(FUZZTIME) ./internal/ingest
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeTraces$$' -fuzztime $(FUZZTIME) ./otelschema

bench: libchdb
	$(GO) run ./bench $(BENCHARGS)

clean:
	rm -rf $(BIN)
