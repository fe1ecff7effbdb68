package cmd_test

import (
	"regexp"
	"strings"
	"testing"
)

// A recorded C++ workload: summary's tables show the short names
// (exc::thrower_a, no parameter list) and with --full-names the demangled
// ones; JSON has the full names either way, and the call graph's labels
// are short with the full name in the tooltip.
func TestNamesRecordedCpp(t *testing.T) {
	dir := t.TempDir()
	record(t, dir, "unusual.data", "unusual")
	row := func(name string, calls int) *regexp.Regexp {
		return regexp.MustCompile(`(?m)^│ ` + regexp.QuoteMeta(name) + ` +│ unusual +│ +` + regexp.QuoteMeta(itoa(calls)) + ` │`)
	}
	table, stderr, code := run(t, dir, "summary", "unusual.data")
	if code != 0 {
		t.Fatalf("summary: exit %d\n%s", code, stderr)
	}
	full, stderr, code := run(t, dir, "summary", "unusual.data", "--full-names")
	if code != 0 {
		t.Fatalf("summary --full-names: exit %d\n%s", code, stderr)
	}
	// unusual.expected.json: thrower_a/b/c 4 calls each, exception_test 1
	for _, c := range []struct {
		short, full string
		calls       int
	}{
		{"exc::thrower_a", "exc::thrower_a(int)", 4}, {"exc::thrower_b", "exc::thrower_b(int)", 4},
		{"exc::thrower_c", "exc::thrower_c(int)", 4}, {"exception_test", "exception_test()", 1},
		{"in_handler", "in_handler", 3}, // a C name, unchanged
	} {
		if !row(c.short, c.calls).MatchString(table) {
			t.Errorf("summary: no row %s with %d calls", c.short, c.calls)
		}
		if !row(c.full, c.calls).MatchString(full) {
			t.Errorf("summary --full-names: no row %s with %d calls", c.full, c.calls)
		}
	}
	if strings.Contains(table, "(int)") {
		t.Errorf("summary shows a parameter list:\n%s", table)
	}
	if t.Failed() {
		t.Logf("summary:\n%s\nsummary --full-names:\n%s", table, full)
	}

	var s struct {
		Functions []struct {
			Name  string `json:"name"`
			Calls int64  `json:"calls"`
		} `json:"functions"`
	}
	decodeSummary(t, dir, &s, "unusual.data")
	calls := map[string]int64{}
	for _, f := range s.Functions {
		calls[f.Name] = f.Calls
	}
	if calls["exc::thrower_a(int)"] != 4 || calls["exception_test()"] != 1 {
		t.Errorf("summary JSON: thrower_a(int) %d calls, exception_test() %d; want 4 and 1, by full name",
			calls["exc::thrower_a(int)"], calls["exception_test()"])
	}

	dot, stderr, code := run(t, dir, "render", "unusual.data", "--dot", "-o", "-")
	if code != 0 {
		t.Fatalf("render: exit %d\n%s", code, stderr)
	}
	if !regexp.MustCompile(`\[label="exc::thrower_a\\n[^"]*\\n4 calls", .*tooltip="exc::thrower_a\(int\)\\n`).MatchString(dot) {
		t.Errorf("render: no node labelled exc::thrower_a with the tooltip exc::thrower_a(int):\n%s", dot)
	}
}
