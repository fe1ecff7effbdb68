package render_test

import (
	"bytes"
	"context"
	"encoding/xml"
	"image/png"
	"regexp"
	"strings"
	"testing"

	"github.com/profile-dev/profile/internal/golden"
	"github.com/profile-dev/profile/model"
	"github.com/profile-dev/profile/model/modeltest"
	"github.com/profile-dev/profile/render"
)

func mustDOT(t testing.TB, p *model.Profile, opt render.Options) []byte {
	t.Helper()
	d, err := render.DOT(p, opt)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// composite is the sample with threads 101 and 102 folded into one
// composite thread (modeltest.SampleComposite).
func composite(t testing.TB) *model.Profile {
	p := modeltest.SampleComposite()
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDOTGolden(t *testing.T) {
	cases := map[string]struct {
		p   *model.Profile
		opt render.Options
	}{
		"sample":            {modeltest.Sample(), render.Options{}},
		"sample-threads":    {modeltest.Sample(), render.Options{Threads: true}},
		"sample-tid101":     {modeltest.Sample(), render.Options{Scope: model.Scope{Tid: 101}, Hot: 0.5, Warm: 0.2, Title: "thread 101"}},
		"composite-threads": {composite(t), render.Options{Threads: true}},
		"pruned":            {treeProfile(24, 18, 3, true), render.Options{}},
	}
	for name, c := range cases {
		got := mustDOT(t, c.p, c.opt)
		if again := mustDOT(t, c.p, c.opt); !bytes.Equal(got, again) {
			t.Errorf("%s: DOT is not deterministic", name)
		}
		golden.Check(t, name+".dot", got)
	}
}

// nodeLine returns the DOT statement of the node whose label starts with
// name and a line break.
func nodeLine(t *testing.T, dot []byte, name string) string {
	t.Helper()
	for _, l := range strings.Split(string(dot), "\n") {
		if strings.Contains(l, `[label="`+name+`\n`) {
			return l
		}
	}
	t.Fatalf("no node %q in\n%s", name, dot)
	return ""
}

func nodeID(t *testing.T, dot []byte, name string) string {
	l := strings.TrimSpace(nodeLine(t, dot, name))
	return l[:strings.IndexByte(l, ' ')]
}

func edgeLine(t *testing.T, dot []byte, from, to string) string {
	t.Helper()
	prefix := "  " + nodeID(t, dot, from) + " -> " + nodeID(t, dot, to) + " ["
	for _, l := range strings.Split(string(dot), "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	t.Fatalf("no edge %s -> %s", from, to)
	return ""
}

func TestSampleAnnotations(t *testing.T) {
	p := modeltest.Sample()
	dot := mustDOT(t, p, render.Options{})
	// node vectors (calls, self, self %) and tiers: usleep 500 of 1735 ns
	// is hot, fib 135 ns (7.78%) warm, do_fork 40 ns (2.31%) neither.
	if l := nodeLine(t, dot, "libc.so.6:usleep"); !strings.Contains(l, `(1, 500ns, 28.82%)`) || !strings.Contains(l, `fillcolor="#404040", fontcolor=white`) {
		t.Errorf("usleep: %s", l)
	}
	if l := nodeLine(t, dot, "fib"); !strings.Contains(l, `(5, 135ns, 7.78%)`) || !strings.Contains(l, `fillcolor="#d3d3d3"`) {
		t.Errorf("fib: %s", l)
	}
	if l := nodeLine(t, dot, "do_fork"); strings.Contains(l, "fillcolor") {
		t.Errorf("do_fork shaded: %s", l)
	}
	if l := nodeLine(t, dot, "START"); !strings.Contains(l, "shape=ellipse") || strings.Contains(l, "fillcolor") {
		t.Errorf("START: %s", l)
	}
	for _, n := range []string{"main [L0]", "worker [L1]", "worker [L2]", "worker"} {
		nodeLine(t, dot, n)
	}
	// edge vectors (calls, total, total %), rc, kinds
	if l := edgeLine(t, dot, "fib", "fib"); !strings.Contains(l, `(3, 0ns, 0.00%)\nrc=3`) {
		t.Errorf("fib -> fib: %s", l)
	}
	if l := edgeLine(t, dot, "main [L0]", "libc.so.6:usleep"); !strings.Contains(l, `label="(1, 500ns, 28.82%)"`) {
		t.Errorf("main -> usleep: %s", l)
	}
	if l := edgeLine(t, dot, "spawn_workers", "worker [L1]"); !strings.Contains(l, `label="spawn ×1", style=dashed`) {
		t.Errorf("spawn edge: %s", l)
	}
	if l := edgeLine(t, dot, "spawn_more", "worker [L2]"); !strings.Contains(l, "style=dashed") {
		t.Errorf("spawn edge: %s", l)
	}
	if l := edgeLine(t, dot, "do_fork", "main [L0]"); !strings.Contains(l, `label="fork ×1", style=dotted`) {
		t.Errorf("fork edge: %s", l)
	}
	if !strings.Contains(string(dot), "legend [shape=note") {
		t.Errorf("no legend")
	}
	// thresholds move the tiers
	dot = mustDOT(t, p, render.Options{Hot: 0.25, Warm: 0.2})
	if l := nodeLine(t, dot, "compute"); !strings.Contains(l, "#d3d3d3") {
		t.Errorf("compute at 24%% with hot 25%%, warm 20%%: %s", l)
	}
}

func TestThreads(t *testing.T) {
	dot := mustDOT(t, modeltest.Sample(), render.Options{Threads: true})
	// thread numbers: 0 = tid 100, 1 = 101, 2 = 102, 3 = 200 (the fork child)
	for _, want := range []string{`0 = tid 100 (t100), pid 100, level 0`, `3 = tid 200 (t200), pid 200, level 0`} {
		if !strings.Contains(string(dot), want) {
			t.Errorf("legend lacks %q", want)
		}
	}
	if l := edgeLine(t, dot, "spawn_workers", "worker [L1]"); !strings.Contains(l, `spawn ×1\n0→1`) {
		t.Errorf("spawn 0→1: %s", l)
	}
	if l := edgeLine(t, dot, "spawn_more", "worker [L2]"); !strings.Contains(l, `spawn ×1\n1→2`) {
		t.Errorf("spawn 1→2: %s", l)
	}
	if l := edgeLine(t, dot, "do_fork", "main [L0]"); !strings.Contains(l, `fork ×1\n0→3`) {
		t.Errorf("fork 0→3: %s", l)
	}
	// fib -> fib is dissected: 2 recursive calls in thread 0, 1 in thread 3
	if l := edgeLine(t, dot, "fib", "fib"); !strings.Contains(l, `rc=3\n0: (2, 0ns, 0.00%) rc=2\n3: (1, 0ns, 0.00%) rc=1`) {
		t.Errorf("fib -> fib: %s", l)
	}
	// the thread shares add up to the edge
	if l := edgeLine(t, dot, "START", "main [L0]"); !strings.Contains(l, `(1, 1.13µs, 65.13%)\n0: (1, 990ns, 57.06%)\n3: (0, 140ns, 8.07%)`) {
		t.Errorf("START -> main: %s", l)
	}
	// composite: members numbered in order, spawns between members of one run
	dot = mustDOT(t, composite(t), render.Options{Threads: true})
	for _, want := range []string{`1 = tid 101 (t101), pid 100, level 1, run 0`, `2 = tid 102 (t102), pid 100, level 1, run 1`} {
		if !strings.Contains(string(dot), want) {
			t.Errorf("composite legend lacks %q", want)
		}
	}
	if l := edgeLine(t, dot, "spawn_workers", "worker [L1]"); !strings.Contains(l, `spawn ×1\n0→1`) {
		t.Errorf("composite spawn: %s", l)
	}
	if l := edgeLine(t, dot, "spawn_more", "worker [L1]"); !strings.Contains(l, `spawn ×1\n?→2`) {
		t.Errorf("composite spawn from another run: %s", l)
	}
}

func TestPruned(t *testing.T) {
	p := treeProfile(60, 50, 3, true)
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	dot := string(mustDOT(t, p, render.Options{}))
	elided := regexp.MustCompile(`-> n\d+ \[label="… \([^"]*", penwidth=[0-9.]+, style=bold\];`)
	if !elided.MatchString(dot) {
		t.Errorf("no elided edge marked in\n%s", dot)
	}
	if !strings.Contains(dot, ` pruned"`) {
		t.Errorf("no pruned time on nodes")
	}
	if !strings.Contains(dot, `\nrc=`) {
		t.Errorf("no recursive edge")
	}
}

func TestEscaping(t *testing.T) {
	b := modeltest.NewBuilder(`/opt/we"ird\dir/app`)
	pr := b.Process(9, model.None, "", 0)
	nasty := `std::map<std::string, int>::operator[](char const* "k\n") \N \l {lambda()#1}`
	b.Thread(pr, 9, 0, "", 0, nil, []modeltest.Step{
		{Dt: 1, Func: "main", Kind: model.KindDirect},
		{Dt: 1, Func: nasty, Kind: model.KindDirect}, {Dt: 5000},
		{Dt: 1, Func: `libstdc++.so.6:operator new(unsigned long)`, Kind: model.KindPLT}, {Dt: 100},
		{Dt: 1},
	})
	dot := mustDOT(t, b.P, render.Options{Title: `title "quoted" \ back`})
	if !strings.Contains(string(dot), `std::map<std::string, int>::operator[](char const* \"k\\n\") \\N \\l {lambda()#1}\n(1, 5.00µs,`) {
		t.Errorf("label not escaped:\n%s", dot)
	}
	svg, err := render.SVG(context.Background(), dot)
	if err != nil {
		t.Fatalf("graphviz rejects the escaped DOT: %v\n%s", err, dot)
	}
	for _, want := range []string{`std::map&lt;std::string, int&gt;::operator[](char const* &quot;k\n&quot;) \N \l {lambda()#1}`,
		`libstdc++.so.6:operator new(unsigned long)`, `title &quot;quoted&quot; \ back`} {
		if !strings.Contains(string(svg), want) {
			t.Errorf("SVG lacks %q", want)
		}
	}
}

func TestOptionErrors(t *testing.T) {
	p := modeltest.Sample()
	for _, o := range []render.Options{{Hot: 0.02, Warm: 0.05}, {Hot: 1.5}, {Warm: -0.1}, {Scope: model.Scope{Tid: 4242}},
		{Scope: model.Scope{Pid: 4242}}, {Scope: model.Scope{Pid: 200, Tid: 101}}} {
		if _, err := render.DOT(p, o); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
	if _, err := render.SVG(context.Background(), []byte("digraph { a -> ")); err == nil {
		t.Errorf("bad DOT accepted")
	}
}

func checkSVG(t *testing.T, svg []byte) {
	t.Helper()
	if len(svg) == 0 {
		t.Fatal("empty SVG")
	}
	dec := xml.NewDecoder(bytes.NewReader(svg))
	root := ""
	for {
		tok, err := dec.Token()
		if err != nil {
			t.Fatalf("SVG is not XML: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok {
			root = se.Name.Local
			break
		}
	}
	if root != "svg" {
		t.Fatalf("root element %q", root)
	}
	for {
		if _, err := dec.Token(); err != nil {
			if err.Error() != "EOF" {
				t.Fatalf("SVG is not well-formed: %v", err)
			}
			break
		}
	}
}

func TestSVGAndPNG(t *testing.T) {
	ctx := context.Background()
	for name, opt := range map[string]render.Options{"plain": {}, "threads": {Threads: true}} {
		dot := mustDOT(t, modeltest.Sample(), opt)
		svg, err := render.SVG(ctx, dot)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		checkSVG(t, svg)
		if !strings.Contains(string(svg), "worker [L1]") || !strings.Contains(string(svg), "fill=\"#404040\"") {
			t.Errorf("%s: SVG lacks labels or shading", name)
		}
		pngData, err := render.PNG(ctx, dot)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		img, err := png.Decode(bytes.NewReader(pngData))
		if err != nil {
			t.Fatalf("%s: PNG does not decode: %v", name, err)
		}
		if b := img.Bounds(); b.Dx() < 100 || b.Dy() < 100 {
			t.Errorf("%s: PNG of %v", name, b)
		}
	}
}

// TestLargeSVG renders a call graph of about 2,000 functions.
func TestLargeSVG(t *testing.T) {
	p := treeProfile(2000, 2000, 1, false)
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	dot := mustDOT(t, p, render.Options{})
	g := p.Graph(model.Scope{})
	if len(g.Nodes) < 1900 {
		t.Fatalf("only %d nodes", len(g.Nodes))
	}
	svg, err := render.SVG(context.Background(), dot)
	if err != nil {
		t.Fatal(err)
	}
	checkSVG(t, svg)
	if n := strings.Count(string(svg), `class="node"`); n != len(g.Nodes)+1 { // + legend
		t.Errorf("%d nodes drawn, want %d", n, len(g.Nodes)+1)
	}
}

// BenchmarkRenderPrunedSVG renders a pruned graph of 300 functions to SVG
// (DOT included). Goal: under 2 s.
func BenchmarkRenderPrunedSVG(b *testing.B) {
	p := treeProfile(330, 300, 2, true)
	if n := len(p.Graph(model.Scope{}).Nodes); n > 301 {
		b.Fatalf("%d nodes", n)
	}
	ctx := context.Background()
	if _, err := render.SVG(ctx, []byte("digraph { a }")); err != nil { // start graphviz
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		dot, err := render.DOT(p, render.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := render.SVG(ctx, dot); err != nil {
			b.Fatal(err)
		}
	}
}

// TestConcurrentRenders: the shared Graphviz instance is used by one
// render at a time.
func TestConcurrentRenders(t *testing.T) {
	dot := mustDOT(t, modeltest.Sample(), render.Options{Threads: true})
	errs := make(chan error, 6)
	for i := 0; i < 6; i++ {
		go func(i int) {
			var err error
			if i%2 == 0 {
				_, err = render.SVG(context.Background(), dot)
			} else {
				_, err = render.PNG(context.Background(), dot)
			}
			errs <- err
		}(i)
	}
	for i := 0; i < 6; i++ {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
