package prune

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/profile-dev/profile/merge"
	"github.com/profile-dev/profile/model"
	"github.com/profile-dev/profile/model/modeltest"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func build(script ...modeltest.Step) *model.Profile {
	b := modeltest.NewBuilder("/bin/app")
	p := b.Process(10, model.None, "", 0)
	b.Thread(p, 10, 0, "", 0, nil, script)
	return b.P
}

// chain is START→A→B→C with B tiny: A self 200, B self 2, C self 500.
func chain() *model.Profile {
	return build(modeltest.Enter(10, "A"), modeltest.Enter(100, "B"), modeltest.Enter(1, "C"), modeltest.Exit(500), modeltest.Exit(1), modeltest.Exit(100))
}

// siblings: A calls C directly and through B and D, which are tiny; the
// orphaned C contexts merge into A's own C child.
func siblings() *model.Profile {
	return build(modeltest.Enter(10, "A"),
		modeltest.Enter(100, "B"), modeltest.Enter(1, "C"), modeltest.Enter(5, "E"), modeltest.Exit(80), modeltest.Exit(300), modeltest.Exit(1),
		modeltest.Enter(1, "D"), modeltest.Enter(1, "C"), modeltest.Exit(200), modeltest.Exit(1),
		modeltest.Enter(1, "C"), modeltest.Exit(100),
		modeltest.Exit(50))
}

// metrics: hot has the self time, wrapper only the total time, chatty
// only the calls.
func metrics() *model.Profile {
	s := []modeltest.Step{modeltest.Enter(10, "main"), modeltest.Enter(5, "hot"), modeltest.Exit(600), modeltest.Enter(5, "wrapper"), modeltest.Enter(1, "inner"), modeltest.Exit(300), modeltest.Exit(1)}
	for range 40 {
		s = append(s, modeltest.Enter(1, "chatty"), modeltest.Exit(1))
	}
	return build(append(s, modeltest.Exit(5))...)
}

func spawner() *model.Profile {
	b := modeltest.NewBuilder("/bin/pool")
	p := b.Process(300, model.None, "", 0)
	b.Thread(p, 300, 0, "", 0, nil, []modeltest.Step{
		modeltest.Enter(10, "main"), modeltest.Enter(5, "spawn_pool"), modeltest.Enter(5, "libpthread.so.0:pthread_create"), modeltest.Exit(20),
		modeltest.Enter(5, "libpthread.so.0:pthread_create"), modeltest.Exit(20), modeltest.Exit(5), modeltest.Enter(5, "libpthread.so.0:pthread_join"), modeltest.Exit(400), modeltest.Exit(10),
	})
	b.Thread(p, 301, 300, "spawn_pool", 1, nil, []modeltest.Step{
		modeltest.Enter(3, "worker"), modeltest.Enter(5, "parse"), modeltest.Enter(5, "compute"), modeltest.Exit(200), modeltest.Exit(2), modeltest.Enter(5, "compute"), modeltest.Exit(100), modeltest.Exit(5),
	})
	b.Thread(p, 302, 300, "spawn_pool", 1, nil, []modeltest.Step{
		modeltest.Enter(3, "worker"), modeltest.Enter(5, "parse"), modeltest.Enter(2, "compute"), modeltest.Exit(30), modeltest.Exit(3), modeltest.Enter(2, "log"), modeltest.Exit(1), modeltest.Exit(5),
	})
	return b.P
}

func composite() *model.Profile {
	m, err := merge.MergeRuns([]merge.Run{{Name: "sample.data", Profile: modeltest.Sample()}, {Name: "pool.data", Profile: spawner()}})
	if err != nil {
		panic(err)
	}
	return m
}

// dump prints every thread's CCT, one node a line, indented by depth.
func dump(p *model.Profile) string {
	var b strings.Builder
	for ti := range p.Threads {
		t := &p.Threads[ti]
		fmt.Fprintf(&b, "thread %d: tid %d %q level %d traced %dns", ti, t.Tid, t.Name, t.Level, t.TracedNs)
		if len(t.Members) > 0 {
			fmt.Fprintf(&b, " members")
			for _, m := range t.Members {
				fmt.Fprintf(&b, " %s/%d/%d", p.Meta.Sources[m.Run], m.Pid, m.Tid)
			}
		}
		b.WriteString("\n")
		depth := make([]int, len(t.Nodes))
		for i := range t.Nodes {
			n := &t.Nodes[i]
			if i > 0 {
				depth[i] = depth[n.Parent] + 1
			}
			b.WriteString(strings.Repeat("  ", depth[i]+1))
			if n.Elided {
				b.WriteString("~> ")
			}
			fmt.Fprintf(&b, "%s calls=%d", p.FuncName(n.Func), n.Calls)
			if n.RecursiveCalls > 0 {
				fmt.Fprintf(&b, " rc=%d", n.RecursiveCalls)
			}
			fmt.Fprintf(&b, " self=%dns total=%dns", n.SelfNs, n.TotalNs)
			for _, x := range []struct {
				k string
				v int64
			}{{"direct", n.DirectCalls}, {"indirect", n.IndirectCalls}, {"plt", n.PLTCalls}, {"inflight", n.InFlight}, {"dropped", n.DroppedNs}} {
				if x.v != 0 {
					fmt.Fprintf(&b, " %s=%d", x.k, x.v)
				}
			}
			if n.Elided {
				b.WriteString(" [elided]")
			}
			for _, c := range n.Contribs {
				fmt.Fprintf(&b, " {m%d %d/%d/%d/%d}", c.Member, c.Calls, c.RecursiveCalls, c.SelfNs, c.TotalNs)
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

func mustPrune(t *testing.T, p *model.Profile, opt Options) *model.Profile {
	t.Helper()
	if err := p.Validate(); err != nil {
		t.Fatalf("input invalid: %v", err)
	}
	q, err := Prune(p, opt)
	if err != nil {
		t.Fatalf("prune: %v", err)
	}
	if err := q.Validate(); err != nil {
		t.Fatalf("pruned profile invalid: %v\n%s", err, dump(q))
	}
	return q
}

func TestGolden(t *testing.T) {
	for _, c := range []struct {
		name string
		p    func() *model.Profile
		opt  Options
	}{
		{"chain-self-5pct", chain, Options{Threshold: 0.05, Metric: Self}},
		{"chain-total-600ns", chain, Options{MinNs: 600, Metric: Total}},
		{"siblings-self-5pct", siblings, Options{Threshold: 0.05, Metric: Self}},
		{"sample-keep-compute-fib", modeltest.Sample, Options{Keep: regexp.MustCompile(`compute|fib`)}},
		{"sample-total-10pct", modeltest.Sample, Options{Threshold: 0.10}},
		{"sample-self-5pct", modeltest.Sample, Options{Threshold: 0.05, Metric: Self}},
		{"sample-min-calls-2", modeltest.Sample, Options{MinCalls: 2}},
		{"composite-self-5pct", composite, Options{Threshold: 0.05, Metric: Self}},
		{"composite-keep-libc", composite, Options{Keep: regexp.MustCompile(`^libc\.so\.6:`)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := c.p()
			got := dump(mustPrune(t, p, c.opt))
			file := filepath.Join("testdata", c.name+".golden")
			if *update {
				text := "# input\n" + dump(p) + "# pruned\n" + got
				if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (run go test ./prune -update to create it)", err)
			}
			_, want, ok := strings.Cut(string(data), "# pruned\n")
			if !ok || want != got {
				t.Errorf("pruned CCTs differ from %s:\n--- got\n%s--- want\n%s", file, got, want)
			}
		})
	}
}

// find returns the node of thread 0 reached by a path of names from START.
func find(p *model.Profile, path ...string) *model.Node {
	nodes := p.Threads[0].Nodes
	at := 0
	for _, name := range path {
		next := -1
		for i := range nodes {
			if nodes[i].Parent == at && p.FuncName(nodes[i].Func) == name {
				next = i
			}
		}
		if next < 0 {
			return nil
		}
		at = next
	}
	return &nodes[at]
}

// TestChain is the acceptance case: START→A→B→C with B under the
// threshold becomes A→C, elided, with C's numbers intact and B's self time
// in A's dropped time.
func TestChain(t *testing.T) {
	p := chain()
	q := mustPrune(t, p, Options{Threshold: 0.05, Metric: Self})
	b, c := find(p, "A", "B"), find(p, "A", "B", "C")
	a2, c2 := find(q, "A"), find(q, "A", "C")
	switch {
	case b == nil || c == nil:
		t.Fatal("input lacks A→B→C")
	case a2 == nil || c2 == nil:
		t.Fatalf("pruned lacks A→C:\n%s", dump(q))
	case len(q.Threads[0].Nodes) != 3:
		t.Errorf("%d nodes left, want START, A, C:\n%s", len(q.Threads[0].Nodes), dump(q))
	case !c2.Elided || a2.Elided:
		t.Errorf("A→C elided %v, START→A elided %v; want only A→C", c2.Elided, a2.Elided)
	case c2.Calls != c.Calls || c2.RecursiveCalls != c.RecursiveCalls || c2.SelfNs != c.SelfNs || c2.TotalNs != c.TotalNs:
		t.Errorf("C changed: %+v, was %+v", *c2, *c)
	case a2.DroppedNs != b.SelfNs || b.SelfNs != 2:
		t.Errorf("A dropped %dns, want B's self %dns (2)", a2.DroppedNs, b.SelfNs)
	}
	// the graph shows the elided edge A→C
	g := q.Graph(model.Scope{})
	elided := 0
	for _, e := range g.Edges {
		if e.Elided {
			elided++
			if q.FuncName(g.Nodes[e.From].Key.Func) != "A" || q.FuncName(g.Nodes[e.To].Key.Func) != "C" {
				t.Errorf("elided edge %d→%d, want A→C", e.From, e.To)
			}
		}
	}
	if elided != 1 {
		t.Errorf("%d elided edges, want 1", elided)
	}
}

// TestSiblingsMerge: orphans re-attached to an ancestor that already has
// a child of their function merge with it, subtrees included.
func TestSiblingsMerge(t *testing.T) {
	p := siblings()
	q := mustPrune(t, p, Options{Threshold: 0.05, Metric: Self})
	c := find(q, "A", "C")
	if c == nil {
		t.Fatalf("no A→C:\n%s", dump(q))
	}
	if c.Calls != 3 || c.SelfNs != 305+200+100 || c.TotalNs != 385+200+100 || !c.Elided {
		t.Errorf("merged C = %+v, want 3 calls, 605ns self, 685ns total, elided", *c)
	}
	if e := find(q, "A", "C", "E"); e == nil || e.SelfNs != 80 || e.Elided {
		t.Errorf("C→E lost or changed: %v", e)
	}
	if a := find(q, "A"); a.DroppedNs != 2+2 {
		t.Errorf("A dropped %dns, want B's 2 + D's 2", a.DroppedNs)
	}
}

func profiles() map[string]func() *model.Profile {
	return map[string]func() *model.Profile{
		"chain": chain, "siblings": siblings, "metrics": metrics, "sample": modeltest.Sample,
		"spawner": spawner, "composite": composite, "counted": modeltest.Counted,
		"synthetic": func() *model.Profile { return modeltest.Synthetic(5000, 4, 3) },
	}
}

func TestZeroIsIdentity(t *testing.T) {
	for name, mk := range profiles() {
		for _, opt := range []Options{{}, {Metric: Self}, {Metric: Calls}, {MinCalls: 0, MinNs: 0}} {
			t.Run(fmt.Sprintf("%s/%v", name, opt.Metric), func(t *testing.T) {
				p := mk()
				q := mustPrune(t, p, opt)
				if !reflect.DeepEqual(p, q) {
					t.Errorf("threshold 0 changed the profile:\n%s\nvs\n%s", dump(p), dump(q))
				}
			})
		}
	}
}

// names lists the functions present in any CCT of p.
func names(p *model.Profile) []string {
	set := map[string]bool{}
	for _, t := range p.Threads {
		for _, n := range t.Nodes {
			set[p.FuncName(n.Func)] = true
		}
	}
	var out []string
	for n := range set {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

func TestMetrics(t *testing.T) {
	// metrics(): traced 1017ns, 44 calls; START self 20; main self 55
	// total 997; hot self 600; wrapper self 2 total 302; inner self 300;
	// chatty 40 calls, self 40.
	for _, c := range []struct {
		name string
		opt  Options
		want []string
	}{
		{"self 10%", Options{Threshold: 0.10, Metric: Self}, []string{"START", "hot", "inner"}},
		{"total 10%", Options{Threshold: 0.10, Metric: Total}, []string{"START", "hot", "inner", "main", "wrapper"}},
		{"calls 50%", Options{Threshold: 0.50, Metric: Calls}, []string{"START", "chatty"}},
		{"self 100ns", Options{MinNs: 100, Metric: Self}, []string{"START", "hot", "inner"}},
		{"total 302ns", Options{MinNs: 302}, []string{"START", "hot", "main", "wrapper"}},
		{"min calls 2", Options{MinCalls: 2}, []string{"START", "chatty"}},
		{"min calls 1", Options{MinCalls: 1}, []string{"START", "chatty", "hot", "inner", "main", "wrapper"}},
		{"keep inner", Options{Keep: regexp.MustCompile(`^inn`)}, []string{"START", "inner", "main", "wrapper"}},
		{"keep inner, self 10%", Options{Keep: regexp.MustCompile(`inner|wrapper`), Threshold: 0.10, Metric: Self}, []string{"START", "inner", "main", "wrapper"}},
		{"keep nothing", Options{Keep: regexp.MustCompile(`^nomatch$`)}, []string{"START"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := metrics()
			if p.Threads[0].TracedNs != 1017 {
				t.Fatalf("metrics profile traced %dns, the table assumes 1017", p.Threads[0].TracedNs)
			}
			q := mustPrune(t, p, c.opt)
			if got := names(q); !reflect.DeepEqual(got, c.want) {
				t.Errorf("kept %v, want %v\n%s", got, c.want, dump(q))
			}
		})
	}
}

// TestKeptFunctionsIntact: without --keep, a function is either gone
// everywhere or keeps every call and all its self time; no time is lost.
func TestKeptFunctionsIntact(t *testing.T) {
	for name, mk := range profiles() {
		for _, opt := range []Options{{Threshold: 0.01}, {Threshold: 0.05, Metric: Self}, {Threshold: 0.2, Metric: Calls}, {MinCalls: 3}, {MinNs: 1000}} {
			t.Run(fmt.Sprintf("%s/%s/%v/%d", name, opt.Metric, opt.Threshold, opt.MinCalls), func(t *testing.T) {
				p := mk()
				q := mustPrune(t, p, opt)
				type sums struct{ calls, rc, self, inflight int64 }
				per := func(p *model.Profile) map[int]sums {
					m := map[int]sums{}
					for _, t := range p.Threads {
						for _, n := range t.Nodes {
							s := m[n.Func]
							s.calls += n.Calls
							s.rc += n.RecursiveCalls
							s.self += n.SelfNs
							s.inflight += n.InFlight
							m[n.Func] = s
						}
					}
					return m
				}
				before, after := per(p), per(q)
				for f, s := range after {
					if before[f] != s {
						t.Errorf("%s: %+v after, %+v before", p.FuncName(f), s, before[f])
					}
				}
				ok := passes(p, &opt)
				for f := range before {
					if _, kept := after[f]; kept != ok[f] {
						t.Errorf("%s: kept %v, decision %v", p.FuncName(f), kept, ok[f])
					}
				}
				for ti := range p.Threads {
					var s, d int64
					for _, n := range q.Threads[ti].Nodes {
						s += n.SelfNs
						d += n.DroppedNs
					}
					if s+d != p.Threads[ti].TracedNs {
						t.Errorf("thread %d: self %d + dropped %d != traced %d", ti, s, d, p.Threads[ti].TracedNs)
					}
				}
			})
		}
	}
}

// TestDecisionMatchesGraph: the per-function values are those of the
// derived call graph of the whole profile.
func TestDecisionMatchesGraph(t *testing.T) {
	for name, mk := range profiles() {
		p := mk()
		vals, traced, _ := values(p)
		g := p.Graph(model.Scope{})
		if g.TracedNs != traced {
			t.Errorf("%s: traced %d, graph %d", name, traced, g.TracedNs)
		}
		fromGraph := make([]funcValue, len(p.Functions))
		for _, n := range g.Nodes {
			v := &fromGraph[n.Key.Func]
			v.self += n.SelfNs
			v.total += n.TotalNs
		}
		for f := range vals {
			if vals[f].self != fromGraph[f].self || vals[f].total != fromGraph[f].total {
				t.Errorf("%s: %s: values %+v, graph %+v", name, p.FuncName(f), vals[f], fromGraph[f])
			}
		}
	}
}

// TestKeep: exactly the matching calls and their ancestors, by path.
func TestKeep(t *testing.T) {
	for _, c := range []struct {
		name, re string
		p        func() *model.Profile
	}{
		{"sample compute|fib", `compute|fib`, modeltest.Sample},
		{"sample libc", `^libc\.so\.6:`, modeltest.Sample},
		{"composite worker", `^worker$`, composite},
		{"synthetic", `fn_00[0-4]7`, func() *model.Profile { return modeltest.Synthetic(5000, 4, 3) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			re := regexp.MustCompile(c.re)
			p := c.p()
			q := mustPrune(t, p, Options{Keep: re})
			for ti := range p.Threads {
				want := map[string]bool{}
				pp := pathsOf(p, &p.Threads[ti])
				for i, n := range p.Threads[ti].Nodes {
					if i == 0 || re.MatchString(p.FuncName(n.Func)) {
						for a := i; a != model.None; a = p.Threads[ti].Nodes[a].Parent {
							want[pp[a]] = true
						}
					}
				}
				got := map[string]bool{}
				for i, s := range pathsOf(q, &q.Threads[ti]) {
					got[s] = true
					if q.Threads[ti].Nodes[i].Elided {
						t.Errorf("thread %d: %s elided under --keep", ti, s)
					}
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("thread %d: kept %d contexts, want %d", ti, len(got), len(want))
				}
			}
		})
	}
}

func pathsOf(p *model.Profile, t *model.Thread) []string {
	out := make([]string, len(t.Nodes))
	for i, n := range t.Nodes {
		out[i] = p.FuncName(n.Func)
		if i > 0 {
			out[i] = out[n.Parent] + ">" + out[i]
		}
	}
	return out
}

func TestInputUntouched(t *testing.T) {
	p := composite()
	q := mustPrune(t, p, Options{Threshold: 0.05, Metric: Self})
	q.Threads[0].Nodes[0].DroppedNs++
	q.Threads[0].Members[0].Tid = -1
	q.Functions[1].Name = "x"
	if !reflect.DeepEqual(p, composite()) {
		t.Error("prune changed its input")
	}
}

func TestParseThreshold(t *testing.T) {
	for _, c := range []struct {
		in   string
		frac float64
		ns   int64
		err  string
	}{
		{"1%", 0.01, 0, ""},
		{"0.5%", 0.005, 0, ""},
		{"100%", 1, 0, ""},
		{"0%", 0, 0, ""},
		{" 2% ", 0.02, 0, ""},
		{"5ms", 0, 5_000_000, ""},
		{"250us", 0, 250_000, ""},
		{"250µs", 0, 250_000, ""},
		{"2s", 0, 2_000_000_000, ""},
		{"0", 0, 0, ""},
		{"abc", 0, 0, `bad threshold "abc": want a percentage like 1% or a duration like 5ms`},
		{"", 0, 0, `bad threshold "": want a percentage like 1% or a duration like 5ms`},
		{"5", 0, 0, `want a percentage like 1% or a duration like 5ms`},
		{"%", 0, 0, `want a percentage`},
		{"150%", 0, 0, `between 0% and 100%`},
		{"-1%", 0, 0, `between 0% and 100%`},
		{"NaN%", 0, 0, `want a percentage`},
		{"-5ms", 0, 0, `must not be negative`},
		{"-5%", 0, 0, `between 0% and 100%`},
		{"100.0001%", 0, 0, `between 0% and 100%`},
		{"1x", 0, 0, `bad threshold "1x": want a percentage`},
		{"1e400%", 0, 0, `want a percentage`},
		{"Inf%", 0, 0, `want a percentage`},
		{"5%%", 0, 0, `want a percentage`},
		{"1%5ms", 0, 0, `want a percentage`},
		{"9999999h", 0, 0, `want a percentage`},
		{"+5%", 0.05, 0, ""},
		{"-0s", 0, 0, ""},
		{"1.5ms", 0, 1_500_000, ""},
	} {
		t.Run(c.in, func(t *testing.T) {
			frac, ns, err := ParseThreshold(c.in)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Errorf("err = %v, want %q", err, c.err)
				}
				return
			}
			if err != nil || frac != c.frac || ns != c.ns {
				t.Errorf("= %v, %v, %v; want %v, %v", frac, ns, err, c.frac, c.ns)
			}
		})
	}
}

func TestParseMetric(t *testing.T) {
	for s, want := range map[string]Metric{"self": Self, "total": Total, "calls": Calls, "Self": Self} {
		if m, err := ParseMetric(s); err != nil || m != want {
			t.Errorf("ParseMetric(%q) = %v, %v", s, m, err)
		}
		if want.String() != strings.ToLower(s) {
			t.Errorf("%v.String() = %q", want, want.String())
		}
	}
	if _, err := ParseMetric("wall"); err == nil || !strings.Contains(err.Error(), "self, total or calls") {
		t.Errorf("err = %v", err)
	}
}

// FuzzParseThreshold: ParseThreshold never panics, and what it accepts is
// a fraction in [0, 1] or a duration of at least 0, never both, which
// Prune accepts too.
func FuzzParseThreshold(f *testing.F) {
	for _, s := range []string{"1%", "0.5%", "100%", "0", "5ms", "250µs", "-1%", "150%", "NaN%", "1e400%", "-5ms", "1x", "%", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		frac, ns, err := ParseThreshold(s)
		if err != nil {
			if frac != 0 || ns != 0 || strings.Contains(err.Error(), "\n") { // one line: the input is quoted
				t.Fatalf("%q: %v, %v, %v", s, frac, ns, err)
			}
			return
		}
		if !(frac >= 0 && frac <= 1) || ns < 0 || frac != 0 && ns != 0 {
			t.Fatalf("%q: fraction %v, ns %v", s, frac, ns)
		}
		opt := Options{Threshold: frac, MinNs: ns}
		if err := opt.Check(); err != nil {
			t.Fatalf("%q parsed, but Prune refuses it: %v", s, err)
		}
	})
}

// FuzzParseMetric: ParseMetric never panics, accepts only the three
// metrics, and reads their names back.
func FuzzParseMetric(f *testing.F) {
	for _, s := range []string{"total", "self", "calls", " Self ", "wall", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseMetric(s)
		if err != nil {
			return
		}
		if m < Total || m > Calls {
			t.Fatalf("%q: metric %d", s, m)
		}
		if back, err := ParseMetric(m.String()); err != nil || back != m {
			t.Fatalf("%q: %v does not read back: %v, %v", s, m, back, err)
		}
	})
}

func TestBadOptions(t *testing.T) {
	for _, c := range []struct {
		opt  Options
		want string
	}{
		{Options{Threshold: 1.5}, "between 0 and 1"},
		{Options{Threshold: -0.1}, "between 0 and 1"},
		{Options{MinNs: -1}, "negative"},
		{Options{MinCalls: -1}, "negative"},
		{Options{MinNs: 5, Metric: Calls}, "time metric"},
		{Options{Metric: Metric(9)}, "unknown metric"},
	} {
		if _, err := Prune(chain(), c.opt); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: err = %v, want %q", c.opt, err, c.want)
		}
	}
	bad := chain()
	bad.Threads[0].Nodes[2].Parent = 5
	if _, err := Prune(bad, Options{}); err == nil || !strings.Contains(err.Error(), "malformed") {
		t.Errorf("malformed input: err = %v", err)
	}
}

func BenchmarkPrune(b *testing.B) {
	p := modeltest.Synthetic(1_000_000, 64, 1)
	for _, m := range []Metric{Total, Self} {
		b.Run(m.String()+"-1pct", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Prune(p, Options{Threshold: 0.01, Metric: m}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestPruneTwice: pruning a pruned profile at a stricter threshold gives
// what pruning once at that threshold gives (dropped time carried along).
func TestPruneTwice(t *testing.T) {
	for name, mk := range profiles() {
		for _, m := range []Metric{Total, Self} {
			t.Run(name+"/"+m.String(), func(t *testing.T) {
				once := mustPrune(t, mk(), Options{Threshold: 0.10, Metric: m})
				twice := mustPrune(t, mustPrune(t, mk(), Options{Threshold: 0.02, Metric: m}), Options{Threshold: 0.10, Metric: m})
				if a, b := dump(once), dump(twice); a != b {
					t.Errorf("pruned twice differs from once:\n%s\nvs\n%s", b, a)
				}
			})
		}
	}
}
