package cmd_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/profile-dev/profile/model"
	"github.com/profile-dev/profile/model/modeltest"
)

// diffDoc is the part of profile-diff/1 the tests read.
type diffDoc struct {
	Functions []struct {
		Name, Module string
		Calls, Self  struct {
			Base, New, Delta int64
			RelPct           *float64 `json:"rel_pct"`
		}
	} `json:"functions"`
	Edges []struct {
		Caller, Callee string
		Kind           string
		Calls          struct{ Base, New, Delta int64 }
	} `json:"edges"`
	Gates []struct {
		Gate      string
		Broken    bool
		Functions []struct{ Name, Module string }
	} `json:"gates"`
}

func runDiff(t *testing.T, dir string, args ...string) (diffDoc, string, int) {
	t.Helper()
	out, stderr, code := run(t, dir, append([]string{"diff", "--format", "json"}, args...)...)
	var d diffDoc
	if code == 0 || code == 1 {
		if err := json.Unmarshal([]byte(out), &d); err != nil {
			t.Fatalf("diff %v: %v\n%s", args, err, out)
		}
	}
	return d, stderr, code
}

// The second run of difftarget (--extra) has an extra loop in hot
// (sixty-five times its own work) and 1000 more calls of helper, from hot;
// nothing else changes. A gate on self time names hot only, one on calls
// helper only with the exact count; a profile against itself, or against
// another run of the same work, breaks no gate.
func TestDiffGatesOnExtraLoop(t *testing.T) {
	dir := t.TempDir()
	for _, r := range [][]string{{"base.data"}, {"again.data"}, {"new.data", "--extra"}} {
		record(t, dir, r[0], "difftarget", r[1:]...)
	}

	// Times vary from run to run: by 2x for the small functions on a busy
	// machine, and a preempted run of hot's own 12 ms once read 85 ms (make
	// test runs packages side by side on 2 CPUs). The gate asks for a large
	// relative and a large absolute growth, which only hot's extra loop
	// (64x its work: about +750 ms here) meets.
	const selfGate = "self>+400%&self>+250ms"
	// --noise 0 lists every function, the unchanged ones too
	d, stderr, code := runDiff(t, dir, "base.data", "new.data", "--fail-on", selfGate, "--noise", "0")
	lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
	if code != 1 || len(lines) != 1 || !strings.HasPrefix(lines[0], "profile: diff: hot breaks "+selfGate+" (self ") {
		t.Fatalf("self gate: exit %d, stderr %q; want 1 and one line naming hot", code, stderr)
	}
	if g := d.Gates; len(g) != 1 || g[0].Gate != selfGate || !g[0].Broken || len(g[0].Functions) != 1 ||
		g[0].Functions[0] != (struct{ Name, Module string }{"hot", "difftarget"}) {
		t.Errorf("self gate in the report: %+v", g)
	}
	calls := map[string]int64{}
	for _, f := range d.Functions {
		calls[f.Name] = f.Calls.Delta
		if f.Name == "hot" && (f.Calls.Base != 20 || f.Calls.New != 20 || f.Self.RelPct == nil || *f.Self.RelPct <= 400) {
			t.Errorf("hot: calls %+v, self %+v", f.Calls, f.Self)
		}
		if f.Name == "helper" && (f.Calls.Base != 10000 || f.Calls.New != 11000) {
			t.Errorf("helper: calls %+v, want 10000 -> 11000", f.Calls)
		}
	}
	for _, name := range []string{"main", "setup", "run_rounds", "hot", "warm", "cold", "helper"} {
		want := int64(0)
		if name == "helper" {
			want = 1000
		}
		if got, ok := calls[name]; !ok || got != want {
			t.Errorf("%s: change of calls %d (listed %t), want %d", name, got, ok, want)
		}
	}
	for _, e := range d.Edges {
		want := int64(0)
		if e.Caller == "hot" && e.Callee == "helper" {
			want = 1000
		}
		if e.Calls.Delta != want {
			t.Errorf("edge %s -> %s: change of calls %d, want %d", e.Caller, e.Callee, e.Calls.Delta, want)
		}
	}

	// per call: hot's 20 calls each do 65 times the work; helper's calls
	// are as long as before, only more
	d, stderr, code = runDiff(t, dir, "base.data", "new.data", "--per-call", "--fail-on", "self/call>+400%",
		"--fail-on", "func~helper:total/call>+50%")
	if code != 1 || !strings.HasPrefix(stderr, "profile: diff: hot breaks self/call>+400% (self/call ") ||
		strings.Count(stderr, "\n") != 1 || len(d.Gates) != 2 || d.Gates[1].Broken {
		t.Errorf("per-call gates: exit %d, stderr %q, gates %+v", code, stderr, d.Gates)
	}

	// calls are exact: the gate names helper with its exact extra calls
	_, stderr, code = runDiff(t, dir, "base.data", "new.data", "--fail-on", "calls>+500")
	if want := "profile: diff: helper breaks calls>+500 (calls 10000 → 11000, +1000, +10.00%)\n"; code != 1 || stderr != want {
		t.Errorf("calls gate: exit %d, stderr %q; want 1 and %q", code, stderr, want)
	}
	// both gates at once, text format: one line per function
	out, stderr, code := run(t, dir, "diff", "base.data", "new.data", "--fail-on", selfGate, "--fail-on", "calls>+500")
	if lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n"); code != 1 || len(lines) != 2 ||
		!strings.Contains(stderr, "diff: hot breaks") || !strings.Contains(stderr, "diff: helper breaks") {
		t.Errorf("two gates: exit %d, stderr %q", code, stderr)
	}
	if !strings.Contains(out, "Gates (--fail-on)") || !strings.Contains(out, "broken by 1") {
		t.Errorf("text report without the gates' verdicts:\n%s", out)
	}

	// a profile against itself: every change 0, no gate broken
	for _, pair := range [][2]string{{"new.data", "new.data"}, {"base.data", "again.data"}} {
		gates := []string{"--fail-on", "calls>+0", "--fail-on", "calls<-0", "--fail-on", selfGate}
		if pair[0] == pair[1] {
			gates = append(gates, "--fail-on", "self>+0%", "--fail-on", "total>+0ns", "--fail-on", "self<-0%")
		}
		d, stderr, code := runDiff(t, dir, append([]string{pair[0], pair[1], "--noise", "0"}, gates...)...)
		if code != 0 || stderr != "" {
			t.Errorf("%s against %s: exit %d, stderr %q", pair[0], pair[1], code, stderr)
		}
		for _, g := range d.Gates {
			if g.Broken || len(g.Functions) != 0 {
				t.Errorf("%s against %s: gate %s broken by %+v", pair[0], pair[1], g.Gate, g.Functions)
			}
		}
		for _, f := range d.Functions {
			if f.Calls.Delta != 0 || pair[0] == pair[1] && f.Self.Delta != 0 {
				t.Errorf("%s against %s: %s changed: calls %+v self %+v", pair[0], pair[1], f.Name, f.Calls, f.Self)
			}
		}
		if len(d.Functions) < 7 {
			t.Errorf("%s against %s: %d functions", pair[0], pair[1], len(d.Functions))
		}
	}
	// the default noise floor, 0.1% of the traced time: a profile against
	// itself lists nothing and breaks no gate, even one asking for any growth
	d, stderr, code = runDiff(t, dir, "new.data", "new.data", "--fail-on", "self>+0%", "--fail-on", "total/call>+0%")
	if code != 0 || stderr != "" || len(d.Functions) != 0 || len(d.Edges) != 0 {
		t.Errorf("new.data against itself, default noise: exit %d, stderr %q, %d functions, %d edges",
			code, stderr, len(d.Functions), len(d.Edges))
	}
}

func TestDiffBadInput(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "sample.data")
	if err := model.WriteFile(good, modeltest.Sample()); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "junk.data"), []byte("not a profile"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{good, "missing.data"}, "missing.data: no such file"},
		{[]string{good, "junk.data"}, "junk.data"},
		{[]string{good, good, "--fail-on", "self>-10%"}, "write self<-10% for a decrease"},
		{[]string{good, good, "--fail-on", "speed>+1%"}, `unknown metric "speed"`},
		{[]string{good, good, "--fail-on", "func~(:self>+1%"}, "bad --fail-on"},
		{[]string{good, good, "--format", "xml"}, `unknown --format "xml"`},
		{[]string{good, good, "--sort", "size"}, `unknown sort key "size"`},
		{[]string{good, good, "--top", "-1"}, "bad --top -1"},
		{[]string{good, good, "--noise", "lots"}, "bad --noise"},
		{[]string{good, good, "--noise", "-1ms"}, "bad --noise"},
		{[]string{good, good, "--noise", "150%"}, "bad --noise"},
		{[]string{good, good, "--fail-on", "self/call>+10"}, "a time needs a unit"},
		{[]string{good}, "accepts 2 arg(s)"},
	}
	for _, c := range cases {
		_, stderr, code := run(t, dir, append([]string{"diff"}, c.args...)...)
		if code != 2 {
			t.Errorf("diff %v: exit %d, want 2 (stderr %q)", c.args, code, stderr)
		}
		oneLineError(t, stderr, code, c.want)
	}
}
