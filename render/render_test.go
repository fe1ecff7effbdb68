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
		"sample-wall":       {modeltest.Sample(), render.Options{Wall: true, ThreadShare: true}},
		// 300 functions: the 80 of largest total time, edges of 0.1% and more
		"elided": {treeProfile(320, 300, 4, false), render.Options{}},
		// C++ names: labels short, tooltips full (names_test.go)
		"cpp": {modeltest.CPP(), render.Options{}},
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
	// busy time: 1735 ns traced, usleep's 500 ns waiting left out: 1235 ns.
	// Nodes: self and total with their shares, calls; the heat scale by
	// self share: fib 135 ns (10.93%) hot, do_fork 40 ns (3.24%) warm,
	// spawn_more 10 ns (0.81%) pale.
	for name, want := range map[string]string{
		"fib":        `fib\nself 135ns (10.93%)\ntotal 135ns (10.93%)\n5 calls (3 recursive)", fillcolor="#d7301f", fontsize=15,`,
		"do_fork":    `do_fork\nself 40ns (3.24%)\ntotal 210ns (17.00%)\n1 call", fillcolor="#fc8d59", fontsize=12,`,
		"spawn_more": `spawn_more\nself 10ns (0.81%)\ntotal 25ns (2.02%)\n1 call", fillcolor="#fee8c8", fontsize=11,`,
		// the largest self share: the darkest fill drawn, white text, the largest font
		"compute": `compute\nself 420ns (34.01%)\ntotal 420ns (34.01%)\n2 calls", fillcolor="#d7301f", fontsize=18,`,
		// waiting: blue-grey, its wall time, never on the heat scale
		"libc.so.6:usleep": `libc.so.6:usleep\nwaiting 500ns (28.82% of wall)\n1 call", fillcolor="#c6d4e1", color="#5d7790",`,
		// a caller's waiting is out of its total, and said
		"main [L0]": `main [L0]\nself 80ns (6.48%)\ntotal 630ns (51.01%)\n+500ns waiting\n1 call", fillcolor="#fc8d59"`,
		"START":     `START\nself 135ns (10.93%)\ntotal 1.24µs", shape=ellipse, style="filled,bold",`,
	} {
		if l := nodeLine(t, dot, name); !strings.Contains(l, want) {
			t.Errorf("%s: %s\nwant %s", name, l, want)
		}
	}
	for _, n := range []string{"main [L0]", "worker [L1]", "worker [L2]", "worker"} {
		nodeLine(t, dot, n)
	}
	// tooltips: the full name, the module's path, busy and waiting times
	if l := nodeLine(t, dot, "libc.so.6:usleep"); !strings.Contains(l, `tooltip="usleep\nmodule /lib/libc.so.6\nself 0ns busy, 500ns waiting\ntotal 0ns busy, 500ns waiting\n1 call"`) {
		t.Errorf("usleep tooltip: %s", l)
	}
	// edges: calls, total time and share; recursion; waiting; kinds
	for _, c := range []struct{ from, to, want string }{
		{"fib", "fib", `[label="3× recursive", penwidth=1.00]`},
		{"main [L0]", "libc.so.6:usleep", `[label="1× waiting 500ns", penwidth=1.00, color="#5d7790"]`},
		{"main [L0]", "do_fork", `[label="1× 210ns (17.00%)", penwidth=2.67, color="#d7301f"]`},
		{"START", "main [L0]", `[label="1× 630ns (51.01%)\n+500ns waiting", penwidth=6.00, color="#b30000"]`},
		{"spawn_workers", "worker [L1]", `[label="spawn ×1", style=dashed]`},
		{"spawn_more", "worker [L2]", `[label="spawn ×1", style=dashed]`},
		{"do_fork", "main [L0]", `[label="fork ×1", style=dotted]`},
	} {
		if l := edgeLine(t, dot, c.from, c.to); !strings.Contains(l, c.want) {
			t.Errorf("%s -> %s: %s, want %s", c.from, c.to, l, c.want)
		}
	}
	if !strings.Contains(string(dot), "legend [shape=note") || !strings.Contains(string(dot), `heat8 [label="≥70.00%", fillcolor="#7f0000"`) {
		t.Errorf("no legend or heat scale")
	}
	// thresholds move the scale: worker (16.19%) below a warm 20%, pale
	dot = mustDOT(t, p, render.Options{Hot: 0.25, Warm: 0.2})
	if l := nodeLine(t, dot, "worker"); !strings.Contains(l, `fillcolor="#fdbb84"`) {
		t.Errorf("worker at 16%% with hot 25%%, warm 20%%: %s", l)
	}
}

// Wall time: shares of all traced time, waiting included, and the waiting
// calls still blue-grey, never hot.
func TestWallTime(t *testing.T) {
	dot := mustDOT(t, modeltest.Sample(), render.Options{Wall: true})
	for name, want := range map[string]string{
		"libc.so.6:usleep": `usleep\nself 500ns (28.82%)\ntotal 500ns (28.82%)\n1 call", fillcolor="#c6d4e1"`,
		"main [L0]":        `main [L0]\nself 80ns (4.61%)\ntotal 1.13µs (65.13%)\n1 call", fillcolor="#fc8d59"`,
		"compute":          `compute\nself 420ns (24.21%)\ntotal 420ns (24.21%)\n2 calls", fillcolor="#d7301f"`,
	} {
		if l := nodeLine(t, dot, name); !strings.Contains(l, want) {
			t.Errorf("%s: %s\nwant %s", name, l, want)
		}
	}
	if !strings.Contains(string(dot), `wall time, 500ns of it waiting (blue-grey)`) {
		t.Errorf("the title does not say wall time")
	}
}

// ThreadShare: a node's shares are of the one thread where they are
// largest: compute is 300 of thread 1's 353 ns (84.99%) and 120 of thread
// 2's 142 ns (84.51%); worker's 200 ns are of thread 0's busy 600 ns
// (1100 traced, 500 waiting).
func TestThreadShare(t *testing.T) {
	p := modeltest.Sample()
	dot := mustDOT(t, p, render.Options{ThreadShare: true})
	for name, want := range map[string]string{
		"compute": `compute\nself 420ns (84.99% of #1)\ntotal 420ns (84.99% of #1)\n2 calls", fillcolor="#7f0000", fontcolor=white`,
		"worker":  `worker\nself 200ns (33.33% of #0)\ntotal 200ns (33.33% of #0)`,
	} {
		if l := nodeLine(t, dot, name); !strings.Contains(l, want) {
			t.Errorf("%s: %s\nwant %s", name, l, want)
		}
	}
	if !strings.Contains(string(dot), "(x% of #N): of thread N's time") {
		t.Errorf("the legend does not explain thread shares")
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
	if l := edgeLine(t, dot, "fib", "fib"); !strings.Contains(l, `3× recursive\n0: (2, 0ns, 0.00%) rc=2\n3: (1, 0ns, 0.00%) rc=1`) {
		t.Errorf("fib -> fib: %s", l)
	}
	// the thread shares (wall time) add up to the edge
	if l := edgeLine(t, dot, "START", "main [L0]"); !strings.Contains(l, `1× 630ns (51.01%)\n+500ns waiting\n0: (1, 990ns, 57.06%)\n3: (0, 140ns, 8.07%)`) {
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
	dot := string(mustDOT(t, p, render.Options{NodeCount: -1, EdgeFraction: -1}))
	elided := regexp.MustCompile(`-> n\d+ \[label="… \d+× [^"]*", penwidth=[0-9.]+(, color="[^"]*")?, style=bold\];`)
	if !elided.MatchString(dot) {
		t.Errorf("no elided edge marked in\n%s", dot)
	}
	if !regexp.MustCompile(`\\n\+[0-9.]+µs pruned", `).MatchString(dot) {
		t.Errorf("no pruned time on nodes")
	}
	if !strings.Contains(dot, `× recursive"`) {
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
	// full names: the whole nasty name in the label
	dot := mustDOT(t, b.P, render.Options{Title: `title "quoted" \ back`, FullNames: true})
	// the name wrapped after "(", escaped in the label
	if !strings.Contains(string(dot), `[label="std::map<std::string, int>::operator[](\nchar const* \"k\\n\") \\N \\l {lambda()#1}\nself 5.00µs`) {
		t.Errorf("label not escaped:\n%s", dot)
	}
	svg, err := render.SVG(context.Background(), dot)
	if err != nil {
		t.Fatalf("graphviz rejects the escaped DOT: %v\n%s", err, dot)
	}
	for _, want := range []string{`>std::map&lt;std::string, int&gt;::operator[](</text>`, `>char const* &quot;k\n&quot;) \N \l {lambda()#1}</text>`,
		// the tooltip: the whole name on one line, backslashes shown as ∖
		`xlink:title="std::map&lt;std::string, int&gt;::operator[](char const* &quot;k∖n&quot;) ∖N ∖l {lambda()#1}&#10;module /opt/we&quot;ird∖dir/app&#10;`,
		`>libstdc++.so.6:operator new(unsigned</text>`, `>long)</text>`, `title &quot;quoted&quot; \ back`} {
		if !strings.Contains(string(svg), want) {
			t.Errorf("SVG lacks %q", want)
		}
	}
}

func TestOptionErrors(t *testing.T) {
	p := modeltest.Sample()
	for _, o := range []render.Options{{Hot: 0.02, Warm: 0.05}, {Hot: 1.5}, {Warm: -0.1}, {EdgeFraction: 1.5}, {Scope: model.Scope{Tid: 4242}},
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
		if !strings.Contains(string(svg), "worker [L1]") || !strings.Contains(string(svg), "fill=\"#d7301f\"") {
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

// TestLargeSVG renders a call graph of about 2,000 functions, all of them
// (NodeCount -1, EdgeFraction -1).
func TestLargeSVG(t *testing.T) {
	p := treeProfile(2000, 2000, 1, false)
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	dot := mustDOT(t, p, render.Options{NodeCount: -1, EdgeFraction: -1})
	g := p.Graph(model.Scope{})
	if len(g.Nodes) < 1900 {
		t.Fatalf("only %d nodes", len(g.Nodes))
	}
	svg, err := render.SVG(context.Background(), dot)
	if err != nil {
		t.Fatal(err)
	}
	checkSVG(t, svg)
	if n := strings.Count(string(svg), `class="node"`); n != len(g.Nodes)+legendNodes {
		t.Errorf("%d nodes drawn, want %d", n, len(g.Nodes)+legendNodes)
	}
}

// legendNodes are the nodes of the legend: its note and the heat scale's
// nine swatches and the waiting one.
const legendNodes = 11

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
