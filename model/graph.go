package model

import (
	"fmt"
	"sort"
)

// Key identifies a node of the function-level call graph. A thread's first
// subroutine is keyed with the thread's nesting level so that merging
// threads never creates a spurious cycle; every other occurrence of
// a function has Level None.
type Key struct {
	Func  int
	Level int
}

// EdgeKind tells how the callee came to run.
type EdgeKind uint8

// Edge kinds of the call graph.
const (
	EdgeCall  EdgeKind = iota // an ordinary call
	EdgeSpawn                 // the caller spawned a thread starting in the callee
	EdgeFork                  // the caller forked a process starting in the callee
)

func (k EdgeKind) String() string {
	return [...]string{"call", "spawn", "fork"}[k]
}

// Scope selects the threads a graph covers: one process (Pid), one thread
// (Tid), or everything when both are zero.
type Scope struct {
	Pid int
	Tid int
}

// String names the scope as titles say it: "pid 1, tid 2", "pid 1",
// "tid 2", or "" for the whole profile.
func (s Scope) String() string {
	switch {
	case s.Pid != 0 && s.Tid != 0:
		return fmt.Sprintf("pid %d, tid %d", s.Pid, s.Tid)
	case s.Pid != 0:
		return fmt.Sprintf("pid %d", s.Pid)
	case s.Tid != 0:
		return fmt.Sprintf("tid %d", s.Tid)
	}
	return ""
}

// NotFound is the error for a scope that matches no thread of a profile.
func (s Scope) NotFound() error {
	switch {
	case s.Pid != 0 && s.Tid != 0:
		return fmt.Errorf("no thread %d in process %d in the profile", s.Tid, s.Pid)
	case s.Tid != 0:
		return fmt.Errorf("no thread %d in the profile", s.Tid)
	}
	return fmt.Errorf("no process %d in the profile", s.Pid)
}

// ThreadRef names one (member) thread: Thread indexes Profile.Threads;
// Member indexes that thread's Members, or is None for a recorded thread.
type ThreadRef struct {
	Thread int
	Member int
}

// Vec is the numbers a node or edge carries.
type Vec struct {
	Calls          int64
	RecursiveCalls int64
	SelfNs         int64 // nodes only
	TotalNs        int64
}

func (v *Vec) add(o Vec) {
	v.Calls += o.Calls
	v.RecursiveCalls += o.RecursiveCalls
	v.SelfNs += o.SelfNs
	v.TotalNs += o.TotalNs
}

// GraphNode is one function (or thread-root function) of the graph.
type GraphNode struct {
	Key Key
	Vec
	DroppedNs int64
	// CountedCalls are the calls of Calls seen by counting probes
	// (Thread.Arcs): exact, with no time measured for them.
	CountedCalls int64
}

// GraphEdge is one (caller, callee, kind) pair.
type GraphEdge struct {
	From, To int // indices into Graph.Nodes
	Kind     EdgeKind
	Vec
	DirectCalls, IndirectCalls, PLTCalls int64
	Elided                               bool
	// CountedCalls are the calls of Calls seen by counting probes
	// (Thread.Arcs), with no time.
	CountedCalls int64
	// Threads dissects the edge by thread, sorted by ThreadRef.
	Threads []ThreadVec
}

// ThreadVec is one thread's share of an edge.
type ThreadVec struct {
	Ref ThreadRef
	Vec
}

// Graph is the function-level call graph derived from CCTs (docs/design.md,
// The function-level call graph).
type Graph struct {
	Nodes    []GraphNode // Nodes[0] is START
	Edges    []GraphEdge
	TracedNs int64 // traced time of the scope: the base of coverage
	// funcNode maps a function to its graph node of Level None (-1: none);
	// levelIdx holds the thread-root keys (Level != None).
	funcNode []int32
	levelIdx map[Key]int
	edgeIdx  map[uint64]int32
	shares   shareAcc
	// callerAt marks, per function, the arc callers of the thread being
	// added and where it ran them (isCaller, ranRoot, ranNested); nil
	// until a thread has arcs.
	callerAt []uint8
}

// edgeID packs (from, to, kind) into one map key.
func edgeID(from, to int, kind EdgeKind) uint64 {
	return uint64(from)<<33 | uint64(to)<<2 | uint64(kind)
}

// shareAcc collects the per-thread shares of edges: one record per (edge,
// thread) in the order threads are visited, dissected into
// GraphEdge.Threads at the end with one allocation.
type shareAcc struct {
	recs  []shareRec
	last  []int32 // edge -> index of its latest record, -1 if none
	first int     // records from first on belong to the current thread
}

type shareRec struct {
	edge int32
	tv   ThreadVec
}

// Coverage is ns as a fraction of the scope's traced time.
func (g *Graph) Coverage(ns int64) float64 {
	if g.TracedNs <= 0 {
		return 0
	}
	return float64(ns) / float64(g.TracedNs)
}

// NodeIndex returns the graph node of key k.
func (g *Graph) NodeIndex(k Key) (int, bool) {
	if k.Level == None {
		if k.Func >= 0 && k.Func < len(g.funcNode) && g.funcNode[k.Func] >= 0 {
			return int(g.funcNode[k.Func]), true
		}
		return 0, false
	}
	i, ok := g.levelIdx[k]
	return i, ok
}

func (g *Graph) node(k Key) int {
	if i, ok := g.NodeIndex(k); ok {
		return i
	}
	g.Nodes = append(g.Nodes, GraphNode{Key: k})
	i := len(g.Nodes) - 1
	if k.Level == None && k.Func >= 0 {
		for len(g.funcNode) <= k.Func {
			g.funcNode = append(g.funcNode, -1)
		}
		g.funcNode[k.Func] = int32(i)
	} else {
		g.levelIdx[k] = i
	}
	return i
}

// edge returns the index of edge (from, to, kind), adding it if new.
func (g *Graph) edge(from, to int, kind EdgeKind) int {
	id := edgeID(from, to, kind)
	if i, ok := g.edgeIdx[id]; ok {
		return int(i)
	}
	g.Edges = append(g.Edges, GraphEdge{From: from, To: to, Kind: kind})
	i := len(g.Edges) - 1
	g.edgeIdx[id] = int32(i)
	return i
}

// Graph projects the CCTs of the threads in scope onto functions.
func (p *Profile) Graph(s Scope) *Graph {
	views := p.ScopeThreads(s)
	// Every CCT node but a root adds at most one edge: size the tables
	// once instead of growing them through many copies.
	var size int
	for i, v := range views {
		if i == 0 || views[i-1].Thread != v.Thread {
			size += len(p.Threads[v.Thread].Nodes)
		}
	}
	g := &Graph{
		funcNode: make([]int32, 0, len(p.Functions)),
		levelIdx: make(map[Key]int),
		edgeIdx:  make(map[uint64]int32, size),
		Edges:    make([]GraphEdge, 0, size),
		shares:   shareAcc{recs: make([]shareRec, 0, size), last: make([]int32, 0, size)},
	}
	g.node(Key{StartFunc, None})
	for _, v := range views {
		g.TracedNs += v.TracedNs
		g.addThread(p, v.ThreadRef)
	}
	p.addSpawnForkEdges(g, s, views)
	g.dissect()
	return g
}

func (s Scope) match(pid, tid int) bool {
	return (s.Pid == 0 || s.Pid == pid) && (s.Tid == 0 || s.Tid == tid)
}

// nodeVec is node n's numbers for one (member) thread.
func nodeVec(n *Node, member int) Vec {
	if member == None {
		return Vec{n.Calls, n.RecursiveCalls, n.SelfNs, n.TotalNs}
	}
	for _, c := range n.Contribs {
		if c.Member == member {
			return Vec{c.Calls, c.RecursiveCalls, c.SelfNs, c.TotalNs}
		}
	}
	return Vec{}
}

// RootFunc returns the function of a thread's first subroutine: the
// earliest child of START that the thread called (not one only its CPU
// samples made), or StartFunc when the thread ran none.
func (t *Thread) RootFunc() int {
	for i := 1; i < len(t.Nodes); i++ {
		if n := &t.Nodes[i]; n.Parent == 0 && !n.SampleOnly(None) {
			return n.Func
		}
	}
	return StartFunc
}

func (g *Graph) addThread(p *Profile, ref ThreadRef) {
	t := &p.Threads[ref.Thread]
	g.shares.begin()
	arcs := len(t.Arcs) > 0
	if arcs {
		g.markCallers(p, t)
	}
	gi := make([]int32, len(t.Nodes)) // CCT node -> 1 + graph node, 0: not reached
	for c := range p.Contexts(ref) {
		gn := g.node(c.Key)
		gi[c.Index] = int32(gn) + 1
		g.Nodes[gn].Vec.add(c.Vec)
		n := c.Node
		if ref.Member == None {
			g.Nodes[gn].DroppedNs += n.DroppedNs
		}
		if arcs && c.Index > 0 && g.callerAt[n.Func] != 0 {
			if c.Key.Level == None {
				g.callerAt[n.Func] |= ranNested
			} else {
				g.callerAt[n.Func] |= ranRoot
			}
		}
		if c.Index == 0 || gi[n.Parent] == 0 {
			continue
		}
		ei := g.edge(int(gi[n.Parent])-1, gn, EdgeCall)
		e := &g.Edges[ei]
		ev := Vec{Calls: c.Calls, RecursiveCalls: c.RecursiveCalls, TotalNs: c.TotalNs}
		e.Vec.add(ev)
		e.Elided = e.Elided || n.Elided
		if ref.Member == None {
			e.DirectCalls += n.DirectCalls
			e.IndirectCalls += n.IndirectCalls
			e.PLTCalls += n.PLTCalls
		}
		g.shares.add(ei, ref, ev)
	}
	if arcs {
		g.addArcs(t, ref)
	}
}

// Bits of Graph.callerAt: an arc caller of the thread, and where the
// (member) thread ran it: as its first subroutine, or below that.
const (
	isCaller  uint8 = 1
	ranRoot   uint8 = 2
	ranNested uint8 = 4
)

func (g *Graph) markCallers(p *Profile, t *Thread) {
	if g.callerAt == nil {
		g.callerAt = make([]uint8, len(p.Functions))
	}
	for _, a := range t.Arcs {
		if a.Caller != None {
			g.callerAt[a.Caller] = isCaller
		}
	}
}

// addArcs adds thread ref's counted calls: each to its callee's node and,
// when the caller is known, to the call edge from the caller. The caller's
// node is its thread-root node where the thread ran it only as its first
// subroutine, else its node of level None. A call from code of no
// function (Caller None) gets no edge: no traced function is known to be
// on the stack, so neither START nor any other node is its caller.
func (g *Graph) addArcs(t *Thread, ref ThreadRef) {
	for i := range t.Arcs {
		a := &t.Arcs[i]
		calls := arcCalls(a, ref.Member)
		if calls == 0 {
			continue
		}
		// a function's own code calling it: a recursive call for sure
		var rc int64
		if a.Caller == a.Callee {
			rc = calls
		}
		to := g.node(Key{a.Callee, None})
		n := &g.Nodes[to]
		n.Calls += calls
		n.RecursiveCalls += rc
		n.CountedCalls += calls
		if a.Caller == None {
			continue
		}
		k := Key{a.Caller, None}
		if at := g.callerAt[a.Caller]; at&ranRoot != 0 && at&ranNested == 0 {
			k.Level = t.Level
		}
		ei := g.edge(g.node(k), to, EdgeCall)
		e := &g.Edges[ei]
		v := Vec{Calls: calls, RecursiveCalls: rc}
		e.Vec.add(v)
		e.CountedCalls += calls
		g.shares.add(ei, ref, v)
	}
	for _, a := range t.Arcs {
		if a.Caller != None {
			g.callerAt[a.Caller] = 0
		}
	}
}

// begin starts the records of the next (member) thread.
func (a *shareAcc) begin() { a.first = len(a.recs) }

// add adds v to ref's share of edge ei. Calls for one ref are contiguous
// (between two begin calls), so a share already recorded for ref is the
// edge's latest record.
func (a *shareAcc) add(ei int, ref ThreadRef, v Vec) {
	for len(a.last) <= ei {
		a.last = append(a.last, -1)
	}
	if j := int(a.last[ei]); j >= a.first && a.recs[j].tv.Ref == ref {
		a.recs[j].tv.Vec.add(v)
		return
	}
	a.recs = append(a.recs, shareRec{edge: int32(ei), tv: ThreadVec{Ref: ref, Vec: v}})
	a.last[ei] = int32(len(a.recs) - 1)
}

// dissect moves the share records into GraphEdge.Threads, each sorted by
// ThreadRef, sharing one backing array.
func (g *Graph) dissect() {
	recs := g.shares.recs
	g.shares = shareAcc{}
	if len(recs) == 0 {
		return
	}
	start := make([]int32, len(g.Edges)+1)
	for _, r := range recs {
		start[r.edge+1]++
	}
	for i := 1; i < len(start); i++ {
		start[i] += start[i-1]
	}
	all := make([]ThreadVec, len(recs))
	fill := make([]int32, len(g.Edges))
	copy(fill, start[:len(g.Edges)])
	for _, r := range recs {
		all[fill[r.edge]] = r.tv
		fill[r.edge]++
	}
	for ei := range g.Edges {
		a, b := start[ei], start[ei+1]
		if a == b {
			continue
		}
		tv := all[a:b:b]
		if !sort.SliceIsSorted(tv, func(x, y int) bool { return refLess(tv[x].Ref, tv[y].Ref) }) {
			sort.SliceStable(tv, func(x, y int) bool { return refLess(tv[x].Ref, tv[y].Ref) })
		}
		// one entry per ref: fold repeated records of a ref
		out := tv[:1]
		for _, x := range tv[1:] {
			if x.Ref == out[len(out)-1].Ref {
				out[len(out)-1].Vec.add(x.Vec)
			} else {
				out = append(out, x)
			}
		}
		g.Edges[ei].Threads = out[:len(out):len(out)]
	}
}

func refLess(x, y ThreadRef) bool {
	return x.Thread < y.Thread || (x.Thread == y.Thread && x.Member < y.Member)
}

// spawnerKey keys the spawning (or forking) function: where it is the first
// subroutine of the parent thread it runs as that thread's root.
func (p *Profile) spawnerKey(fn, pid, tid int) Key {
	for i := range p.Threads {
		t := &p.Threads[i]
		if len(t.Members) == 0 {
			if t.Tid == tid && p.Processes[t.Process].Pid == pid {
				if t.RootFunc() == fn {
					return Key{fn, t.Level}
				}
				break
			}
			continue
		}
		// a composite thread: the parent is one of its members (runs that
		// reused a pid and tid are not told apart: the first member wins)
		for mi := range t.Members {
			if m := &t.Members[mi]; m.Tid == tid && m.Pid == pid {
				if t.MemberRootFunc(mi) == fn {
					return Key{fn, t.Level}
				}
				return Key{fn, None}
			}
		}
	}
	return Key{fn, None}
}

// MemberRootFunc returns the first subroutine of member m of a composite
// thread: the first child of START, in node order, that the member reached
// (StartFunc if none). For m == None it is RootFunc.
func (t *Thread) MemberRootFunc(m int) int {
	if m == None {
		return t.RootFunc()
	}
	for i := 1; i < len(t.Nodes); i++ {
		if n := &t.Nodes[i]; n.Parent == 0 && nodeVec(n, m) != (Vec{}) && !n.SampleOnly(m) {
			return n.Func
		}
	}
	return StartFunc
}

// addSpawnForkEdges adds one spawn edge per spawned thread of the scope
// (views) and one fork edge per forked process whose spawner lies in
// scope.
func (p *Profile) addSpawnForkEdges(g *Graph, s Scope, views []ThreadView) {
	for _, v := range views {
		t := &p.Threads[v.Thread]
		root := t.MemberRootFunc(v.Member)
		if v.SpawnedBy == None || root == StartFunc {
			continue
		}
		from := g.node(p.spawnerKey(v.SpawnedBy, v.Pid, v.ParentTid))
		to := g.node(Key{root, t.Level})
		ei := g.edge(from, to, EdgeSpawn)
		g.Edges[ei].Calls++
		g.shares.begin()
		g.shares.add(ei, v.ThreadRef, Vec{Calls: 1})
	}
	for pi, pr := range p.Processes {
		if pr.ForkedBy == None || !s.match(pr.Pid, 0) && !s.match(p.parentPid(pr), pr.ForkedByTid) {
			continue
		}
		ref, ok := p.firstThread(pi)
		if !ok {
			continue
		}
		t := &p.Threads[ref.Thread]
		root := t.MemberRootFunc(ref.Member)
		if root == StartFunc {
			continue
		}
		from := g.node(p.spawnerKey(pr.ForkedBy, p.parentPid(pr), pr.ForkedByTid))
		to := g.node(Key{root, t.Level})
		ei := g.edge(from, to, EdgeFork)
		g.Edges[ei].Calls++
		g.shares.begin()
		g.shares.add(ei, ref, Vec{Calls: 1})
	}
}

func (p *Profile) parentPid(pr Process) int {
	if pr.Parent == None {
		return pr.ParentPid
	}
	return p.Processes[pr.Parent].Pid
}

// firstThread finds process pi's first thread: a recorded thread of that
// process with no parent thread, or the matching member of a composite.
func (p *Profile) firstThread(pi int) (ThreadRef, bool) {
	pid := p.Processes[pi].Pid
	for i := range p.Threads {
		t := &p.Threads[i]
		if len(t.Members) == 0 {
			if t.Process == pi && t.ParentTid == 0 {
				return ThreadRef{i, None}, true
			}
			continue
		}
		for mi, m := range t.Members {
			if m.Pid == pid && m.ParentTid == 0 && m.Level == 0 {
				return ThreadRef{i, mi}, true
			}
		}
	}
	return ThreadRef{}, false
}
