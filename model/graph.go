package model

import "sort"

// Key identifies a node of the function-level call graph. A thread's first
// subroutine is keyed with the thread's nesting level so that merging
// threads never creates a spurious cycle (§2.4); every other occurrence of
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
}

// GraphEdge is one (caller, callee, kind) pair.
type GraphEdge struct {
	From, To int // indices into Graph.Nodes
	Kind     EdgeKind
	Vec
	DirectCalls, IndirectCalls, PLTCalls int64
	Elided                               bool
	// Threads dissects the edge by thread, sorted by ThreadRef.
	Threads []ThreadVec
}

// ThreadVec is one thread's share of an edge.
type ThreadVec struct {
	Ref ThreadRef
	Vec
}

// Graph is the function-level call graph derived from CCTs (§2.4).
type Graph struct {
	Nodes    []GraphNode // Nodes[0] is START
	Edges    []GraphEdge
	TracedNs int64 // traced time of the scope: the base of coverage
	nodeIdx  map[Key]int
	edgeIdx  map[edgeKey]int
}

type edgeKey struct {
	from, to int
	kind     EdgeKind
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
	i, ok := g.nodeIdx[k]
	return i, ok
}

func (g *Graph) node(k Key) int {
	if i, ok := g.nodeIdx[k]; ok {
		return i
	}
	g.Nodes = append(g.Nodes, GraphNode{Key: k})
	g.nodeIdx[k] = len(g.Nodes) - 1
	return len(g.Nodes) - 1
}

func (g *Graph) edge(from, to int, kind EdgeKind) *GraphEdge {
	k := edgeKey{from, to, kind}
	if i, ok := g.edgeIdx[k]; ok {
		return &g.Edges[i]
	}
	g.Edges = append(g.Edges, GraphEdge{From: from, To: to, Kind: kind})
	g.edgeIdx[k] = len(g.Edges) - 1
	return &g.Edges[len(g.Edges)-1]
}

// Graph projects the CCTs of the threads in scope onto functions.
func (p *Profile) Graph(s Scope) *Graph {
	g := &Graph{nodeIdx: make(map[Key]int), edgeIdx: make(map[edgeKey]int)}
	g.node(Key{StartFunc, None})
	perThread := make(map[int]map[ThreadRef]Vec) // edge index -> shares
	for ti := range p.Threads {
		for _, ref := range p.threadRefs(ti, s) {
			g.TracedNs += p.refTracedNs(ref)
			g.addThread(p, ref, perThread)
		}
	}
	p.addSpawnForkEdges(g, s, perThread)
	for ei := range g.Edges {
		shares := perThread[ei]
		for ref, v := range shares {
			g.Edges[ei].Threads = append(g.Edges[ei].Threads, ThreadVec{Ref: ref, Vec: v})
		}
		sort.Slice(g.Edges[ei].Threads, func(a, b int) bool {
			x, y := g.Edges[ei].Threads[a].Ref, g.Edges[ei].Threads[b].Ref
			return x.Thread < y.Thread || (x.Thread == y.Thread && x.Member < y.Member)
		})
	}
	return g
}

// threadRefs lists the (member) threads of thread ti inside scope s.
func (p *Profile) threadRefs(ti int, s Scope) []ThreadRef {
	t := &p.Threads[ti]
	if len(t.Members) == 0 {
		if s.match(p.Processes[t.Process].Pid, t.Tid) {
			return []ThreadRef{{ti, None}}
		}
		return nil
	}
	var refs []ThreadRef
	for mi, m := range t.Members {
		if s.match(m.Pid, m.Tid) {
			refs = append(refs, ThreadRef{ti, mi})
		}
	}
	return refs
}

func (s Scope) match(pid, tid int) bool {
	return (s.Pid == 0 || s.Pid == pid) && (s.Tid == 0 || s.Tid == tid)
}

func (p *Profile) refTracedNs(r ThreadRef) int64 {
	t := &p.Threads[r.Thread]
	if r.Member == None {
		return t.TracedNs
	}
	return t.Members[r.Member].TracedNs
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
// earliest child of START, or StartFunc when the thread ran none.
func (t *Thread) RootFunc() int {
	for i := 1; i < len(t.Nodes); i++ {
		if t.Nodes[i].Parent == 0 {
			return t.Nodes[i].Func
		}
	}
	return StartFunc
}

func (g *Graph) addThread(p *Profile, ref ThreadRef, perThread map[int]map[ThreadRef]Vec) {
	t := &p.Threads[ref.Thread]
	level := t.Level
	gi := make([]int, len(t.Nodes)) // CCT node -> graph node
	for i := range t.Nodes {
		n := &t.Nodes[i]
		v := nodeVec(n, ref.Member)
		if ref.Member != None && v == (Vec{}) && i > 0 {
			gi[i] = -1 // this member never reached the context
			continue
		}
		k := Key{n.Func, None}
		if i > 0 && n.Parent == 0 {
			k.Level = level
		}
		gi[i] = g.node(k)
		gn := &g.Nodes[gi[i]]
		gn.Vec.add(v)
		if ref.Member == None {
			gn.DroppedNs += n.DroppedNs
		}
		if i == 0 || gi[n.Parent] < 0 {
			continue
		}
		e := g.edge(gi[n.Parent], gi[i], EdgeCall)
		ev := Vec{Calls: v.Calls, RecursiveCalls: v.RecursiveCalls, TotalNs: v.TotalNs}
		e.Vec.add(ev)
		e.Elided = e.Elided || n.Elided
		if ref.Member == None {
			e.DirectCalls += n.DirectCalls
			e.IndirectCalls += n.IndirectCalls
			e.PLTCalls += n.PLTCalls
		}
		addShare(perThread, g.edgeIdx[edgeKey{gi[n.Parent], gi[i], EdgeCall}], ref, ev)
	}
}

func addShare(perThread map[int]map[ThreadRef]Vec, ei int, ref ThreadRef, v Vec) {
	m := perThread[ei]
	if m == nil {
		m = make(map[ThreadRef]Vec)
		perThread[ei] = m
	}
	cur := m[ref]
	cur.add(v)
	m[ref] = cur
}

// spawnerKey keys the spawning (or forking) function: where it is the first
// subroutine of the parent thread it runs as that thread's root.
func (p *Profile) spawnerKey(fn, pid, tid int) Key {
	for i := range p.Threads {
		t := &p.Threads[i]
		if t.Tid == tid && p.Processes[t.Process].Pid == pid && len(t.Members) == 0 {
			if t.RootFunc() == fn {
				return Key{fn, t.Level}
			}
			break
		}
	}
	return Key{fn, None}
}

// addSpawnForkEdges adds one spawn edge per spawned thread and one fork
// edge per forked process whose spawner lies in scope.
func (p *Profile) addSpawnForkEdges(g *Graph, s Scope, perThread map[int]map[ThreadRef]Vec) {
	for ti := range p.Threads {
		t := &p.Threads[ti]
		if root := t.RootFunc(); root != StartFunc {
			for _, ref := range p.threadRefs(ti, s) {
				spawner, pid, ptid := t.SpawnedBy, p.Processes[t.Process].Pid, t.ParentTid
				if ref.Member != None {
					m := t.Members[ref.Member]
					spawner, pid, ptid = m.SpawnedBy, m.Pid, m.ParentTid
				}
				if spawner == None {
					continue
				}
				from := g.node(p.spawnerKey(spawner, pid, ptid))
				to := g.node(Key{root, t.Level})
				e := g.edge(from, to, EdgeSpawn)
				e.Calls++
				addShare(perThread, g.edgeIdx[edgeKey{from, to, EdgeSpawn}], ref, Vec{Calls: 1})
			}
		}
	}
	for pi, pr := range p.Processes {
		if pr.ForkedBy == None || !s.match(pr.Pid, 0) && !s.match(p.parentPid(pr), pr.ForkedByTid) {
			continue
		}
		ti := p.firstThread(pi)
		if ti < 0 {
			continue
		}
		root := p.Threads[ti].RootFunc()
		if root == StartFunc {
			continue
		}
		from := g.node(p.spawnerKey(pr.ForkedBy, p.parentPid(pr), pr.ForkedByTid))
		to := g.node(Key{root, p.Threads[ti].Level})
		e := g.edge(from, to, EdgeFork)
		e.Calls++
		addShare(perThread, g.edgeIdx[edgeKey{from, to, EdgeFork}], ThreadRef{ti, None}, Vec{Calls: 1})
	}
}

func (p *Profile) parentPid(pr Process) int {
	if pr.Parent == None {
		return pr.ParentPid
	}
	return p.Processes[pr.Parent].Pid
}

// firstThread returns the index of process pi's first thread (level 0).
func (p *Profile) firstThread(pi int) int {
	for i := range p.Threads {
		if p.Threads[i].Process == pi && p.Threads[i].ParentTid == 0 {
			return i
		}
	}
	return -1
}
