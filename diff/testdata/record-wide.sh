#!/bin/sh
# Records the two real profiles of TestGoldenRealProfiles (golden_test.go):
# testdata/src/wide.cpp, a C++ program of 348 functions with long names, at
# 1 and 2 rounds, so the second run does twice the work at the same cost
# per call. Run from the repository root; then accept the new goldens with
# go test ./diff -run TestGoldenRealProfiles -update.
set -eu
make -C testdata bin/wide >/dev/null
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
go build -o "$dir/profile" .
"$dir/profile" record -o diff/testdata/wide-1x.data -- testdata/bin/wide 1
"$dir/profile" record -o diff/testdata/wide-2x.data -- testdata/bin/wide 2
