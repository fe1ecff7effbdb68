# profile — build, test and demo targets. `make demo` and `make test` are
# the README's two commands.
GO      ?= go
BIN     ?= ./profile
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)

.PHONY: build test testdata proto lint demo bench fuzz clean

build:
	$(GO) build -ldflags "-X github.com/profile-dev/profile/cmd.Version=$(VERSION)" -o $(BIN) .

testdata:
	$(MAKE) -C testdata

test: testdata
	$(GO) vet ./...
	$(GO) test -count=1 -timeout 40m ./...

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

# Engine overhead against ltrace and the bare ptrace stop (docs/benchmarks.md),
# then the offline benchmarks.
bench: build testdata
	@command -v ltrace >/dev/null || echo "bench: ltrace not installed (apt-get install -y ltrace); its column stays n/a"
	$(GO) run ./bench -o docs/benchmarks.md
	$(GO) test -run '^$$' -bench . -benchmem ./model/ ./merge/ ./prune/ ./summary/ ./render/

fuzz:
	$(GO) test -run '^$$' -fuzz FuzzRead -fuzztime 60s ./model/

clean:
	rm -f $(BIN) demo.data demo.data.old demo.svg
	$(MAKE) -C testdata clean
