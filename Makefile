# profile — build, test and demo targets. `make demo` and `make test` are
# the README's two commands.
GO      ?= go
BIN     ?= ./profile
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)

.PHONY: build test testdata stress proto lint demo bench fuzz clean

build:
	$(GO) build -buildvcs=auto -ldflags "-X github.com/profile-dev/profile/cmd.Version=$(VERSION)" -o $(BIN) .

testdata:
	$(MAKE) -C testdata

test: testdata
	$(GO) vet ./...
	$(GO) test -count=1 -p 1 -timeout 60m ./...

# The stress suite (stress/, build tag "stress"): the profiler never hurts
# its target. The tests build their own profile binary. Then 1,000
# recordings of a threaded workload read back (attach's
# TestRecordingsAlwaysReadBack, 200 in make test). Then every fuzz
# target for STRESS_FUZZTIME (the file decoder, every parser of user input).
STRESS_FUZZTIME ?= 100000x

stress: testdata
	$(GO) vet -tags stress ./stress/
	$(GO) test -tags stress -count=1 -v -timeout 40m ./stress/
	MIXED_RUNS=1000 $(GO) test -count=1 -run '^TestRecordingsAlwaysReadBack$$' -timeout 20m ./attach/
	$(MAKE) fuzz FUZZTIME=$(STRESS_FUZZTIME)

# Regenerate model/pb from model/proto (needs protoc and protoc-gen-go).
proto:
	protoc --go_out=. --go_opt=module=github.com/profile-dev/profile -I model/proto model/proto/profile.proto

lint:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); exit 1)
	$(GO) vet ./...

# The README's first command: build, record the bundled demo workload,
# print its summary and render its call graph to demo.svg.
demo: build testdata
	$(BIN) record -o demo.data -- testdata/bin/demo
	$(BIN) summary --top 15 demo.data
	$(BIN) render --svg -o demo.svg demo.data
	@echo "wrote demo.svg"

# Per-call overhead of trap and inline probes (record and attach) against
# ltrace, uftrace and the bare ptrace stop, the live view's CPU, detail
# recording's per-call cost and memory over 60 s, how close compensation
# comes to the truth, and the fidelity rows: self-time shares against perf
# sampling the untraced Lua interpreter (docs/benchmarks.md); then the
# offline benchmarks.
bench: build testdata
	@command -v perf >/dev/null && test -f /usr/include/lua5.4/lua.h || echo "bench: perf or liblua5.4-dev missing (apt-get install -y linux-perf liblua5.4-dev); the fidelity rows are skipped"
	@command -v ltrace >/dev/null || echo "bench: ltrace not installed (apt-get install -y ltrace); its column stays n/a"
	@command -v uftrace >/dev/null || echo "bench: uftrace not installed (apt-get install -y uftrace); its rows stay n/a"
	$(GO) run ./bench -o docs/benchmarks.md
	$(GO) test -run '^$$' -bench . -benchmem ./model/ ./merge/ ./prune/ ./summary/ ./render/

# Every fuzz target in turn, FUZZTIME each: a number of executions
# (make fuzz FUZZTIME=10000000x). A duration (FUZZTIME=60s) works too, but
# Go 1.26's fuzz coordinator can fail a run at its end with a bare "context
# deadline exceeded" and no crasher (golang/go#75804, fixed in Go 1.27):
# a count has no deadline to race. Minimizing is capped for the same reason.
FUZZTIME ?= 1000000x

fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzRead$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 1000x ./model/
	$(GO) test -run '^$$' -fuzz '^FuzzParseThreshold$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 1000x ./prune/
	$(GO) test -run '^$$' -fuzz '^FuzzParseMetric$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 1000x ./prune/
	$(GO) test -run '^$$' -fuzz '^FuzzNewFilter$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 1000x ./instrument/
	$(GO) test -run '^$$' -fuzz '^FuzzParseFraction$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 1000x ./internal/human/
	$(GO) test -run '^$$' -fuzz '^FuzzShort$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 1000x ./names/

clean:
	rm -f $(BIN) demo.data demo.data.old demo.svg
	$(MAKE) -C testdata clean
