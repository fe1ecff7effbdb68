package render_test

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/profile-dev/profile/internal/human"
	"github.com/profile-dev/profile/internal/svgfit"
	"github.com/profile-dev/profile/model"
	"github.com/profile-dev/profile/model/modeltest"
	"github.com/profile-dev/profile/render"
)

// drawn parses a DOT of this package: the names of its nodes by id (the
// first line of each label, [Ln] included) and its edges.
func drawn(dot []byte) (nodes map[string]string, edges []dotEdge) {
	nodes = map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^  (n\d+) \[label="(.*?)\\n`).FindAllStringSubmatch(string(dot), -1) {
		nodes[m[1]] = m[2]
	}
	for _, m := range regexp.MustCompile(`(?m)^  (n\d+) -> (n\d+) \[label="([^"]*)"`).FindAllStringSubmatch(string(dot), -1) {
		edges = append(edges, dotEdge{m[1], m[2], m[3]})
	}
	return nodes, edges
}

// dotEdge is an edge of a DOT: its ends' ids and its label.
type dotEdge struct{ from, to, label string }

// 300 functions: the 80 of largest total time are drawn, each with an
// edge in (their callers come with them), the call edges of at least
// 0.1% of the time, and the title says what is left out.
func TestNodeCountAndEdgeFraction(t *testing.T) {
	p := treeProfile(320, 300, 4, false)
	g := p.Graph(model.Scope{})
	dot := mustDOT(t, p, render.Options{})
	nodes, edges := drawn(dot)
	if len(nodes) != 81 { // START and 80 functions
		t.Fatalf("%d nodes drawn, want 81", len(nodes))
	}
	title := regexp.MustCompile(`showing 80 of (\d+) functions and (\d+) of (\d+) call edges\\nleft out: functions of less total time than the 80 drawn \(([^ ]+) or less\), call edges under 0.10% of the time"`).FindSubmatch(dot)
	if title == nil {
		t.Fatalf("the title does not say what is left out:\n%s", dot[:400])
	}
	if all, _ := strconv.Atoi(string(title[1])); all != len(g.Nodes)-1 {
		t.Errorf("title: %s functions, the graph has %d", title[1], len(g.Nodes)-1)
	}
	if n, _ := strconv.Atoi(string(title[2])); n != len(edges) {
		t.Errorf("title: %s call edges drawn, the drawing has %d", title[2], len(edges))
	}
	cut, err := human.ParseDuration(string(title[4]))
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]bool{}
	for _, n := range nodes {
		byName[n] = true
	}
	for _, n := range g.Nodes[1:] {
		if float64(n.TotalNs) > cut*1.01 && !byName[p.ShortFuncName(n.Key.Func)] { // labels shorten ns::fn_0121<int>
			t.Errorf("%s (total %s) is not drawn, the cut is %s", p.FuncName(n.Key.Func), human.Duration(n.TotalNs), title[4])
		}
	}
	// every function drawn has a caller drawn
	called := map[string]bool{}
	for _, e := range edges {
		if e.from != e.to {
			called[e.to] = true
		}
	}
	for id, n := range nodes {
		if id != "n0" && !called[id] {
			t.Errorf("%s is drawn without a caller", n)
		}
	}
	// edges: 0.1% of the traced time or more, or recursive
	minNs := float64(g.TracedNs) / 1000
	for _, e := range edges {
		m := regexp.MustCompile(`\d+× ([^ ]+) \(`).FindStringSubmatch(e.label)
		if m == nil {
			if !strings.Contains(e.label, "× recursive") {
				t.Errorf("edge %s: no time", e)
			}
			continue
		}
		if ns, _ := human.ParseDuration(m[1]); ns < minNs*0.99 {
			t.Errorf("edge %s under 0.1%% of %d ns", e, g.TracedNs)
		}
	}
	// negative: no limit
	all, allEdges := drawn(mustDOT(t, p, render.Options{NodeCount: -1, EdgeFraction: -1}))
	if len(all) != len(g.Nodes) || len(allEdges) != len(g.Edges) {
		t.Errorf("no limits: %d nodes, %d edges drawn; the graph has %d, %d", len(all), len(allEdges), len(g.Nodes), len(g.Edges))
	}
}

// poolProfile is a server's idle pool: four worker threads (level 1) wait
// 1 ms each in pthread_cond_wait while the main thread spends 300 µs in
// crunch.
func poolProfile() *model.Profile {
	b := modeltest.NewBuilder("/bin/pool")
	pr := b.Process(1, model.None, "", 0)
	in := func(dt int64, f string) modeltest.Step { return modeltest.Step{Dt: dt, Func: f} }
	out := func(dt int64) modeltest.Step { return modeltest.Step{Dt: dt} }
	b.Thread(pr, 1, 0, "", 0, nil, []modeltest.Step{
		in(10, "main"), in(10, "start_pool"), in(5, "libc.so.6:pthread_create"), out(40), out(5),
		in(5, "crunch"), out(300_000), out(10),
	})
	for tid := 2; tid <= 5; tid++ {
		b.Thread(pr, tid, 1, "start_pool", 1, nil, []modeltest.Step{
			in(5, "pool_worker"), in(5, "next_task"), in(5, "libc.so.6:pthread_cond_wait"), out(1_000_000), out(5), out(5),
		})
	}
	return b.P
}

// Waiting is never hot: the idle pool's pthread_cond_wait is blue-grey,
// in busy time (the default) and in wall time, where it is 93% of the
// time; the busy function is red.
func TestWaitingNeverHot(t *testing.T) {
	p := poolProfile()
	for _, opt := range []render.Options{{}, {Wall: true}, {ThreadShare: true}} {
		dot := mustDOT(t, p, opt)
		wait := nodeLine(t, dot, "libc.so.6:pthread_cond_wait")
		if !strings.Contains(wait, `fillcolor="#c6d4e1"`) {
			t.Errorf("%+v: pthread_cond_wait: %s", opt, wait)
		}
		crunch := nodeLine(t, dot, "crunch")
		if opt.Wall {
			// 300 of 4,300 µs: orange, under the hot 10%
			if !strings.Contains(crunch, `crunch\nself 300µs (6.98%)`) || !strings.Contains(crunch, `fillcolor="#ef6548"`) {
				t.Errorf("wall: crunch: %s", crunch)
			}
			continue
		}
		if !regexp.MustCompile(`fillcolor="#(d7301f|b30000|7f0000)"`).MatchString(crunch) {
			t.Errorf("%+v: crunch not in the hot tier: %s", opt, crunch)
		}
	}
	// the workers' waiting is out of their busy totals and said
	if l := nodeLine(t, mustDOT(t, p, render.Options{}), "pool_worker [L1]"); !strings.Contains(l, `\n+4.00ms waiting\n4 calls`) {
		t.Errorf("pool_worker: %s", l)
	}
}

// Without Threads a library function at the root of threads is one node
// with the calls of all its levels; with Threads one per level.
func TestFoldLibraryLevels(t *testing.T) {
	b := modeltest.NewBuilder("/bin/app")
	pr := b.Process(1, model.None, "", 0)
	in := func(dt int64, f string) modeltest.Step { return modeltest.Step{Dt: dt, Func: f} }
	out := func(dt int64) modeltest.Step { return modeltest.Step{Dt: dt} }
	b.Thread(pr, 1, 0, "", 0, nil, []modeltest.Step{in(10, "main"), in(10, "libc.so.6:poll"), out(100), out(10)})
	b.Thread(pr, 2, 1, "main", 1, nil, []modeltest.Step{in(10, "libc.so.6:poll"), out(200)})
	b.Thread(pr, 3, 2, "", 2, nil, []modeltest.Step{in(10, "libc.so.6:poll"), out(300)})
	nodes, _ := drawn(mustDOT(t, b.P, render.Options{}))
	if got := fmt.Sprint(nodes); got != "map[n0:START n1:libc.so.6:poll n2:main [L0]]" {
		t.Errorf("folded: %s", got)
	}
	if l := nodeLine(t, mustDOT(t, b.P, render.Options{Wall: true}), "libc.so.6:poll"); !strings.Contains(l, `self 600ns (`) || !strings.Contains(l, `\n3 calls`) {
		t.Errorf("folded poll: %s", l)
	}
	nodes, _ = drawn(mustDOT(t, b.P, render.Options{Threads: true}))
	if got := fmt.Sprint(nodes); got != "map[n0:START n1:libc.so.6:poll n2:libc.so.6:poll [L1] n3:libc.so.6:poll [L2] n4:main [L0]]" {
		t.Errorf("with threads: %s", got)
	}
}

// wideProfile is a C++-like program of many functions called side by
// side: run_all calls 8 modules, each 6 stages, each 6 leaves.
func wideProfile() *model.Profile {
	b := modeltest.NewBuilder("/bin/wide")
	pr := b.Process(1, model.None, "", 0)
	in := func(f string) modeltest.Step { return modeltest.Step{Dt: 1, Func: f} }
	out := func(dt int64) modeltest.Step { return modeltest.Step{Dt: dt} }
	s := []modeltest.Step{in("main"), in("wide::run_all(long)")}
	for m := range 8 {
		s = append(s, in(fmt.Sprintf("wide::Mod<%d>::run(long)", m)))
		for st := range 6 {
			s = append(s, in(fmt.Sprintf("long wide::Mod<%d>::stage<%d>(long)", m, st)))
			for l := range 6 {
				s = append(s, in(fmt.Sprintf("wide::Leaf<%d, %d, %d>::apply(long)", m, st, l)), out(int64(1000*(1+(m+st+l)%5))))
			}
			s = append(s, out(10))
		}
		s = append(s, out(10))
	}
	s = append(s, out(10), out(10))
	b.Thread(pr, 1, 0, "", 0, nil, s)
	return b.P
}

// A wide program: drawn left to right, under 3,000 pt (4,000 px) wide; a
// small one and a deep one top-down. Every label inside its box and
// readable on its fill. (The deep random tree is wide either way: about
// 3,900 pt top-down, 5,800 pt left to right.)
func TestLayoutFits(t *testing.T) {
	for name, c := range map[string]struct {
		p        *model.Profile
		rankdir  string
		maxWidth float64
	}{
		"wide":   {wideProfile(), "LR", 3000},
		"sample": {modeltest.Sample(), "TB", 3000},
		"tree":   {treeProfile(320, 300, 4, false), "TB", 4500},
	} {
		dot := mustDOT(t, c.p, render.Options{})
		if !strings.Contains(string(dot), "rankdir="+c.rankdir+",") {
			t.Errorf("%s: not laid out %s", name, c.rankdir)
		}
		svg, err := render.SVG(context.Background(), dot)
		if err != nil {
			t.Fatal(err)
		}
		d, err := svgfit.Check(svg, 0.6)
		if err != nil {
			t.Fatal(err)
		}
		if d.Width > c.maxWidth || d.Texts < 3*d.Nodes/2 {
			t.Errorf("%s: %.0f × %.0f pt, %d nodes, %d texts", name, d.Width, d.Height, d.Nodes, d.Texts)
		}
		for _, pr := range d.Problems {
			t.Errorf("%s: %s", name, pr)
		}
	}
}
