package render

import (
	"fmt"
	"strings"

	"github.com/profile-dev/profile/internal/human"
	"github.com/profile-dev/profile/model"
)

// view is the call graph as drawn: the graph of the scope with, without
// Threads, a library function's per-level copies folded into one node (a
// libc call at the root of threads of several levels is one function to
// the reader), its waiting time (model.Breakdown) and the shares of the
// chosen basis. Busy times from CPU samples (model.Meta.BusySampled) are
// drawn from the profile's Busy: there a waiting call's time is CPU time,
// so nothing is waiting.
type view struct {
	p       *model.Profile // the profile drawn: Busy's with CPU samples
	g       *model.Graph
	bd      *model.Breakdown
	wall    bool
	full    bool  // labels with full names (Options.FullNames)
	base    int64 // busy or wall time of the scope: what shares are of
	sampled bool
	// cpu says how the busy times drawn were sampled; nil when they are
	// measured (or wall times are drawn). blockedNs is then the wall
	// time blocked in waiting calls, which the drawing leaves out.
	cpu       *model.CPUSamples
	blockedNs int64
	tracedNs  int64 // the scope's traced wall time
	nodes     []vnode
	edges     []vedge
}

// vnode is one drawn function: one graph node, or a library function's
// level copies folded.
type vnode struct {
	key model.Key
	model.Vec
	dropped int64
	wait    model.NodeWait
	waiting bool // a waiting call: its time is blocked time
	// selfShare and totalShare are of the basis: of the scope's time, or
	// with ThreadShare of one thread's, thread selfThread's and
	// totalThread's (-1 otherwise).
	selfShare, totalShare   float64
	selfThread, totalThread int
}

// vedge is one drawn edge.
type vedge struct {
	from, to int // view nodes
	kind     model.EdgeKind
	model.Vec
	elided  bool
	wait    int64 // waiting time inside the total
	threads []model.ThreadVec
	minlen  int // ranks the edge spans, set to stagger wide fans (select.go)
}

func newView(p *model.Profile, opt Options, threads *model.ThreadNumbers) *view {
	v := &view{wall: opt.Wall, full: opt.FullNames, sampled: p.Meta.Sampled()}
	waiting := p.WaitingFuncs()
	if !opt.Wall && p.Meta.BusySampled() {
		wall := p.Graph(opt.Scope)
		v.tracedNs, v.blockedNs, v.cpu = wall.TracedNs, p.Breakdown(wall, opt.Scope).WaitNs, p.Meta.CPUSamples
		p, waiting = p.Busy(), make([]bool, len(p.Functions))
	}
	g := p.Graph(opt.Scope)
	v.p, v.g, v.bd = p, g, p.BreakdownBy(g, opt.Scope, waiting)
	if v.cpu == nil {
		v.tracedNs = g.TracedNs
	}
	v.base = g.TracedNs
	if !v.wall {
		v.base -= v.bd.WaitNs
	}
	of := v.fold(!opt.Threads)
	for gi, gn := range g.Nodes {
		n := &v.nodes[of[gi]]
		n.Vec.Calls += gn.Calls
		n.Vec.RecursiveCalls += gn.RecursiveCalls
		n.Vec.SelfNs += gn.SelfNs
		n.Vec.TotalNs += gn.TotalNs
		n.dropped += gn.DroppedNs
		n.wait.Add(v.bd.Nodes[gi])
		n.waiting = waiting[gn.Key.Func]
	}
	// START's total is every thread's time
	v.nodes[of[0]].TotalNs = g.TracedNs
	v.nodes[of[0]].wait.TotalNs = v.bd.WaitNs
	idx := map[[3]int]int{}
	for ei, ge := range g.Edges {
		k := [3]int{of[ge.From], of[ge.To], int(ge.Kind)}
		i, ok := idx[k]
		if !ok {
			v.edges = append(v.edges, vedge{from: k[0], to: k[1], kind: ge.Kind})
			i = len(v.edges) - 1
			idx[k] = i
		}
		e := &v.edges[i]
		e.Calls += ge.Calls
		e.RecursiveCalls += ge.RecursiveCalls
		e.TotalNs += ge.TotalNs
		e.elided = e.elided || ge.Elided
		e.wait += v.bd.Edges[ei]
		e.threads = append(e.threads, ge.Threads...) // only folded without Threads, which draws no shares
	}
	for i := range v.nodes {
		n := &v.nodes[i]
		n.selfShare, n.totalShare = v.share(v.self(n)), v.share(v.total(n))
		n.selfThread, n.totalThread = -1, -1
	}
	if opt.ThreadShare {
		v.threadShares(of, threads)
	}
	return v
}

// fold maps graph nodes to view nodes, folding the level copies of a
// library function when asked to.
func (v *view) fold(libs bool) []int {
	of := make([]int, len(v.g.Nodes))
	byFunc := map[int]int{}
	for gi, gn := range v.g.Nodes {
		k := gn.Key
		if libs && k.Level != model.None && v.isLib(k.Func) {
			k.Level = model.None
		}
		if k.Level == model.None {
			if i, ok := byFunc[k.Func]; ok {
				of[gi] = i
				continue
			}
			byFunc[k.Func] = len(v.nodes)
		}
		of[gi] = len(v.nodes)
		v.nodes = append(v.nodes, vnode{key: k})
	}
	return of
}

// isLib reports whether f is a library function: not START, not of a
// program's executable (FuncName then says "module:name").
func (v *view) isLib(f int) bool {
	return f != model.StartFunc && v.p.FuncName(f) != v.p.Functions[f].Name
}

// threadShares sets the shares of one thread's time: for each node, the
// largest over the scope's threads of its time in that thread over the
// thread's (busy or wall) time.
func (v *view) threadShares(of []int, threads *model.ThreadNumbers) {
	bd := v.bd
	type acc struct {
		thread      int
		self, total int64
	}
	cur := make([]acc, len(v.nodes))
	for i := range cur {
		cur[i].thread = -1
	}
	for i := range v.nodes {
		v.nodes[i].selfShare, v.nodes[i].totalShare = 0, 0
	}
	flush := func(n int) {
		a := &cur[n]
		if a.thread < 0 {
			return
		}
		base := bd.Threads[a.thread].TracedNs
		if !v.wall {
			base -= bd.ThreadWaitNs[a.thread]
		}
		if base <= 0 {
			return
		}
		num := threads.Number(bd.Threads[a.thread].ThreadRef)
		nd := &v.nodes[n]
		if s := float64(a.self) / float64(base); s > nd.selfShare || nd.selfThread < 0 {
			nd.selfShare, nd.selfThread = s, num
		}
		if s := float64(a.total) / float64(base); s > nd.totalShare || nd.totalThread < 0 {
			nd.totalShare, nd.totalThread = s, num
		}
	}
	for _, sh := range bd.Shares {
		n := of[sh.Node]
		a := &cur[n]
		if a.thread != sh.Thread {
			flush(n)
			*a = acc{thread: sh.Thread}
		}
		self, total := sh.SelfNs, sh.TotalNs
		if sh.Node == 0 {
			total = bd.Threads[sh.Thread].TracedNs
		}
		if !v.wall {
			self -= sh.Wait.SelfNs
			total -= sh.Wait.TotalNs
		}
		a.self += self
		a.total += total
	}
	for n := range cur {
		flush(n)
	}
}

// self and total are a node's times in the basis.
func (v *view) self(n *vnode) int64 {
	if v.wall {
		return n.SelfNs
	}
	return n.SelfNs - n.wait.SelfNs
}

func (v *view) total(n *vnode) int64 {
	if v.wall {
		return n.TotalNs
	}
	return n.TotalNs - n.wait.TotalNs
}

func (v *view) edgeTotal(e *vedge) int64 {
	if v.wall {
		return e.TotalNs
	}
	return e.TotalNs - e.wait
}

// share is ns as a fraction of the basis.
func (v *view) share(ns int64) float64 {
	if v.base <= 0 {
		return 0
	}
	return float64(ns) / float64(v.base)
}

// basisLine says what the times are.
func (v *view) basisLine() string {
	if v.cpu != nil {
		s := fmt.Sprintf("busy time %s, sampled: %s", human.Duration(v.base), v.cpu)
		if v.blockedNs > 0 {
			s += fmt.Sprintf("; %s blocked in waiting calls left out", human.Duration(v.blockedNs))
		}
		return s
	}
	if v.wall {
		if v.bd.WaitNs > 0 {
			return fmt.Sprintf("wall time, %s of it waiting (blue-grey)", human.Duration(v.bd.WaitNs))
		}
		return "wall time"
	}
	if v.bd.WaitNs > 0 {
		return fmt.Sprintf("busy time %s: %s waiting (blue-grey) left out", human.Duration(v.base), human.Duration(v.bd.WaitNs))
	}
	return fmt.Sprintf("busy time %s (no waiting calls)", human.Duration(v.base))
}

// shareText is a share for a label: of the scope, or of thread t's time.
func shareText(share float64, t int) string {
	if t >= 0 {
		return pct(share) + " of #" + model.ThreadLabel(t)
	}
	return pct(share)
}

// label is the lines of node n's label: its name (shortened unless
// FullNames, wrapped), self and total time with their shares, calls, and
// what waiting or pruning hides.
func (v *view) label(n *vnode) []string {
	name := v.p.DisplayName(n.key.Func, v.full)
	if n.key.Level != model.None {
		name += fmt.Sprintf(" [L%d]", n.key.Level)
	}
	ls := wrapName(name)
	switch {
	case n.key.Func == model.StartFunc:
		ls = append(ls, "self "+human.Duration(v.self(n))+" ("+pct(v.share(v.self(n)))+")",
			"total "+human.Duration(v.total(n)))
	case n.waiting && !v.wall:
		ls = append(ls, "waiting "+human.Duration(n.TotalNs)+" ("+pct(v.g.Coverage(n.TotalNs))+" of wall)")
	default:
		ls = append(ls, "self "+human.Duration(v.self(n))+" ("+shareText(n.selfShare, n.selfThread)+")",
			"total "+human.Duration(v.total(n))+" ("+shareText(n.totalShare, n.totalThread)+")")
		if w := n.wait.TotalNs; w > 0 && !n.waiting && !v.wall {
			ls = append(ls, "+"+human.Duration(w)+" waiting")
		}
	}
	if c := callsText(n.Calls, n.RecursiveCalls, v.sampled); c != "" && n.key.Func != model.StartFunc {
		ls = append(ls, c)
	}
	if n.dropped > 0 {
		ls = append(ls, "+"+human.Duration(n.dropped)+" pruned")
	}
	return ls
}

func callsText(calls, rc int64, sampled bool) string {
	if sampled {
		return ""
	}
	s := human.Count(calls) + " call"
	if calls != 1 {
		s += "s"
	}
	if rc > 0 {
		s += fmt.Sprintf(" (%s recursive)", human.Count(rc))
	}
	return s
}

// tooltip is node n's tooltip: the full name, its module's path, and its
// times split into busy and waiting.
func (v *view) tooltip(n *vnode) []string {
	f := v.p.Functions[n.key.Func]
	ls := []string{f.Name}
	if path := v.p.Modules[f.Module].Path; path != "" {
		ls = append(ls, "module "+path)
	}
	if n.key.Level != model.None {
		ls = append(ls, fmt.Sprintf("first function of threads at nesting level %d", n.key.Level))
	}
	if v.cpu != nil {
		ls = append(ls, fmt.Sprintf("self %s, total %s: sampled CPU time", human.Duration(n.SelfNs), human.Duration(n.TotalNs)))
		if c := callsText(n.Calls, n.RecursiveCalls, v.sampled); c != "" {
			ls = append(ls, c)
		}
		return ls
	}
	ls = append(ls,
		fmt.Sprintf("self %s busy, %s waiting", human.Duration(n.SelfNs-n.wait.SelfNs), human.Duration(n.wait.SelfNs)),
		fmt.Sprintf("total %s busy, %s waiting", human.Duration(n.TotalNs-n.wait.TotalNs), human.Duration(n.wait.TotalNs)))
	if c := callsText(n.Calls, n.RecursiveCalls, v.sampled); c != "" {
		ls = append(ls, c)
	}
	return ls
}

// edgeLabel is a call edge's first label lines: "N× total (share)", or
// "N× recursive" when every call was recursive (its time is inside the
// outer call's), and the waiting inside the total (busy time).
func (v *view) edgeLabel(e *vedge) []string {
	var parts []string
	if e.elided {
		parts = append(parts, "…")
	}
	if !v.sampled {
		parts = append(parts, human.Count(e.Calls)+"×")
	}
	total := v.edgeTotal(e)
	var more []string
	switch {
	case e.Calls > 0 && e.RecursiveCalls == e.Calls && e.TotalNs == 0:
		parts = append(parts, "recursive")
	case !v.wall && e.wait > 0 && total == 0:
		parts = append(parts, "waiting "+human.Duration(e.wait))
	default:
		parts = append(parts, human.Duration(total)+" ("+pct(v.share(total))+")")
		if !v.wall && e.wait > 0 {
			more = append(more, "+"+human.Duration(e.wait)+" waiting")
		}
	}
	return append([]string{strings.Join(parts, " ")}, more...)
}

// maxSelfShare is the largest self share of the drawn nodes that take the
// heat colours: the base of font sizes.
func (v *view) maxSelfShare(sel selection) float64 {
	m := 0.0
	for i := range v.nodes {
		if n := &v.nodes[i]; sel.node[i] && n.key.Func != model.StartFunc && !n.waiting {
			m = max(m, n.selfShare)
		}
	}
	return m
}
