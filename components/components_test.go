package components_test

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/profile-dev/profile/components"
	"github.com/profile-dev/profile/internal/golden"
	"github.com/profile-dev/profile/model"
	"github.com/profile-dev/profile/model/modeltest"
	"github.com/profile-dev/profile/prune"
	"github.com/profile-dev/profile/prune/prunetest"
	"github.com/profile-dev/profile/summary"
)

// sampleRules split modeltest.Sample: fib and compute are math, worker
// (and what it calls) workers, pthread_* of libc threads, the rest of
// libc libc; main, spawn_workers, do_fork and child_work come before any
// entry: Other.
const sampleRules = `
components:
  - name: math
    entry: ['^fib$', '^compute$']
  - name: workers
    entry: ['^worker$']
  - name: threads
    module: '^libc\.so'
    entry: ['^pthread_']
  - name: libc
    module: '^libc\.so'
`

func mustRules(t *testing.T, doc string) *components.Rules {
	t.Helper()
	r, err := components.ParseRules("rules.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func mustCompute(t *testing.T, p *model.Profile, r *components.Rules) *components.Report {
	t.Helper()
	rep, err := components.Compute(p, r)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func pruned(t *testing.T) *model.Profile {
	t.Helper()
	return prunetest.Sample(t, prune.Options{MinNs: 100, Metric: prune.Total})
}

// profiles is every modeltest profile, and a pruned one (dropped time).
func profiles(t *testing.T) map[string]*model.Profile {
	return map[string]*model.Profile{
		"sample":    modeltest.Sample(),
		"composite": modeltest.SampleComposite(),
		"synthetic": modeltest.Synthetic(20_000, 4, 7),
		"pruned":    pruned(t),
	}
}

// checkAddsUp checks that the components' self (and dropped) times add up
// to the threads' traced time, and that every tree node's total is its
// own time plus its children's.
func checkAddsUp(t *testing.T, name string, p *model.Profile, r *components.Report) {
	t.Helper()
	var traced, sum int64
	for _, th := range p.Threads {
		traced += th.TracedNs
	}
	for _, s := range r.Components {
		sum += s.SelfNs + s.DroppedNs
	}
	if r.TracedNs != traced || sum != traced || r.Tree.TotalNs != traced {
		t.Errorf("%s: traced %d ns, report %d, components add up to %d, tree total %d",
			name, traced, r.TracedNs, sum, r.Tree.TotalNs)
	}
	var walk func(n *components.Node)
	walk = func(n *components.Node) {
		want := n.SelfNs + n.DroppedNs
		for _, c := range n.Children {
			want += c.TotalNs
			walk(c)
		}
		if n.TotalNs != want {
			t.Errorf("%s: tree node %s: total %d, self+dropped+children %d", name, n.Name, n.TotalNs, want)
		}
	}
	walk(r.Tree)
}

func TestTotalsAddUp(t *testing.T) {
	for name, p := range profiles(t) {
		for _, rules := range []*components.Rules{nil, mustRules(t, sampleRules)} {
			checkAddsUp(t, name, p, mustCompute(t, p, rules))
		}
	}
	if r := mustCompute(t, pruned(t), nil); r.Components[0].DroppedNs == 0 && r.Components[1].DroppedNs == 0 {
		t.Errorf("pruned sample: no dropped time in %+v", r.Components)
	}
}

// Without rules the split is by module, as summary's modules table.
func TestModulesMatchSummary(t *testing.T) {
	for name, p := range profiles(t) {
		r := mustCompute(t, p, nil)
		s, err := summary.Compute(p, summary.Options{})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int64{}
		for _, c := range r.Components {
			got[c.Name] = c.SelfNs
		}
		if len(got) != len(s.Modules)+1 {
			t.Errorf("%s: %d components, summary has %d modules and START", name, len(got), len(s.Modules))
		}
		for _, m := range s.Modules {
			if got[m.Module] != m.SelfNs {
				t.Errorf("%s: module %s: self %d ns, summary %d", name, m.Module, got[m.Module], m.SelfNs)
			}
		}
		if got[components.Start] != s.Functions[indexOf(s, model.StartName)].SelfNs {
			t.Errorf("%s: START self %d ns, summary's START %+v", name, got[components.Start], s.Functions[indexOf(s, model.StartName)])
		}
	}
}

func indexOf(s *summary.Report, name string) int {
	for i, f := range s.Functions {
		if f.Name == name {
			return i
		}
	}
	return -1
}

// The rules split Sample as worked out by hand from its scripts: calls
// into each component, and self times equal to the sums of summary's
// function self times of the frames each component holds.
func TestSampleRules(t *testing.T) {
	p := modeltest.Sample()
	r := mustCompute(t, p, mustRules(t, sampleRules))
	s, err := summary.Compute(p, summary.Options{})
	if err != nil {
		t.Fatal(err)
	}
	self := func(funcs ...string) (ns int64) {
		for _, f := range funcs {
			ns += s.Functions[indexOf(s, f)].SelfNs
		}
		return ns
	}
	want := map[string]struct {
		calls int64
		self  int64
	}{
		// main's frame in the forked child was in flight: no call
		"Other":   {1, self("main", "spawn_workers", "do_fork", "child_work")},
		"math":    {4, self("fib", "compute")},       // fib from main and child_work, compute in two threads
		"workers": {3, self("worker", "spawn_more")}, // from main, and two thread roots
		"threads": {2, self("pthread_create")},
		"libc":    {2, self("usleep", "fork")},
		"START":   {0, self("START")},
	}
	if len(r.Components) != len(want) {
		t.Errorf("components %+v, want %d", r.Components, len(want))
	}
	for _, c := range r.Components {
		w, ok := want[c.Name]
		if !ok || c.Calls != w.calls || c.SelfNs != w.self {
			t.Errorf("%s: calls %d, self %d ns; want %+v", c.Name, c.Calls, c.SelfNs, w)
		}
	}
	// the tree: Other holds main's callees, two thread roots start in workers
	var paths []string
	var walk func(n *components.Node, path string)
	walk = func(n *components.Node, path string) {
		path += "/" + n.Name
		paths = append(paths, path)
		for _, c := range n.Children {
			walk(c, path)
		}
	}
	walk(r.Tree, "")
	wantPaths := map[string]bool{"/START": true, "/START/Other": true, "/START/Other/math": true,
		"/START/Other/libc": true, "/START/Other/workers": true, "/START/Other/threads": true,
		"/START/workers": true, "/START/workers/threads": true, "/START/workers/math": true}
	if len(paths) != len(wantPaths) {
		t.Errorf("tree paths %v, want %d", paths, len(wantPaths))
	}
	for _, path := range paths {
		if !wantPaths[path] {
			t.Errorf("unexpected tree path %s in %v", path, paths)
		}
	}
}

// A component's total counts its outermost steps only: a component
// entered again below itself (a → b → a) is not counted twice.
func TestRecursiveComponentTotal(t *testing.T) {
	b := modeltest.NewBuilder("/bin/app")
	pr := b.Process(1, model.None, "", 0)
	step := func(dt int64, f string) modeltest.Step {
		return modeltest.Step{Dt: dt, Func: f, Kind: model.KindDirect}
	}
	b.Thread(pr, 1, 0, "", 0, nil, []modeltest.Step{
		step(1, "a"), step(2, "b"), step(4, "a2"), {Dt: 8}, {Dt: 16}, {Dt: 32},
	})
	r := mustCompute(t, b.P, mustRules(t, "components:\n  - {name: A, entry: ['^a']}\n  - {name: B, entry: ['^b$']}\n"))
	got := map[string]components.Stat{}
	for _, c := range r.Components {
		got[c.Name] = c
	}
	// a: 2+32 self, a2: 8, b: 4+16; A's total is a's, once
	if a := got["A"]; a.Calls != 2 || a.SelfNs != 42 || a.TotalNs != 62 {
		t.Errorf("A = %+v, want 2 calls, 42 ns self, 62 ns total", a)
	}
	if b := got["B"]; b.Calls != 1 || b.SelfNs != 20 || b.TotalNs != 28 {
		t.Errorf("B = %+v, want 1 call, 20 ns self, 28 ns total", b)
	}
	checkAddsUp(t, "a-b-a", b.P, r)
}

func TestGolden(t *testing.T) {
	writers := map[string]func(io.Writer, *components.Report) error{
		"txt": components.WriteText, "md": components.WriteMarkdown, "json": components.WriteJSON,
	}
	cases := map[string]*components.Report{
		"sample-modules": mustCompute(t, modeltest.Sample(), nil),
		"sample-rules":   mustCompute(t, modeltest.Sample(), mustRules(t, sampleRules)),
		"pruned-modules": mustCompute(t, pruned(t), nil),
	}
	for name, r := range cases {
		for ext, w := range writers {
			var buf bytes.Buffer
			if err := w(&buf, r); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, name+"."+ext, buf.Bytes())
		}
	}
	golden.Check(t, "sample-rules.dot", components.DOT(cases["sample-rules"], `sample "rules"`))
}

func TestRulesErrors(t *testing.T) {
	for doc, want := range map[string]string{
		"":                            "rules.yaml: no components",
		"components: []":              "rules.yaml: no components",
		"components:\n  - entry: [x]": "component 1: no name",
		"components:\n  - name: Other\n    entry: [x]":                          `component 1: the name "Other" is reserved`,
		"components:\n  - name: a\n    entry: [x]\n  - name: a\n    entry: [y]": `component 2: a second component named "a"`,
		"components:\n  - name: a":                                              "component 1 (a): neither entry nor module",
		"components:\n  - name: a\n    entry: ['(']":                            "component 1 (a): entry: error parsing regexp",
		"components:\n  - name: a\n    module: '['":                             "component 1 (a): module: error parsing regexp",
		"components:\n  - name: a\n    entry: {x: y}\n":                         "cannot unmarshal",
		"components:\n  - name: a\n    entries: [x]\n":                          "line 3: unknown field entries",
		"components: [": "rules.yaml: yaml:",
	} {
		_, err := components.ParseRules("rules.yaml", []byte(doc))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("rules %q: error %v, want one containing %q", doc, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("rules %q: error on several lines: %v", doc, err)
		}
	}
}

// The first matching component wins; a module regex narrows the entries.
func TestEntryPrecedence(t *testing.T) {
	p := modeltest.Sample()
	r := mustCompute(t, p, mustRules(t, `
components:
  - {name: first, entry: ['^fib$']}
  - {name: second, entry: ['^fib$', '^compute$']}
  - {name: notlibc, entry: ['^usleep$'], module: '^app$'}
`))
	got := map[string]int64{}
	for _, c := range r.Components {
		got[c.Name] = c.Calls
	}
	if got["first"] != 2 || got["second"] != 2 || got["notlibc"] != 0 {
		t.Errorf("calls %v: want first 2 (fib), second 2 (compute), no notlibc", got)
	}
	if _, ok := got["notlibc"]; ok {
		t.Errorf("notlibc matched libc's usleep: %v", got)
	}
}

func TestNoProfile(t *testing.T) {
	if _, err := components.Compute(nil, nil); err == nil {
		t.Error("Compute(nil) did not fail")
	}
}
