package model

// Breakdown splits a scope's call graph two ways the graph itself does
// not: into waiting time (inside the waiting calls of WaitingFuncs, where
// a thread is blocked rather than computing) and busy time, and by
// (member) thread. Summary reports blocked time and per-thread shares from
// it; render colours waiting apart from busy time and shares nodes of one
// thread's time.
type Breakdown struct {
	Threads []ThreadView // the scope's threads (ScopeThreads)
	WaitNs  int64        // the scope's waiting time: the outermost waiting calls' totals
	// ThreadWaitNs is each thread's waiting time, by Threads index.
	ThreadWaitNs []int64
	Nodes        []NodeWait // by graph node
	Edges        []int64    // waiting time inside each graph edge's total (call edges)
	// Shares holds one record per (thread, graph node) the thread reached,
	// thread by thread in Threads order.
	Shares []NodeShare
}

// NodeWait is the waiting time inside one graph node.
type NodeWait struct {
	SelfNs  int64 // self time inside waiting calls: a waiting call's own, or a callee's inside one
	TotalNs int64 // waiting time inside the node's (recursion-aware) total
	// OuterCalls and OuterNs are the node's activations that were
	// outermost waiting calls (not inside another one) and their time.
	OuterCalls, OuterNs int64
}

// NodeShare is one (member) thread's numbers of one graph node.
type NodeShare struct {
	Thread int // index into Breakdown.Threads
	Node   int // graph node
	Vec
	Wait NodeWait // the same thread's waiting time inside the node
}

// Breakdown breaks down graph g of scope s (g = p.Graph(s)) by p's
// waiting calls (WaitingFuncs).
func (p *Profile) Breakdown(g *Graph, s Scope) *Breakdown {
	return p.BreakdownBy(g, s, p.WaitingFuncs())
}

// BreakdownBy is Breakdown with waiting (by function) marking the waiting
// functions: none where no time is blocked time, as in the busy times of
// CPU samples (Busy), where a waiting call's time is CPU time.
func (p *Profile) BreakdownBy(g *Graph, s Scope, waiting []bool) *Breakdown {
	b := &Breakdown{Threads: p.ScopeThreads(s), Nodes: make([]NodeWait, len(g.Nodes)), Edges: make([]int64, len(g.Edges))}
	b.ThreadWaitNs = make([]int64, len(b.Threads))
	var w threadWalk
	for ti, v := range b.Threads {
		b.ThreadWaitNs[ti] = w.run(p, g, v.ThreadRef, waiting, b, ti)
		b.WaitNs += b.ThreadWaitNs[ti]
	}
	return b
}

// threadWalk holds the per-context state of one thread's walk, reused
// from thread to thread.
type threadWalk struct {
	gn    []int32 // context -> 1 + graph node, 0: not reached
	in    []bool  // the context is a waiting call or runs inside one (inWaiting)
	total []int64 // the thread's total of the context, 0 if not reached
	wait  []int64 // waiting time inside the context (waitInside)
	share []int32 // graph node -> 1 + index of this thread's share, 0: none yet
}

// run walks thread ref of b.Threads[ti] and returns its waiting time.
func (w *threadWalk) run(p *Profile, g *Graph, ref ThreadRef, waiting []bool, b *Breakdown, ti int) int64 {
	t := &p.Threads[ref.Thread]
	n := len(t.Nodes)
	w.gn = grow(w.gn, n)
	w.in = inWaiting(t, waiting, grow(w.in, n))
	w.total = grow(w.total, n)
	w.wait = grow(w.wait, n)
	w.share = grow(w.share, len(g.Nodes))
	first := len(b.Shares)
	for c := range p.Contexts(ref) {
		i, par := c.Index, c.Node.Parent
		gn, ok := g.NodeIndex(c.Key)
		if !ok {
			continue // not in g: g is of another scope
		}
		w.gn[i] = int32(gn) + 1
		w.total[i] = c.TotalNs
		var nw NodeWait
		if w.in[i] {
			nw.SelfNs = c.SelfNs
			if i == 0 || !w.in[par] { // an outermost waiting call
				nw.OuterCalls, nw.OuterNs = c.Calls, c.TotalNs
			}
		}
		if w.share[gn] == 0 {
			b.Shares = append(b.Shares, NodeShare{Thread: ti, Node: gn})
			w.share[gn] = int32(len(b.Shares))
		}
		sh := &b.Shares[w.share[gn]-1]
		sh.Vec.add(c.Vec)
		sh.Wait.Add(nw)
	}
	w.countArcs(t, ref, g, b, ti)
	waitInside(t, w.in, func(i int) int64 { return w.total[i] }, w.wait)
	// Each context's waiting time counts into its node's total where the
	// context is the outermost activation of its function, as total times
	// are, and into the edge from its parent's node.
	for i := n - 1; i >= 0; i-- {
		own := w.wait[i]
		if w.gn[i] == 0 || own == 0 || (i > 0 && !outermost(t, i)) {
			continue
		}
		gn := int(w.gn[i] - 1)
		b.Shares[w.share[gn]-1].Wait.TotalNs += own
		if i == 0 {
			continue
		}
		if pg := w.gn[t.Nodes[i].Parent]; pg != 0 {
			if ei, ok := g.edgeIdx[edgeID(int(pg-1), gn, EdgeCall)]; ok {
				b.Edges[ei] += own
			}
		}
	}
	for k := first; k < len(b.Shares); k++ {
		sh := &b.Shares[k]
		b.Nodes[sh.Node].Add(sh.Wait)
		w.share[sh.Node] = 0
	}
	clear(w.gn[:n])
	clear(w.total[:n])
	return w.wait[0]
}

// countArcs adds thread ref's counted calls (Thread.Arcs) to its shares
// of their callees' nodes, as Graph adds them to the nodes: calls, no
// time, so no waiting time either.
func (w *threadWalk) countArcs(t *Thread, ref ThreadRef, g *Graph, b *Breakdown, ti int) {
	for i := range t.Arcs {
		a := &t.Arcs[i]
		calls := arcCalls(a, ref.Member)
		gn, ok := g.NodeIndex(Key{a.Callee, None})
		if calls == 0 || !ok {
			continue
		}
		if w.share[gn] == 0 {
			b.Shares = append(b.Shares, NodeShare{Thread: ti, Node: gn})
			w.share[gn] = int32(len(b.Shares))
		}
		sh := &b.Shares[w.share[gn]-1]
		sh.Calls += calls
		if a.Caller == a.Callee {
			sh.RecursiveCalls += calls
		}
	}
}

// inWaiting marks in in (one per context of t) the contexts that are a
// waiting call or run inside one, and returns it.
func inWaiting(t *Thread, waiting []bool, in []bool) []bool {
	in[0] = false
	for i := 1; i < len(t.Nodes); i++ {
		in[i] = in[t.Nodes[i].Parent] || waiting[t.Nodes[i].Func]
	}
	return in
}

// waitInside sets wait[i] to the waiting time inside context i of t: the
// whole total of a context inside a waiting call (in[i]); for any other,
// the sum of its children's (an outermost waiting call's total holds the
// waiting calls inside it). total(i) is context i's total. Busy and
// Breakdown take their waiting time from here.
func waitInside(t *Thread, in []bool, total func(i int) int64, wait []int64) {
	clear(wait[:len(t.Nodes)])
	for i := len(t.Nodes) - 1; i >= 0; i-- {
		if in[i] {
			wait[i] = total(i)
		}
		if i > 0 && !in[t.Nodes[i].Parent] {
			wait[t.Nodes[i].Parent] += wait[i]
		}
	}
}

// outermost reports whether context i of t has no ancestor of its own
// function: its activations are the outermost ones, whose time total
// times count.
func outermost(t *Thread, i int) bool {
	f := t.Nodes[i].Func
	for a := t.Nodes[i].Parent; a > 0; a = t.Nodes[a].Parent {
		if t.Nodes[a].Func == f {
			return false
		}
	}
	return true
}

// Add adds o's times to w's.
func (w *NodeWait) Add(o NodeWait) {
	w.SelfNs += o.SelfNs
	w.TotalNs += o.TotalNs
	w.OuterCalls += o.OuterCalls
	w.OuterNs += o.OuterNs
}

// grow returns s with length n, reusing its array when it is large enough;
// the caller clears what it uses.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}
