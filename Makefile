# infohash — see README.md. `make help` lists the targets. GNU make
# ($(shell), $(if), MAKEFILE_LIST): macOS's make is GNU's; on a BSD run gmake.
GO       ?= go
BIN      := bin/infohash
FUZZTIME ?= 20s
# Go minimizes each new interesting input for up to 60 s by default, which
# is not counted in its exec rate: the state-file target ran 273 inputs in a
# minute. 200 tries each let it run ~33k in half of that.
FUZZMINIMIZE ?= 200x
# What --version prints: git describe of the checkout (a tag, or the short
# commit; -dirty for uncommitted changes). Outside a git checkout it is
# empty and the binary falls back to what the Go toolchain recorded.
BUILD_VERSION ?= $(shell git describe --always --dirty 2>/dev/null)
GO_LDFLAGS = $(if $(BUILD_VERSION),-X github.com/infohash/infohash/app.buildVersion=$(BUILD_VERSION))

.PHONY: help build test test-go test-duckdb demo soak killsweep fsaudit bench fuzz lint clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

build: ## build bin/infohash
	$(GO) build -ldflags '$(GO_LDFLAGS)' -o $(BIN) ./cmd/infohash

test: build lint test-go test-duckdb ## everything CI runs
	@echo "make test: all checks passed"

# go test kills a test binary after 10 minutes by default. Under -race on
# a 2-core machine running two packages at once, pipeline/dedup alone took
# 385 s at load ~10 and passed 600 s (killed) at load ~16: the limit, not
# the tests, failed. TESTTIMEOUT is per package binary.
TESTTIMEOUT ?= 30m

test-go: ## go test -race over the module
	$(GO) test -race -count=1 -timeout $(TESTTIMEOUT) ./...

test-duckdb: build ## DuckDB reads what infohash writes (tools/duckcheck, its own module)
	cd tools/duckcheck && $(GO) vet ./... && INFOHASH_BIN=$(CURDIR)/$(BIN) $(GO) test -count=1 -timeout $(TESTTIMEOUT) ./...

# Not part of test: 12 passes of ~10 s each on a loopback testnet (~2.5 min).
soak: build ## kill -9 soak: loopback testnet, SOAK_PASSES (12) passes, a random stage killed each, invariants checked by DuckDB (SOAK_SEED)
	scripts/soak.sh

# Not part of test either: ~1,000 kill points, each a killed run, a check
# and two re-runs (~10 min on 2 cores). Linux only: strace(1) kills.
killsweep: build ## kill -9 each dataset-writing step at each rename, unlink, mkdir, link, fsync, ftruncate (SWEEP_MAX writes), by strace; checked against a run not killed (SWEEP_ONLY; OLD_BIN, an older format's binary, adds dedup-mig, plan-mig, merge-mig)
	scripts/killsweep.sh

# Not part of test: one strace run per killsweep scenario (~10 s). Linux only.
fsaudit: build ## durability audit: trace each writer scenario (killsweep's, dedup -, capture and fetch on a loopback testnet, runs stopped by SIGTERM/SIGINT), check a power cut leaves a whole last commit
	scripts/fsaudit.sh

bench: build ## benchmarks: dedup vs DuckDB (SIZES="10M" for one size), capture load, fetch swarm, export vs DuckDB COPY
	scripts/bench-dedup.sh
	scripts/bench-capture.sh
	@if [ -x scripts/bench-fetch.sh ]; then scripts/bench-fetch.sh; fi
	@if [ -x scripts/bench-schedule.sh ]; then scripts/bench-schedule.sh; fi
	scripts/bench-export.sh

demo: build ## loopback testnet → the whole pipeline → DuckDB-readable output in demo-data/
	scripts/demo.sh

lint: ## go vet, gofmt, tidy go.mod/go.sum in both modules, no GNU-only forms in the shell scripts
	$(GO) vet ./...
	$(GO) mod tidy -diff
	cd tools/duckcheck && $(GO) mod tidy -diff
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	sh scripts/portability.sh

fuzz: ## run every fuzz target for FUZZTIME each (scripts/fuzz.sh)
	FUZZTIME=$(FUZZTIME) FUZZMINIMIZE=$(FUZZMINIMIZE) GO=$(GO) scripts/fuzz.sh

clean: ## remove build outputs
	rm -rf bin demo-data bench-data soak-data killsweep-data fsaudit-data
