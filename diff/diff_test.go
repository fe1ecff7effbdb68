package diff_test

import (
	"math"
	"strings"
	"testing"

	"github.com/profile-dev/profile/diff"
	"github.com/profile-dev/profile/model"
	"github.com/profile-dev/profile/model/modeltest"
)

func TestCompare(t *testing.T) {
	r := compare(t)
	inf := math.Inf(1)
	// Sample's numbers by hand (modeltest.Sample's scripts): fib runs 3
	// times in main (self 30+30+50) and twice in the forked child (10+15);
	// newerSample's fib 4 times (40+50+50+80).
	cases := []struct {
		module, name       string
		status             diff.Status
		calls, self, total diff.Delta
		display            string
	}{
		{"app", "fib", diff.Both, diff.Delta{Base: 5, New: 4, Delta: -1, RelPct: -20},
			diff.Delta{Base: 135, New: 220, Delta: 85, RelPct: 100 * 85.0 / 135},
			diff.Delta{Base: 135, New: 220, Delta: 85, RelPct: 100 * 85.0 / 135}, "fib"},
		{"libc.so.6", "usleep", diff.Both, diff.Delta{Base: 1, New: 1},
			diff.Delta{Base: 500, New: 900, Delta: 400, RelPct: 80},
			diff.Delta{Base: 500, New: 900, Delta: 400, RelPct: 80}, "libc.so.6:usleep"},
		{"app", "cache_lookup", diff.Added, diff.Delta{New: 1, Delta: 1, RelPct: inf},
			diff.Delta{New: 40, Delta: 40, RelPct: inf}, diff.Delta{New: 40, Delta: 40, RelPct: inf}, "cache_lookup"},
		{"app", "child_work", diff.Removed, diff.Delta{Base: 1, Delta: -1, RelPct: -100},
			diff.Delta{Base: 85, Delta: -85, RelPct: -100}, diff.Delta{Base: 110, Delta: -110, RelPct: -100}, "child_work"},
		// worker: called from main (base only) and the root of threads
		// 101 and 102 (levels 1 and 2), summed over levels
		{"app", "worker", diff.Both, diff.Delta{Base: 3, New: 1, Delta: -2, RelPct: -200.0 / 3},
			diff.Delta{Base: 225, New: 10, Delta: -215, RelPct: -21500.0 / 225},
			diff.Delta{Base: 670, New: 160, Delta: -510, RelPct: -51000.0 / 670}, "worker"},
		// START: self is the time outside any function; total the traced
		// time: threads 1100+353+142+140 ns against 1375+173 ns
		{"", "START", diff.Both, diff.Delta{},
			diff.Delta{Base: 135, New: 123, Delta: -12, RelPct: -1200.0 / 135},
			diff.Delta{Base: 1735, New: 1548, Delta: -187, RelPct: -18700.0 / 1735}, "START"},
	}
	near := func(a, b diff.Delta) bool {
		return a.Base == b.Base && a.New == b.New && a.Delta == b.Delta &&
			(a.RelPct == b.RelPct || math.Abs(a.RelPct-b.RelPct) < 1e-9)
	}
	for _, c := range cases {
		f, ok := r.FuncDelta(c.module, c.name)
		if !ok {
			t.Errorf("%s:%s not found", c.module, c.name)
			continue
		}
		if f.Status != c.status || f.Display != c.display || !near(f.Calls, c.calls) || !near(f.Self, c.self) || !near(f.Total, c.total) {
			t.Errorf("%s:%s = %+v\nwant status %v display %s calls %+v self %+v total %+v", c.module, c.name, f,
				c.status, c.display, c.calls, c.self, c.total)
		}
	}
	if len(r.Functions) != 13 || len(r.Edges) != 19 {
		t.Errorf("%d functions, %d edges, want 13 and 19", len(r.Functions), len(r.Edges))
	}
	if _, ok := r.FuncDelta("/bin/app", "fib"); ok {
		t.Error("FuncDelta found a function by module path: identity is by base name")
	}
	// edges: one per (caller, callee, kind), summed over levels
	edge := func(caller, callee string, kind model.EdgeKind) diff.Edge {
		for _, e := range r.Edges {
			if e.CallerDisplay == caller && e.CalleeDisplay == callee && e.Kind == kind {
				return e
			}
		}
		t.Fatalf("no edge %s -> %s (%s)", caller, callee, kind)
		return diff.Edge{}
	}
	if e := edge("START", "worker", model.EdgeCall); e.Status != diff.Both || e.Calls != (diff.Delta{Base: 2, New: 1, Delta: -1, RelPct: -50}) ||
		e.Total.Base != 470 || e.Total.New != 160 {
		t.Errorf("START -> worker = %+v", e)
	}
	if e := edge("main", "cache_lookup", model.EdgeCall); e.Status != diff.Added || e.Calls.New != 1 || e.Total.New != 40 {
		t.Errorf("main -> cache_lookup = %+v", e)
	}
	if e := edge("do_fork", "main", model.EdgeFork); e.Status != diff.Removed || e.Calls.Base != 1 {
		t.Errorf("do_fork -> main (fork) = %+v", e)
	}
	if e := edge("spawn_workers", "worker", model.EdgeSpawn); e.Status != diff.Both || e.Calls.Delta != 0 {
		t.Errorf("spawn_workers -> worker (spawn) = %+v", e)
	}
}

// A profile compared with itself, or with its copy: every change is 0.
func TestCompareSame(t *testing.T) {
	for name, p := range map[string]*model.Profile{"sample": modeltest.Sample(), "composite": modeltest.SampleComposite()} {
		r, err := diff.Compare(p, p)
		must(t, err)
		for _, f := range r.Functions {
			if f.Status != diff.Both || f.Calls.Delta != 0 || f.Self.Delta != 0 || f.Total.Delta != 0 ||
				f.Self.RelPct != 0 || f.Calls.Base != f.Calls.New {
				t.Errorf("%s: %+v changed", name, f)
			}
		}
		for _, e := range r.Edges {
			if e.Status != diff.Both || e.Calls.Delta != 0 || e.Total.Delta != 0 {
				t.Errorf("%s: edge %+v changed", name, e)
			}
		}
		if len(r.Functions) == 0 || len(r.Edges) == 0 {
			t.Errorf("%s: nothing compared", name)
		}
	}
}

func TestCompareErrors(t *testing.T) {
	sampled := modeltest.Sample()
	sampled.Meta.Sampling = &model.Sampling{Type: "cpu", Unit: "nanoseconds"}
	if _, err := diff.Compare(modeltest.Sample(), sampled); err == nil || !strings.Contains(err.Error(), "sampled") {
		t.Errorf("traced against sampled: err = %v", err)
	}
	if _, err := diff.Compare(nil, modeltest.Sample()); err == nil {
		t.Error("Compare(nil, p) succeeded")
	}
	// calls gates make no sense on sampled profiles
	r, err := diff.Compare(sampled, sampled)
	must(t, err)
	g, err := diff.ParseGate("calls>+10")
	must(t, err)
	if _, err := r.Report(diff.Options{Gates: []*diff.Gate{g}}); err == nil || !strings.Contains(err.Error(), "call counts") {
		t.Errorf("calls gate on sampled profiles: err = %v", err)
	}
	if _, err := r.Report(diff.Options{Top: -1}); err == nil {
		t.Error("Report with a negative top succeeded")
	}
	if _, err := r.Report(diff.Options{Sort: "size"}); err == nil {
		t.Error("Report with an unknown sort key succeeded")
	}
}

func TestReportSortTopGates(t *testing.T) {
	r := compare(t)
	gSelf, err := diff.ParseGate("self>+50%")
	must(t, err)
	gCalls, err := diff.ParseGate("func~^(fib|worker)$:calls<-1")
	must(t, err)
	names := func(fs []diff.Function) string {
		var s []string
		for _, f := range fs {
			s = append(s, f.Display)
		}
		return strings.Join(s, " ")
	}
	cases := []struct {
		sort  diff.SortKey
		top   int
		funcs string
		edge0 string
	}{
		{diff.SortSelf, 3, "libc.so.6:usleep compute worker", "main>libc.so.6:usleep"},
		{diff.SortTotal, 2, "worker libc.so.6:usleep", "main>libc.so.6:usleep"},
		{diff.SortCalls, 1, "worker", "START>worker"},
		{diff.SortName, 2, "START cache_lookup", "START>main"},
	}
	for _, c := range cases {
		rep, err := r.Report(diff.Options{Sort: c.sort, Top: c.top, Gates: []*diff.Gate{gSelf, gCalls}})
		must(t, err)
		if got := names(rep.Functions); got != c.funcs {
			t.Errorf("sort %s top %d: functions %q, want %q", c.sort, c.top, got, c.funcs)
		}
		if got := rep.Edges[0].CallerDisplay + ">" + rep.Edges[0].CalleeDisplay; got != c.edge0 {
			t.Errorf("sort %s: first edge %s, want %s", c.sort, got, c.edge0)
		}
		if len(rep.Edges) != c.top || rep.AllFunctions != 13 || rep.AllEdges != 19 {
			t.Errorf("sort %s top %d: %d edges, all %d/%d", c.sort, c.top, len(rep.Edges), rep.AllFunctions, rep.AllEdges)
		}
		// gates see every function, whatever the top: usleep +80%, fib
		// +63%, cache_lookup new; START breaks none. fib and worker lost calls.
		if got := names(rep.Gates[0].Functions); !sameSet(got, "libc.so.6:usleep fib cache_lookup") {
			t.Errorf("sort %s: self>+50%% broken by %q", c.sort, got)
		}
		if got := names(rep.Gates[1].Functions); !sameSet(got, "worker") {
			t.Errorf("sort %s: calls<-1 broken by %q", c.sort, got)
		}
		if breaches := rep.Messages(); len(breaches) != 4 {
			t.Errorf("sort %s: breaches %q", c.sort, breaches)
		}
	}
}

func sameSet(a, b string) bool {
	fa, fb := strings.Fields(a), strings.Fields(b)
	if len(fa) != len(fb) {
		return false
	}
	seen := map[string]int{}
	for _, x := range fa {
		seen[x]++
	}
	for _, x := range fb {
		seen[x]--
	}
	for _, n := range seen {
		if n != 0 {
			return false
		}
	}
	return true
}

func TestColor(t *testing.T) {
	self := func(status diff.Status, base, new int64) diff.Function {
		return diff.Function{Status: status, Self: diff.Delta{Base: base, New: new, Delta: new - base}}
	}
	const second = 1e9
	cases := []struct {
		f       diff.Function
		scopeNs int64
		fill    string
		white   bool
	}{
		{self(diff.Both, 100, 100), second, diff.Grey, false},
		// +7.49µs from next to nothing is nothing in a one-second run
		{self(diff.Both, 4, 7494), second, diff.Grey, false},
		{self(diff.Both, 10e6, 10e6+999e3), second, diff.Grey, false}, // under 0.1%
		{self(diff.Both, 10e6, 11e6), second, "#ffe4e4", false},       // 0.1%: the palest red
		{self(diff.Both, 10e6, 20e6), second, "#e47272", false},       // 1%: half way on the log scale
		{self(diff.Both, 10e6, 110e6), second, "#c80000", true},       // 10%: full
		{self(diff.Both, 10e6, 900e6), second, "#c80000", true},
		{self(diff.Both, 200e6, 100e6), second, "#003cc8", true},
		{self(diff.Added, 0, 5), second, diff.Grey, false}, // new, and 5ns
		{self(diff.Added, 0, 300e6), second, "#c80000", true},
		{self(diff.Removed, 200e6, 0), second, "#003cc8", true},
		{self(diff.Both, 100, 200), 0, diff.Grey, false}, // no time to share
	}
	for _, c := range cases {
		if fill, white := diff.Color(c.f, c.scopeNs); fill != c.fill || white != c.white {
			t.Errorf("Color(%+v, %d) = %s, %t, want %s, %t", c.f.Self, c.scopeNs, fill, white, c.fill, c.white)
		}
	}
	// of 1735ns: usleep +400ns (23%) full, cache_lookup +40ns (2.3%) deep
	r := compare(t)
	p := newerSample()
	for name, want := range map[string]string{"usleep": "#c80000", "spawn_workers": diff.Grey, "cache_lookup": "#da4949"} {
		f := -1
		for i, fn := range p.Functions {
			if fn.Name == name {
				f = i
			}
		}
		if got := r.FuncColor(p, f); got != want {
			t.Errorf("FuncColor(%s) = %s, want %s", name, got, want)
		}
	}
}

// CompareBusy compares busy times: usleep, sleeping, has none on either
// side (500ns and 900ns of wall time), a sampled profile's counted hash
// has its samples' 60ns; each side says what its times are.
func TestCompareBusy(t *testing.T) {
	self := func(r *diff.Result, name string) diff.Delta {
		t.Helper()
		for _, f := range r.Functions {
			if f.Name == name {
				return f.Self
			}
		}
		t.Fatalf("no %s in the diff", name)
		return diff.Delta{}
	}
	for _, c := range []struct {
		name        string
		base, newer *model.Profile
		fn          string
		want        diff.Delta
		times       string
	}{
		{"measured", modeltest.Sample(), newerSample(), "usleep", diff.Delta{}, diff.TimesBusyMeasured},
		{"sampled", modeltest.CPUSampled(), modeltest.CPUSampled(), "hash", diff.Delta{Base: 60, New: 60}, diff.TimesBusySampled},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := diff.CompareBusy(c.base, c.newer)
			if err != nil {
				t.Fatal(err)
			}
			if got := self(r, c.fn); got != c.want {
				t.Errorf("%s: self %+v, want %+v", c.fn, got, c.want)
			}
			if r.Base.Times != c.times || r.New.Times != c.times {
				t.Errorf("times %q, %q; want %q", r.Base.Times, r.New.Times, c.times)
			}
			w, err := diff.Compare(c.base, c.newer)
			if err != nil {
				t.Fatal(err)
			}
			if w.Base.Times != diff.TimesWall || self(w, c.fn) == c.want && c.name == "measured" {
				t.Errorf("wall: times %q, %s self %+v", w.Base.Times, c.fn, self(w, c.fn))
			}
		})
	}
}
