package cmd_test

import (
	"encoding/json"
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
	if _, stderr, code := run(t, dir, "record", "-o", "demo.data", "--", wl(t, "demo")); code != 0 {
		t.Fatalf("record: %s", stderr)
	}
	if _, stderr, code := run(t, dir, "export", "demo.data", "--format", "pprof"); code != 0 {
		t.Fatalf("export: %s", stderr)
	}
	out, stderr, code := run(t, dir, "summary", "--format", "json", "demo.data")
	if code != 0 {
		t.Fatalf("summary: %s", stderr)
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
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatal(err)
	}
	display := func(name, module string) string {
		if module == "" || module == "demo" {
			return name
		}
		return module + ":" + name
	}

	// pprof -top: rows "flat flat% sum% cum cum% name", hottest first.
	top := func(index string) (rows [][2]string) {
		cmd := exec.Command(goTool, "tool", "pprof", "-top", "-unit=ns", "-nodefraction=0", "-nodecount=1000",
			"-sample_index="+index, filepath.Join(dir, "demo.pb.gz"))
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go tool pprof -top: %v\n%s", err, b)
		}
		row := regexp.MustCompile(`^\s*(\d+)(?:ns)?\s+\S+%\s+\S+%\s+\S+\s+\S+%\s+(.+)$`)
		for _, line := range strings.Split(string(b), "\n") {
			if m := row.FindStringSubmatch(line); m != nil {
				rows = append(rows, [2]string{m[2], m[1]})
			}
		}
		if len(rows) == 0 {
			t.Fatalf("go tool pprof -top: no rows\n%s", b)
		}
		return rows
	}
	self := top("self")
	if want := display(s.Functions[0].Name, s.Functions[0].Module); self[0][0] != want ||
		self[0][1] != strconv.FormatInt(s.Functions[0].SelfNs, 10) {
		t.Errorf("pprof top function %v, summary's %s %d ns", self[0], want, s.Functions[0].SelfNs)
	}
	selfOf, callsOf := map[string]string{}, map[string]string{}
	for _, r := range self {
		selfOf[r[0]] = r[1]
	}
	for _, r := range top("calls") {
		callsOf[r[0]] = r[1]
	}
	for _, f := range s.Functions {
		name := display(f.Name, f.Module)
		if f.SelfNs > 0 && selfOf[name] != strconv.FormatInt(f.SelfNs, 10) {
			t.Errorf("%s: pprof self %s, summary %d", name, selfOf[name], f.SelfNs)
		}
		if f.Calls > 0 && callsOf[name] != strconv.FormatInt(f.Calls, 10) {
			t.Errorf("%s: pprof calls %s, summary %d", name, callsOf[name], f.Calls)
		}
	}

	traces, err := exec.Command(goTool, "tool", "pprof", "-traces", filepath.Join(dir, "demo.pb.gz")).CombinedOutput()
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
