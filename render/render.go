// Package render draws a profile's function-level call graph
// (docs/render.md) as annotated DOT, and DOT as SVG or PNG through
// go-graphviz, which embeds Graphviz as WebAssembly (no system Graphviz
// needed).
//
// The drawing, pprof- and gprof2dot-like, made to stay readable on large
// programs:
//
//   - one node per function, labelled with its name (module:name for
//     library functions; C++ and Rust names shortened by names.Short
//     unless FullNames, the tooltip keeping the full name; long names
//     wrapped), its self and total
//     (inclusive) time with their shares, and its calls; the box is sized
//     to its label (label.go). A thread's first subroutine is drawn once
//     per nesting level ("worker [L1]"); without Threads a library
//     function's level copies are folded into one node. START (an
//     ellipse) is the root of every thread;
//   - only the NodeCount functions of largest total time are drawn, and
//     only the call edges carrying at least EdgeFraction of the time (by
//     default only in a graph of more functions than that: a small one is
//     drawn whole; select.go); the title says what was left out;
//   - times are busy time by default: the waiting calls of
//     model.WaitingCalls (a thread blocked in pthread_cond_wait, read,
//     epoll_wait, ...) and the waiting inside callers' totals are taken
//     out, and shares are of the scope's busy time; with Wall, of its
//     traced wall time. Waiting calls are filled blue-grey and never take
//     the heat colours. A profile with CPU samples (record --sample) has
//     its busy times from them (model.Profile.Busy): every time is CPU
//     time, a waiting call's too, which takes the heat colours like any
//     other, and the title says how the samples were taken;
//   - nodes are filled on a heat scale from pale to dark red by their self
//     share, Warm and Hot marking its middle and its red end, with a font
//     growing with the self share (heat.go); with ThreadShare the shares
//     are of one thread's time, the thread where the function's is
//     largest, so that a function keeping one of many threads busy reads
//     as hot;
//   - call edges labelled "N× total (share)", "N× recursive" when every
//     call was recursive (their time is inside the outer call), drawn
//     wider the more time they carry; spawn edges dashed ("spawn ×N"),
//     fork edges dotted ("fork ×N"); elided edges (prune reconnected a
//     function to its nearest kept ancestor) bold with a leading "…";
//   - with Threads, every call edge lists one line per thread
//     "T: (calls, total, %)" (wall time; the sampled CPU time with CPU
//     samples) and spawn and fork edges the
//     "0→1" (thread T0 spawned thread T1), where thread numbers are
//     model.ThreadNumbers'; the legend maps numbers to tids and names;
//   - with Diff, nodes are coloured by change from a base profile instead
//     of by heat (red slower, blue faster, grey unchanged; diff.go);
//   - every node has a tooltip (SVG) with the full name, the module's path
//     and its busy and waiting times; a legend explains the drawing
//     (legend.go), and the graph is titled;
//   - a graph that would be too wide top-down is laid out left to right
//     (layout.go).
//
// docs/render.md is the user's account of all this.
//
// Times have three significant digits. The DOT is deterministic: nodes
// sorted by name, edges by their ends.
package render

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/profile-dev/profile/diff"
	"github.com/profile-dev/profile/internal/human"
	"github.com/profile-dev/profile/model"
)

// Defaults of Options.
const (
	DefaultHot          = 0.10  // self share from which a node takes the red end of the heat scale
	DefaultWarm         = 0.03  // self share from which a node is orange, the scale's middle
	DefaultNodeCount    = 80    // functions drawn
	DefaultEdgeFraction = 0.001 // share of the time under which a call edge is dropped
)

// Options control DOT. Their zero value is the default drawing.
type Options struct {
	Hot     float64     // self share (0-1) from which a node is red; 0 means DefaultHot
	Warm    float64     // self share (0-1) from which a node is orange; 0 means DefaultWarm
	Threads bool        // dissect edges into per-thread vectors
	Scope   model.Scope // one process or thread; zero for the whole profile
	Title   string      // graph title; empty for one made from the profile
	// Diff colours the nodes by change from a base profile instead of
	// by heat (diff.go); nil for none.
	Diff *diff.Result
	// NodeCount draws only the NodeCount functions of largest total time
	// (START aside); 0 means DefaultNodeCount, negative every function.
	NodeCount int
	// EdgeFraction drops the call edges whose total time is under this
	// fraction of the scope's traced time (recursive edges, spawns and
	// forks are kept); negative means none, 0 DefaultEdgeFraction in a
	// graph of more than NodeCount functions and none in a smaller one,
	// which is drawn whole.
	EdgeFraction float64
	// Wall makes times and shares wall time, waiting included; by
	// default they are busy time (the waiting calls' time taken out, or
	// the CPU samples' times when the profile has them).
	Wall bool
	// ThreadShare makes a node's shares those of one thread's time: the
	// (member) thread where its share is largest, named by its number.
	ThreadShare bool
	// FullNames labels nodes with full function names; by default C++
	// and Rust names are shortened (names.Short). Tooltips and the order
	// of nodes always go by the full name.
	FullNames bool
}

// DOT renders the call graph of p as Graphviz DOT.
func DOT(p *model.Profile, opt Options) ([]byte, error) {
	if p == nil {
		return nil, errors.New("render: no profile")
	}
	opt.Hot = cmpOr(opt.Hot, DefaultHot)
	opt.Warm = cmpOr(opt.Warm, DefaultWarm)
	if opt.NodeCount == 0 {
		opt.NodeCount = DefaultNodeCount
	}
	if opt.Hot < 0 || opt.Hot > 1 || opt.Warm < 0 || opt.Warm > 1 {
		return nil, fmt.Errorf("render: thresholds must lie between 0%% and 100%% (hot %g, warm %g)", opt.Hot, opt.Warm)
	}
	if opt.Warm > opt.Hot {
		return nil, fmt.Errorf("render: the warm threshold (%s) is above the hot one (%s)",
			human.Percent(100*opt.Warm), human.Percent(100*opt.Hot))
	}
	if opt.EdgeFraction > 1 || math.IsNaN(opt.EdgeFraction) {
		return nil, fmt.Errorf("render: the edge fraction must lie between 0 and 1 (got %g)", opt.EdgeFraction)
	}
	threads := p.ThreadNumbers()
	inScope := threads.InScope(opt.Scope)
	if opt.Scope != (model.Scope{}) && len(inScope) == 0 {
		return nil, opt.Scope.NotFound()
	}
	v := newView(p, opt, threads)
	d := &drawer{v: v, p: p, opt: opt, threads: threads, inScope: inScope, sel: v.choose(opt)}
	d.number()
	d.prepareNodes()
	d.prepareEdges()
	d.header(inScope, d.direction())
	for i, b := range d.boxes {
		fmt.Fprintf(&d.b, "  n%d [%s];\n", i, strings.Join(b.attrs, ", "))
	}
	for _, e := range d.lines {
		ve := &v.edges[e.edge]
		fmt.Fprintf(&d.b, "  n%d -> n%d [%s];\n", d.id[ve.from], d.id[ve.to], strings.Join(e.attrs, ", "))
	}
	d.legend()
	d.b.WriteString("}\n")
	return d.b.Bytes(), nil
}

// cmpOr is v, or def when v is 0; negative values stay (they mean none).
func cmpOr(v, def float64) float64 {
	if v == 0 {
		return def
	}
	return v
}

type drawer struct {
	v       *view
	p       *model.Profile
	opt     Options
	threads *model.ThreadNumbers
	inScope []model.NumberedThread
	sel     selection
	id      []int // view node -> DOT node number (-1: not drawn)
	order   []int // DOT node number -> view node
	boxes   []box // by DOT node number
	lines   []edgeLine
	legendW float64 // the legend's width, inches
	b       bytes.Buffer
}

// box is a drawn node: its DOT attributes and size in inches.
type box struct {
	attrs []string
	w, h  float64
}

// edgeLine is a drawn edge: its DOT attributes and its label's size in
// inches.
type edgeLine struct {
	edge  int // view edge
	attrs []string
	w, h  float64
}

// number sorts the drawn nodes: START first, then by display name, level
// and function index.
func (d *drawer) number() {
	v := d.v
	names := make([]string, len(v.nodes))
	for i, n := range v.nodes {
		names[i] = d.p.FuncName(n.key.Func)
	}
	d.order = d.order[:0]
	for i := range v.nodes {
		if d.sel.node[i] {
			d.order = append(d.order, i)
		}
	}
	sort.SliceStable(d.order, func(a, b int) bool {
		x, y := d.order[a], d.order[b]
		kx, ky := v.nodes[x].key, v.nodes[y].key
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
	d.id = make([]int, len(v.nodes))
	for i := range d.id {
		d.id[i] = -1
	}
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

// tooltip escapes lines for a DOT tooltip, one per line. Graphviz
// expands escapes such as \N in tooltips even after a doubled backslash
// (and an XML reference to one), so a backslash, which no symbol and
// hardly a path holds, is shown as the look-alike "∖".
func tooltip(ls []string) string {
	esc := make([]string, len(ls))
	for i, l := range ls {
		esc[i] = text(strings.ReplaceAll(l, `\`, "∖"))
	}
	return strings.Join(esc, `\n`)
}

// lines escapes each line and joins them as a centred DOT label.
func lines(ls []string) string {
	esc := make([]string, len(ls))
	for i, l := range ls {
		esc[i] = text(l)
	}
	return strings.Join(esc, `\n`)
}

func pct(share float64) string { return human.Percent(100 * share) }

func (d *drawer) header(inScope []model.NumberedThread, rankdir string) {
	title := d.opt.Title
	if title == "" {
		m := d.p.Meta
		exe := m.Exe
		if exe == "" && len(m.Command) > 0 {
			exe = m.Command[0]
		}
		title = fmt.Sprintf("%s: traced %s in %d thread", orDash(exe), human.Duration(d.v.tracedNs), len(inScope))
		if len(inScope) != 1 {
			title += "s"
		}
		if s := d.opt.Scope.String(); s != "" {
			title += " (" + s + ")"
		}
		if m.Partial {
			title += ", partial"
		}
		if m.Sampled() {
			title += "; values " + m.Values()
		}
	}
	ls := append([]string{title, d.v.basisLine()}, d.sel.elided(d.opt)...)
	fmt.Fprintf(&d.b, "digraph profile {\n")
	fmt.Fprintf(&d.b, "  graph [label=\"%s\", labelloc=t, fontname=\"Helvetica\", fontsize=14, charset=\"UTF-8\", rankdir=%s, ranksep=%g, nodesep=%g];\n",
		lines(ls), rankdir, rankSep, nodeSep)
	d.b.WriteString("  node [shape=box, style=filled, fillcolor=white, fontname=\"Helvetica\", fontsize=10, margin=\"0.08,0.04\"];\n")
	fmt.Fprintf(&d.b, "  edge [fontname=\"Helvetica\", fontsize=%d, color=\"%s\", fontcolor=\"#303030\"];\n", edgeFont, edgeGrey)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// prepareNodes makes the drawn nodes' attributes and sizes.
func (d *drawer) prepareNodes() {
	maxSelf := d.v.maxSelfShare(d.sel)
	for _, x := range d.order {
		n := &d.v.nodes[x]
		ls := d.v.label(n)
		var attrs []string
		size := 10.0
		switch {
		case n.key.Func == model.StartFunc:
			attrs = append(attrs, "shape=ellipse", `style="filled,bold"`)
		case d.opt.Diff != nil:
			fill, line := d.diffNode(n.key.Func)
			attrs, ls = fill, append(ls, line)
		case n.waiting:
			attrs = append(attrs, `fillcolor="`+waitFill+`"`, `color="`+waitLine+`"`)
		default:
			attrs = append(attrs, HeatFill(n.selfShare, d.opt.Warm, d.opt.Hot))
			size = fontSize(n.selfShare, maxSelf)
		}
		if size != 10 {
			attrs = append(attrs, fmt.Sprintf("fontsize=%g", size))
		}
		w, h := boxWidth(ls, size), boxHeight(ls, size)
		if n.key.Func == model.StartFunc {
			w, h = w*math.Sqrt2, h*math.Sqrt2 // an ellipse around the label's box
		}
		attrs = append([]string{"label=" + quote(lines(ls))}, attrs...)
		attrs = append(attrs, fmt.Sprintf("width=%.2f", w), "tooltip="+quote(tooltip(d.v.tooltip(n))))
		d.boxes = append(d.boxes, box{attrs: attrs, w: w, h: h})
	}
}

// prepareEdges makes the drawn edges' attributes and label sizes, sorted
// by their ends.
func (d *drawer) prepareEdges() {
	v := d.v
	idx := d.sel.edges
	sort.Slice(idx, func(a, b int) bool {
		x, y := &v.edges[idx[a]], &v.edges[idx[b]]
		if d.id[x.from] != d.id[y.from] {
			return d.id[x.from] < d.id[y.from]
		}
		if d.id[x.to] != d.id[y.to] {
			return d.id[x.to] < d.id[y.to]
		}
		return x.kind < y.kind
	})
	maxTotal := int64(1)
	for _, ei := range idx {
		if e := &v.edges[ei]; e.kind == model.EdgeCall {
			maxTotal = max(maxTotal, v.edgeTotal(e))
		}
	}
	for _, ei := range idx {
		e := &v.edges[ei]
		var ls, attrs []string
		switch e.kind {
		case model.EdgeCall:
			ls = append(ls, v.edgeLabel(e)...)
			if e.RecursiveCalls > 0 && e.RecursiveCalls < e.Calls {
				ls = append(ls, fmt.Sprintf("rc=%d", e.RecursiveCalls))
			}
			if d.opt.Threads {
				ls = append(ls, d.threadLines(e)...)
			}
			total := v.edgeTotal(e)
			attrs = append(attrs, fmt.Sprintf("penwidth=%.2f", 1+5*float64(total)/float64(maxTotal)))
			switch {
			case e.wait > 0 && 2*e.wait >= e.TotalNs:
				attrs = append(attrs, `color="`+waitLine+`"`)
			case d.opt.Diff == nil:
				if c := edgeColor(v.share(total), d.opt.Warm, d.opt.Hot); c != edgeGrey {
					attrs = append(attrs, `color="`+c+`"`)
				}
			}
			if e.elided {
				attrs = append(attrs, "style=bold")
			}
			if e.minlen > 1 {
				attrs = append(attrs, fmt.Sprintf("minlen=%d", e.minlen))
			}
		case model.EdgeSpawn, model.EdgeFork:
			ls = append(ls, fmt.Sprintf("%s ×%d", e.kind, e.Calls))
			if d.opt.Threads {
				for _, tv := range e.threads {
					n := d.threads.Number(tv.Ref)
					ls = append(ls, model.CreationLabel(d.threads.Creator(n, e.kind), n))
				}
			}
			if e.kind == model.EdgeSpawn {
				attrs = append(attrs, "style=dashed")
			} else {
				attrs = append(attrs, "style=dotted")
			}
		}
		attrs = append([]string{"label=" + quote(lines(ls))}, attrs...)
		d.lines = append(d.lines, edgeLine{edge: ei, attrs: attrs, w: boxWidth(ls, edgeFont) - boxMargin, h: boxHeight(ls, edgeFont)})
	}
}

// threadLines dissects call edge e by thread: "T: (calls, total, %)",
// times of the drawn graph (wall, or sampled CPU time) and shares of its
// traced time.
func (d *drawer) threadLines(e *vedge) []string {
	var ls []string
	for _, tv := range e.threads {
		l := fmt.Sprintf("%s: (%d, %s, %s)", model.ThreadLabel(d.threads.Number(tv.Ref)), tv.Calls,
			human.Duration(tv.TotalNs), pct(d.v.g.Coverage(tv.TotalNs)))
		if tv.RecursiveCalls > 0 {
			l += fmt.Sprintf(" rc=%d", tv.RecursiveCalls)
		}
		ls = append(ls, l)
	}
	return ls
}
