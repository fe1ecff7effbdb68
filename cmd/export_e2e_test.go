package cmd_test

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// A recorded workload exported to pprof: go tool pprof -top lists the
// functions summary lists, with the same self times (ns) and calls, and
// -traces shows the calling contexts; the folded self values add up to
// the traced time.
func TestExportRecordedDemo(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go toolchain")
	}
	dir := t.TempDir()
	record(t, dir, "demo.data", "demo")
	if _, stderr, code := run(t, dir, "export", "demo.data", "--format", "pprof"); code != 0 {
		t.Fatalf("export: %s", stderr)
	}
	var s struct {
		Totals struct {
			TracedNs int64 `json:"traced_ns"`
		} `json:"totals"`
		Functions []struct {
			Name, Module string
			Calls        int64 `json:"calls"`
			SelfNs       int64 `json:"self_ns"`
		} `json:"functions"`
	}
	decodeSummary(t, dir, &s, "demo.data")

	pb := filepath.Join(dir, "demo.pb.gz")
	self := pprofTop(t, goTool, pb, "-sample_index=self")
	if want := demoDisplay(s.Functions[0].Name, s.Functions[0].Module); self[0].Name != want ||
		self[0].Flat != s.Functions[0].SelfNs {
		t.Errorf("pprof top function %+v, summary's %s %d ns", self[0], want, s.Functions[0].SelfNs)
	}
	selfOf, callsOf := map[string]int64{}, map[string]int64{}
	for _, r := range self {
		selfOf[r.Name] = r.Flat
	}
	for _, r := range pprofTop(t, goTool, pb, "-sample_index=calls") {
		callsOf[r.Name] = r.Flat
	}
	for _, f := range s.Functions {
		name := demoDisplay(f.Name, f.Module)
		if f.SelfNs > 0 && selfOf[name] != f.SelfNs {
			t.Errorf("%s: pprof self %d, summary %d", name, selfOf[name], f.SelfNs)
		}
		if f.Calls > 0 && callsOf[name] != f.Calls {
			t.Errorf("%s: pprof calls %d, summary %d", name, callsOf[name], f.Calls)
		}
	}

	traces, err := exec.Command(goTool, "tool", "pprof", "-traces", pb).CombinedOutput()
	if err != nil {
		t.Fatalf("go tool pprof -traces: %v\n%s", err, traces)
	}
	if !regexp.MustCompile(`(?m)^\s+\S+\s+tree_search\n(\s+\S+\n)*\s+handle_request\n\s+serve_loop$`).Match(traces) ||
		!strings.Contains(string(traces), "thread: ") {
		t.Errorf("go tool pprof -traces: no path serve_loop;handle_request;...;tree_search or no thread label:\n%s", traces)
	}

	folded, stderr, code := run(t, dir, "export", "demo.data", "--format", "folded", "-o", "-")
	if code != 0 {
		t.Fatalf("export folded: %s", stderr)
	}
	var sum int64
	for _, line := range strings.Split(strings.TrimSuffix(folded, "\n"), "\n") {
		i := strings.LastIndexByte(line, ' ')
		n, err := strconv.ParseInt(line[i+1:], 10, 64)
		if err != nil || n <= 0 {
			t.Fatalf("folded line %q", line)
		}
		sum += n
	}
	if sum != s.Totals.TracedNs {
		t.Errorf("folded self values sum to %d ns, traced %d ns", sum, s.Totals.TracedNs)
	}
}
