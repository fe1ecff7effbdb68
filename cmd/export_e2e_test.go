package cmd_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/profile-dev/profile/export/chrometest"
)

// A recorded workload exported to pprof: go tool pprof -top lists the
// functions summary lists, with the same self times (ns) and calls, and
// -traces shows the calling contexts; the folded self values add up to
// the traced time: busy by default, as summary's, wall with --scope wall.
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
	var wall struct {
		Totals struct {
			TracedNs int64 `json:"traced_ns"`
		} `json:"totals"`
	}
	decodeSummary(t, dir, &s, "demo.data") // busy, as the exports by default
	decodeSummary(t, dir, &wall, "demo.data", "--scope", "wall")

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

	for _, c := range []struct {
		scope  string
		traced int64
	}{{"busy", s.Totals.TracedNs}, {"wall", wall.Totals.TracedNs}} {
		folded, stderr, code := run(t, dir, "export", "demo.data", "--format", "folded", "--scope", c.scope, "-o", "-")
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
		if sum != c.traced {
			t.Errorf("--scope %s: folded self values sum to %d ns, traced %d ns", c.scope, sum, c.traced)
		}
	}
	if s.Totals.TracedNs >= wall.Totals.TracedNs {
		t.Errorf("busy traced %d ns, wall %d ns: want less busy time", s.Totals.TracedNs, wall.Totals.TracedNs)
	}
}

// The requests workload recorded with --detail handle_request --slow 40ms
// and exported as a Chrome trace: a valid trace (chrometest: fields per
// phase, time order, nesting, metadata) whose kept calls are the 7 slow
// requests the workload logs, with the logged arguments and return
// values, under main and serve, each once.
func TestExportChromeRequests(t *testing.T) {
	dir := t.TempDir()
	var stdout string
	// A loaded machine can stretch a fast request past 40ms: up to 3 runs
	// for the 7 slow ones alone (as TestTreesRequests).
	for attempt := 1; ; attempt++ {
		out, stderr, code := run(t, dir, "record", "--detail", "handle_request", "--slow", "40ms", "-o", "requests.data",
			"--", wl(t, "requests"))
		if code != 0 {
			t.Fatalf("record: exit %d\n%s", code, stderr)
		}
		stdout = out
		if doc := treesJSON(t, dir, "requests.data"); len(doc.Threads) == 1 && len(doc.Threads[0].Trees) == 7 || attempt == 3 {
			break
		}
	}
	var logged []string
	for _, m := range regexp.MustCompile(`(?m)^slow id=(\d+) size=(\d+) flags=(\d+) ret=(-?\d+)$`).FindAllStringSubmatch(stdout, -1) {
		logged = append(logged, strings.Join(m[1:], " "))
	}
	if len(logged) != 7 {
		t.Fatalf("requests logged %d slow requests, want 7:\n%s", len(logged), stdout)
	}
	if _, stderr, code := run(t, dir, "export", "requests.data", "--format", "chrome"); code != 0 ||
		stderr != "profile: wrote requests.trace.json\n" {
		t.Fatalf("export: exit %d\n%s", code, stderr)
	}
	data, err := os.ReadFile(filepath.Join(dir, "requests.trace.json"))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := chrometest.Check(data)
	if err != nil {
		t.Fatalf("invalid trace: %v", err)
	}
	var kept []string
	var pid, tid int
	count := map[string]int{}
	for _, e := range tr.Events {
		if e.Ph != "X" {
			continue
		}
		count[e.Cat+" "+e.Name]++
		if e.Cat != "kept" {
			continue
		}
		pid, tid = e.Pid, e.Tid
		if e.Name != "handle_request" || e.DurNs < 40_000_000 || len(e.Args) != 4 {
			t.Errorf("kept call %s of %d ns, args %v: want handle_request, >= 40ms, arg0-arg2 and ret", e.Name, e.DurNs, e.Args)
		}
		var vals []string
		for _, k := range []string{"arg0", "arg1", "arg2", "ret"} {
			n, _ := e.Args[k].(json.Number)
			vals = append(vals, n.String())
		}
		kept = append(kept, strings.Join(vals, " "))
	}
	if strings.Join(kept, "\n") != strings.Join(logged, "\n") {
		t.Errorf("kept calls (id size flags ret):\n%s\nlogged:\n%s", strings.Join(kept, "\n"), strings.Join(logged, "\n"))
	}
	if count["ancestor main"] != 1 || count["ancestor serve"] != 1 || len(count) != 3 {
		t.Errorf("complete events %v: want main and serve once each, as ancestors of the 7 kept calls", count)
	}
	if tr.ProcessNames[pid] != "requests" || tr.ThreadNames[[2]int{pid, tid}] != "requests" {
		t.Errorf("names: process %q, thread %q", tr.ProcessNames[pid], tr.ThreadNames[[2]int{pid, tid}])
	}
	if tr.OtherData["detail"] != "handle_request" {
		t.Errorf("otherData %v", tr.OtherData)
	}
}

// export --tid writes one thread's stacks: the folded lines of a level-2
// thread of testdata/src/threads.c start at its thread function, their
// calls add up to that thread's calls in summary --tid, and no other
// thread's function is in them; a tid the profile lacks exits 2.
func TestExportOneThread(t *testing.T) {
	dir := t.TempDir()
	record(t, dir, "threads.data", "threads")
	tid := spawnedBy(t, dir, "threads.data", "spawn_level2")
	var one struct {
		Totals struct {
			Calls int64 `json:"calls"`
		} `json:"totals"`
	}
	decodeSummary(t, dir, &one, "threads.data", "--tid", itoa(tid))
	out, stderr, code := run(t, dir, "export", "threads.data", "--format", "folded", "--value", "calls", "--tid", itoa(tid), "-o", "-")
	if code != 0 {
		t.Fatalf("export --tid: exit %d %s", code, stderr)
	}
	var calls int64
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		i := strings.LastIndexByte(line, ' ')
		n, err := strconv.ParseInt(line[i+1:], 10, 64)
		if err != nil {
			t.Fatalf("line %q", line)
		}
		calls += n
		if !strings.HasPrefix(line, "level2_thread") {
			t.Errorf("line %q: not a stack of the level-2 thread", line)
		}
	}
	if calls != one.Totals.Calls {
		t.Errorf("export --tid %d: %d calls, summary --tid says %d", tid, calls, one.Totals.Calls)
	}
	_, stderr, code = run(t, dir, "export", "threads.data", "--format", "folded", "--tid", "99999", "-o", "-")
	oneLineError(t, stderr, code, "no thread 99999")
	if code != 2 {
		t.Errorf("export --tid 99999: exit %d, want 2", code)
	}
}

// spawnedBy is the tid of the first thread of the profile file in dir
// that function fn spawned, as summary lists the threads.
func spawnedBy(t *testing.T, dir, file, fn string) int {
	t.Helper()
	var whole struct {
		Threads []struct {
			Tid       int    `json:"tid"`
			SpawnedBy string `json:"spawned_by"`
		} `json:"threads"`
	}
	decodeSummary(t, dir, &whole, file)
	for _, th := range whole.Threads {
		if th.SpawnedBy == fn {
			return th.Tid
		}
	}
	t.Fatalf("no thread spawned by %s in %+v", fn, whole.Threads)
	return 0
}
