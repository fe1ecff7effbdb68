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

fuzz:
	$(GO) test -run '^$$' -fuzz FuzzRead -fuzztime 60s ./model/

clean:
	rm -f $(BIN) demo.data demo.data.old demo.svg
	$(MAKE) -C testdata clean
