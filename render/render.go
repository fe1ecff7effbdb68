// Package render draws a profile's function-level call graph (DESIGN §2.4,
// §4) as annotated DOT, and DOT as SVG or PNG through go-graphviz, which
// embeds Graphviz as WebAssembly (no system Graphviz needed).
//
// The drawing, gprof2dot-like:
//
//   - one node per function (a thread's first subroutine once per nesting
//     level, labelled "worker [L1]"), labelled with its name (module:name
//     for library functions) and its vector (calls, self time, self %);
//     a START node (ellipse) is the root of every thread;
//   - nodes whose self coverage is at least Hot are filled dark grey with
//     white text, at least Warm light grey (START is never shaded);
//   - call edges labelled (calls, total time, total %), with "rc=N" when
//     N of the calls were recursive, drawn thicker the more time they
//     carry; spawn edges dashed ("spawn ×N"), fork edges dotted
//     ("fork ×N"); elided edges (prune reconnected a function to its
//     nearest kept ancestor) bold with the label starting with "…";
//   - with Threads, every call edge lists one line per thread
//     "T: (calls, total, %)" and spawn and fork edges the seed's "0→1"
//     (thread T0 spawned thread T1), where thread numbers are
//     model.ThreadNumbers': the position of the (member) thread in the
//     profile, Profile.Threads in order, a composite thread's members in
//     order. The legend maps
//     numbers to tids and names;
//   - with Diff, nodes are coloured by change from a base profile instead
//     of shaded (red slower, blue faster, grey unchanged; diff.go);
//   - a legend node explains all this, and the graph is titled.
//
// Percentages are of the scope's traced time. Times have three
// significant digits. The DOT is deterministic: nodes sorted by name,
// edges by their ends.
package render

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/goccy/go-graphviz"
	"github.com/goccy/go-graphviz/gvc"

	"github.com/profile-dev/profile/diff"
	"github.com/profile-dev/profile/internal/human"
	"github.com/profile-dev/profile/model"
)

// Default shading thresholds: fractions of the scope's traced time.
const (
	DefaultHot  = 0.10
	DefaultWarm = 0.03
)

// Fill colours of the shading tiers.
const (
	hotFill  = "#404040" // dark grey, white text
	warmFill = "#d3d3d3" // light grey
)

// Options control DOT.
type Options struct {
	Hot     float64     // self coverage (0-1) from which a node is dark grey; 0 means DefaultHot
	Warm    float64     // self coverage (0-1) from which a node is light grey; 0 means DefaultWarm
	Threads bool        // dissect edges into per-thread vectors
	Scope   model.Scope // one process or thread; zero for the whole profile
	Title   string      // graph title; empty for one made from the profile
	// Diff colours the nodes by change from a base profile instead of
	// shading them by coverage (diff.go); nil for none.
	Diff *diff.Result
}

// DOT renders the call graph of p as Graphviz DOT.
func DOT(p *model.Profile, opt Options) ([]byte, error) {
	if p == nil {
		return nil, errors.New("render: no profile")
	}
	if opt.Hot == 0 {
		opt.Hot = DefaultHot
	}
	if opt.Warm == 0 {
		opt.Warm = DefaultWarm
	}
	if opt.Hot < 0 || opt.Hot > 1 || opt.Warm < 0 || opt.Warm > 1 {
		return nil, fmt.Errorf("render: thresholds must lie between 0%% and 100%% (hot %g, warm %g)", opt.Hot, opt.Warm)
	}
	if opt.Warm > opt.Hot {
		return nil, fmt.Errorf("render: the warm threshold (%s) is above the hot one (%s)",
			human.Percent(100*opt.Warm), human.Percent(100*opt.Hot))
	}
	threads := p.ThreadNumbers()
	inScope := threads.InScope(opt.Scope)
	if opt.Scope != (model.Scope{}) && len(inScope) == 0 {
		return nil, scopeError(opt.Scope)
	}
	g := p.Graph(opt.Scope)
	d := &drawer{p: p, g: g, opt: opt, threads: threads}
	d.number()
	d.header(inScope)
	d.nodes()
	d.edges()
	d.legend(inScope)
	d.b.WriteString("}\n")
	return d.b.Bytes(), nil
}

func scopeError(s model.Scope) error {
	switch {
	case s.Pid != 0 && s.Tid != 0:
		return fmt.Errorf("no thread %d in process %d in the profile", s.Tid, s.Pid)
	case s.Tid != 0:
		return fmt.Errorf("no thread %d in the profile", s.Tid)
	default:
		return fmt.Errorf("no process %d in the profile", s.Pid)
	}
}

type drawer struct {
	p       *model.Profile
	g       *model.Graph
	opt     Options
	threads *model.ThreadNumbers
	id      []int // graph node -> DOT node number, in sorted order
	order   []int // DOT node number -> graph node
	b       bytes.Buffer
}

// number sorts the nodes: START first, then by display name, level and
// function index.
func (d *drawer) number() {
	n := len(d.g.Nodes)
	names := make([]string, n)
	for i, gn := range d.g.Nodes {
		names[i] = d.p.FuncName(gn.Key.Func)
	}
	d.order = make([]int, n)
	for i := range d.order {
		d.order[i] = i
	}
	sort.SliceStable(d.order, func(a, b int) bool {
		x, y := d.order[a], d.order[b]
		kx, ky := d.g.Nodes[x].Key, d.g.Nodes[y].Key
		if (kx.Func == model.StartFunc) != (ky.Func == model.StartFunc) {
			return kx.Func == model.StartFunc
		}
		if names[x] != names[y] {
			return names[x] < names[y]
		}
		if kx.Level != ky.Level {
			return kx.Level < ky.Level
		}
		return kx.Func < ky.Func
	})
	d.id = make([]int, n)
	for i, x := range d.order {
		d.id[x] = i
	}
}

// quote makes s, built from text() pieces and label escapes (\n, \l), a
// DOT double-quoted string.
func quote(s string) string { return `"` + s + `"` }

// text escapes literal text for a DOT label: backslashes (which would
// start escapes such as \n or \N) and quotes; line breaks become spaces.
func text(s string) string {
	var b strings.Builder
	for _, c := range s {
		switch c {
		case '\\':
			b.WriteString(`\\`)
		case '"':
			b.WriteString(`\"`)
		case '\n', '\r':
			b.WriteByte(' ')
		default:
			b.WriteRune(c)
		}
	}
	return b.String()
}

func pct(cov float64) string { return human.Percent(100 * cov) }

func (d *drawer) header(inScope []model.NumberedThread) {
	title := d.opt.Title
	if title == "" {
		m := d.p.Meta
		exe := m.Exe
		if exe == "" && len(m.Command) > 0 {
			exe = m.Command[0]
		}
		title = fmt.Sprintf("%s: traced %s in %d thread", orDash(exe), human.Duration(d.g.TracedNs), len(inScope))
		if len(inScope) != 1 {
			title += "s"
		}
		switch s := d.opt.Scope; {
		case s.Pid != 0 && s.Tid != 0:
			title += fmt.Sprintf(" (pid %d, tid %d)", s.Pid, s.Tid)
		case s.Pid != 0:
			title += fmt.Sprintf(" (pid %d)", s.Pid)
		case s.Tid != 0:
			title += fmt.Sprintf(" (tid %d)", s.Tid)
		}
		if m.Partial {
			title += ", partial"
		}
		if m.Sampled() {
			title += "; values " + m.Values()
		}
	}
	fmt.Fprintf(&d.b, "digraph profile {\n")
	fmt.Fprintf(&d.b, "  graph [label=\"%s\", labelloc=t, fontname=\"Helvetica\", fontsize=14, charset=\"UTF-8\", ranksep=0.4, nodesep=0.3];\n", text(title))
	d.b.WriteString("  node [shape=box, style=filled, fillcolor=white, fontname=\"Helvetica\", fontsize=10];\n")
	d.b.WriteString("  edge [fontname=\"Helvetica\", fontsize=9];\n")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func (d *drawer) nodes() {
	for i, x := range d.order {
		gn := &d.g.Nodes[x]
		name := text(d.p.FuncName(gn.Key.Func))
		if gn.Key.Level != model.None {
			name += fmt.Sprintf(" [L%d]", gn.Key.Level)
		}
		cov := d.g.Coverage(gn.SelfNs)
		label := fmt.Sprintf(`%s\n(%d, %s, %s)`, name, gn.Calls, human.Duration(gn.SelfNs), pct(cov))
		if gn.DroppedNs > 0 {
			label += fmt.Sprintf(`\n+%s pruned`, human.Duration(gn.DroppedNs))
		}
		var attrs []string
		switch {
		case gn.Key.Func == model.StartFunc:
			attrs = append(attrs, "shape=ellipse", `style="filled,bold"`)
		case d.opt.Diff != nil:
			fill, line := d.diffNode(gn.Key.Func)
			attrs, label = fill, label+`\n`+text(line)
		case cov >= d.opt.Hot:
			attrs = append(attrs, `fillcolor="`+hotFill+`"`, "fontcolor=white")
		case cov >= d.opt.Warm:
			attrs = append(attrs, `fillcolor="`+warmFill+`"`)
		}
		attrs = append([]string{"label=" + quote(label)}, attrs...)
		fmt.Fprintf(&d.b, "  n%d [%s];\n", i, strings.Join(attrs, ", "))
	}
}

// vec formats an edge or thread vector.
func (d *drawer) vec(calls, total int64) string {
	return fmt.Sprintf("(%d, %s, %s)", calls, human.Duration(total), pct(d.g.Coverage(total)))
}

func (d *drawer) edges() {
	idx := make([]int, len(d.g.Edges))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool {
		x, y := &d.g.Edges[idx[a]], &d.g.Edges[idx[b]]
		if d.id[x.From] != d.id[y.From] {
			return d.id[x.From] < d.id[y.From]
		}
		if d.id[x.To] != d.id[y.To] {
			return d.id[x.To] < d.id[y.To]
		}
		return x.Kind < y.Kind
	})
	for _, ei := range idx {
		e := &d.g.Edges[ei]
		var lines, attrs []string
		switch e.Kind {
		case model.EdgeCall:
			cov := d.g.Coverage(e.TotalNs)
			v := d.vec(e.Calls, e.TotalNs)
			if e.Elided {
				v = "… " + v
			}
			lines = append(lines, v)
			if e.RecursiveCalls > 0 {
				lines = append(lines, fmt.Sprintf("rc=%d", e.RecursiveCalls))
			}
			if d.opt.Threads {
				for _, tv := range e.Threads {
					l := model.ThreadLabel(d.threads.Number(tv.Ref)) + ": " + d.vec(tv.Calls, tv.TotalNs)
					if tv.RecursiveCalls > 0 {
						l += fmt.Sprintf(" rc=%d", tv.RecursiveCalls)
					}
					lines = append(lines, l)
				}
			}
			attrs = append(attrs, "penwidth="+strconv.FormatFloat(1+4*min(cov, 1), 'f', 2, 64))
			if e.Elided {
				attrs = append(attrs, "style=bold")
			}
		case model.EdgeSpawn, model.EdgeFork:
			lines = append(lines, fmt.Sprintf("%s ×%d", e.Kind, e.Calls))
			if d.opt.Threads {
				for _, tv := range e.Threads {
					n := d.threads.Number(tv.Ref)
					lines = append(lines, model.CreationLabel(d.threads.Creator(n, e.Kind), n))
				}
			}
			if e.Kind == model.EdgeSpawn {
				attrs = append(attrs, "style=dashed")
			} else {
				attrs = append(attrs, "style=dotted")
			}
		}
		label := strings.Join(lines, `\n`)
		attrs = append([]string{"label=" + quote(label)}, attrs...)
		fmt.Fprintf(&d.b, "  n%d -> n%d [%s];\n", d.id[e.From], d.id[e.To], strings.Join(attrs, ", "))
	}
}

func (d *drawer) legend(inScope []model.NumberedThread) {
	l := []string{
		"Legend",
		"node: function (calls, self time, self %)",
		"edge: (calls, total time, total %)   rc=N: N recursive calls",
		"% of the traced time " + human.Duration(d.g.TracedNs),
		"[Ln]: first subroutine of threads at nesting level n",
		d.shadingLegend(),
		"dashed: spawn   dotted: fork   bold, …: elided (pruned contexts between)",
	}
	if d.opt.Threads {
		l = append(l, "threads: T: (calls, total, %) per thread   A→B: thread A created thread B")
		for _, t := range inScope {
			s := fmt.Sprintf("%d = tid %d (%s), pid %d, level %d", t.Number, t.Tid, orDash(t.Name), t.Pid, t.Level)
			if t.Member != model.None {
				s += fmt.Sprintf(", run %d", t.Run)
			}
			l = append(l, s)
		}
	}
	for i := range l {
		l[i] = text(l[i])
	}
	fmt.Fprintf(&d.b, "  legend [shape=note, fillcolor=\"#f8f8f8\", fontsize=9, label=\"%s\\l\"];\n", strings.Join(l, `\l`))
}

// shadingLegend explains the nodes' fill colours.
func (d *drawer) shadingLegend() string {
	if d.opt.Diff != nil {
		return diffLegend()
	}
	return fmt.Sprintf("dark grey: self ≥ %s   light grey: self ≥ %s", pct(d.opt.Hot), pct(d.opt.Warm))
}

// The WebAssembly Graphviz is one module for the whole process, not safe
// for concurrent use: renders are serialised and share one instance.
var (
	gvMu sync.Mutex
	gv   *graphviz.Graphviz
)

func renderDOT(ctx context.Context, dot []byte, format graphviz.Format) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	gvMu.Lock()
	defer gvMu.Unlock()
	if gv == nil {
		g, err := newGraphviz(ctx)
		if err != nil {
			return nil, fmt.Errorf("start graphviz: %w", err)
		}
		gv = g
	}
	graph, err := graphviz.ParseBytes(dot)
	if err != nil {
		return nil, fmt.Errorf("parse DOT: %w", err)
	}
	defer graph.Close()
	var buf bytes.Buffer
	if err := gv.Render(ctx, graph, format, &buf); err != nil {
		return nil, fmt.Errorf("render %s: %w", format, err)
	}
	if buf.Len() == 0 {
		return nil, fmt.Errorf("render %s: graphviz produced nothing", format)
	}
	return buf.Bytes(), nil
}

// newGraphviz starts Graphviz with go-graphviz's PNG renderer patched:
// its bridge reports every bezier as filled (edges came out as solid
// wedges) and it fills shapes without drawing their outline. Every shape
// this package draws is filled (nodes, the legend, arrowheads), and no
// curve is.
func newGraphviz(ctx context.Context) (*graphviz.Graphviz, error) {
	engine := pngEngine{&gvc.ImageRenderer{DefaultRenderEngine: new(gvc.DefaultRenderEngine)}}
	rp, err := gvc.NewRenderPlugin(ctx, "png", engine)
	if err != nil {
		return nil, err
	}
	dp, err := gvc.PNGDevicePlugin(ctx)
	if err != nil {
		return nil, err
	}
	lp, err := gvc.PNGLoadImagePlugin(ctx, engine)
	if err != nil {
		return nil, err
	}
	return graphviz.NewWithPlugins(ctx, rp, dp, lp)
}

type pngEngine struct{ *gvc.ImageRenderer }

func (e pngEngine) BezierCurve(ctx context.Context, job *gvc.Job, a []*gvc.PointFloat, _ bool) error {
	return e.ImageRenderer.BezierCurve(ctx, job, a, false)
}

func (e pngEngine) Polygon(ctx context.Context, job *gvc.Job, a []*gvc.PointFloat, _ bool) error {
	if err := e.ImageRenderer.Polygon(ctx, job, a, true); err != nil {
		return err
	}
	return e.ImageRenderer.Polygon(ctx, job, a, false)
}

func (e pngEngine) Ellipse(ctx context.Context, job *gvc.Job, a []*gvc.PointFloat, _ bool) error {
	if err := e.ImageRenderer.Ellipse(ctx, job, a, true); err != nil {
		return err
	}
	return e.ImageRenderer.Ellipse(ctx, job, a, false)
}

// SVG lays out DOT with Graphviz's dot and returns SVG.
func SVG(ctx context.Context, dot []byte) ([]byte, error) { return renderDOT(ctx, dot, graphviz.SVG) }

// PNG lays out DOT with Graphviz's dot and returns a PNG image.
func PNG(ctx context.Context, dot []byte) ([]byte, error) { return renderDOT(ctx, dot, graphviz.PNG) }
