package model

// The original, straightforward implementation of Profile.Graph (maps of
// per-thread shares), kept as the reference the optimised one must match.

import (
	"math/rand"
	"reflect"
	"sort"
	"testing"
)

// Graph is the function-level call graph derived from CCTs.
type refGraph struct {
	Nodes    []GraphNode // Nodes[0] is START
	Edges    []GraphEdge
	TracedNs int64 // traced time of the scope: the base of coverage
	nodeIdx  map[Key]int
	edgeIdx  map[refEdgeKey]int
}

type refEdgeKey struct {
	from, to int
	kind     EdgeKind
}

func (g *refGraph) refNode(k Key) int {
	if i, ok := g.nodeIdx[k]; ok {
		return i
	}
	g.Nodes = append(g.Nodes, GraphNode{Key: k})
	g.nodeIdx[k] = len(g.Nodes) - 1
	return len(g.Nodes) - 1
}

func (g *refGraph) refEdge(from, to int, kind EdgeKind) *GraphEdge {
	k := refEdgeKey{from, to, kind}
	if i, ok := g.edgeIdx[k]; ok {
		return &g.Edges[i]
	}
	g.Edges = append(g.Edges, GraphEdge{From: from, To: to, Kind: kind})
	g.edgeIdx[k] = len(g.Edges) - 1
	return &g.Edges[len(g.Edges)-1]
}

// Graph projects the CCTs of the threads in scope onto functions.
func (p *Profile) graphRef(s Scope) *refGraph {
	g := &refGraph{nodeIdx: make(map[Key]int), edgeIdx: make(map[refEdgeKey]int)}
	g.refNode(Key{StartFunc, None})
	perThread := make(map[int]map[ThreadRef]Vec) // edge index -> shares
	for _, v := range p.ScopeThreads(s) {
		g.TracedNs += v.TracedNs
		g.refAddThread(p, v.ThreadRef, perThread)
	}
	p.refAddSpawnForkEdges(g, s, perThread)
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

func (g *refGraph) refAddThread(p *Profile, ref ThreadRef, perThread map[int]map[ThreadRef]Vec) {
	t := &p.Threads[ref.Thread]
	level := t.Level
	gi := make([]int, len(t.Nodes)) // CCT node -> graph node
	for i := range t.Nodes {
		n := &t.Nodes[i]
		v := nodeVec(n, ref.Member)
		// a context only CPU samples made: no call, no in-flight frame
		samplesOnly := n.Calls == 0 && n.InFlight == 0 && n.SampledNs > 0
		if ref.Member != None && v == (Vec{}) && i > 0 {
			gi[i] = -1 // this member never reached the context
			continue
		}
		if v == (Vec{}) && i > 0 && samplesOnly {
			gi[i] = -1 // nothing measured there
			continue
		}
		k := Key{n.Func, None}
		if i > 0 && n.Parent == 0 && !samplesOnly {
			k.Level = level
		}
		gi[i] = g.refNode(k)
		gn := &g.Nodes[gi[i]]
		gn.Vec.add(v)
		if ref.Member == None {
			gn.DroppedNs += n.DroppedNs
		}
		if i == 0 || gi[n.Parent] < 0 {
			continue
		}
		e := g.refEdge(gi[n.Parent], gi[i], EdgeCall)
		ev := Vec{Calls: v.Calls, RecursiveCalls: v.RecursiveCalls, TotalNs: v.TotalNs}
		e.Vec.add(ev)
		e.Elided = e.Elided || n.Elided
		if ref.Member == None {
			e.DirectCalls += n.DirectCalls
			e.IndirectCalls += n.IndirectCalls
			e.PLTCalls += n.PLTCalls
		}
		refAddShare(perThread, g.edgeIdx[refEdgeKey{gi[n.Parent], gi[i], EdgeCall}], ref, ev)
	}
}

func refAddShare(perThread map[int]map[ThreadRef]Vec, ei int, ref ThreadRef, v Vec) {
	m := perThread[ei]
	if m == nil {
		m = make(map[ThreadRef]Vec)
		perThread[ei] = m
	}
	cur := m[ref]
	cur.add(v)
	m[ref] = cur
}

// addSpawnForkEdges adds one spawn edge per spawned thread and one fork
// edge per forked process whose spawner lies in scope.
func (p *Profile) refAddSpawnForkEdges(g *refGraph, s Scope, perThread map[int]map[ThreadRef]Vec) {
	for _, v := range p.ScopeThreads(s) {
		ref := v.ThreadRef
		t := &p.Threads[v.Thread]
		spawner, pid, ptid := t.SpawnedBy, p.Processes[t.Process].Pid, t.ParentTid
		if ref.Member != None {
			m := t.Members[ref.Member]
			spawner, pid, ptid = m.SpawnedBy, m.Pid, m.ParentTid
		}
		root := t.MemberRootFunc(ref.Member)
		if spawner == None || root == StartFunc {
			continue
		}
		from := g.refNode(p.spawnerKey(spawner, pid, ptid))
		to := g.refNode(Key{root, t.Level})
		e := g.refEdge(from, to, EdgeSpawn)
		e.Calls++
		refAddShare(perThread, g.edgeIdx[refEdgeKey{from, to, EdgeSpawn}], ref, Vec{Calls: 1})
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
		from := g.refNode(p.spawnerKey(pr.ForkedBy, p.parentPid(pr), pr.ForkedByTid))
		to := g.refNode(Key{root, t.Level})
		e := g.refEdge(from, to, EdgeFork)
		e.Calls++
		refAddShare(perThread, g.edgeIdx[refEdgeKey{from, to, EdgeFork}], ref, Vec{Calls: 1})
	}
}

// graphProfiles are the inputs of the equivalence test: built here
// without modeltest (which imports this package).
func graphProfiles() map[string]*Profile {
	out := map[string]*Profile{}
	rng := rand.New(rand.NewSource(7))
	p := New()
	p.Meta.Exe = "/bin/x"
	in := NewInterner(p)
	exe := in.Module("/bin/x", "")
	var funcs []int
	for i := 0; i < 40; i++ {
		funcs = append(funcs, in.Func(exe, string(rune('a'+i%26))+string(rune('a'+i/26))))
	}
	p.Processes = []Process{
		{Pid: 10, Parent: None, ForkedBy: None, ExecOf: None, Exe: "/bin/x"},
		{Pid: 11, Parent: 0, ParentPid: 10, ForkedBy: funcs[3], ForkedByTid: 10, ExecOf: None, Exe: "/bin/x"},
	}
	tree := func(n int) []Node {
		t := NewTree()
		for len(t.Nodes) < n {
			parent := rng.Intn(len(t.Nodes))
			c := t.Child(parent, funcs[rng.Intn(len(funcs))])
			nd := &t.Nodes[c]
			nd.Calls += int64(1 + rng.Intn(5))
			nd.RecursiveCalls = int64(rng.Intn(int(nd.Calls) + 1))
			nd.SelfNs += int64(rng.Intn(100))
			nd.TotalNs += int64(rng.Intn(1000))
			nd.DirectCalls = nd.Calls / 2
			nd.PLTCalls = nd.Calls / 4
			nd.Elided = rng.Intn(10) == 0
			nd.DroppedNs = int64(rng.Intn(3))
		}
		// some leaves made by CPU samples alone (Recorder.Sample of a
		// function without frames)
		parent := make([]bool, len(t.Nodes))
		for i := 1; i < len(t.Nodes); i++ {
			parent[t.Nodes[i].Parent] = true
		}
		rootLeaf := false // one at least below START, where a called function is a thread root
		for i := 1; i < len(t.Nodes); i++ {
			first := !rootLeaf && t.Nodes[i].Parent == 0
			if nd := &t.Nodes[i]; !parent[i] && (first || rng.Intn(8) == 0) {
				rootLeaf = rootLeaf || first
				*nd = Node{Func: nd.Func, Parent: nd.Parent, SampledNs: int64(1 + rng.Intn(50))}
			}
		}
		return t.Nodes
	}
	add := func(tid, proc, ptid, spawned, level int, members int) {
		th := Thread{Tid: tid, Process: proc, ParentTid: ptid, SpawnedBy: spawned, Level: level, TracedNs: 1000, Nodes: tree(300)}
		if members > 0 {
			for m := 0; m < members; m++ {
				th.Members = append(th.Members, Member{Pid: p.Processes[proc].Pid, Tid: tid*10 + m, ParentTid: ptid,
					SpawnedBy: spawned, Level: level, TracedNs: int64(100 * (m + 1))})
			}
			for i := range th.Nodes {
				n := &th.Nodes[i]
				rest := Contrib{Calls: n.Calls, RecursiveCalls: n.RecursiveCalls, SelfNs: n.SelfNs, TotalNs: n.TotalNs}
				for m := 0; m < members; m++ {
					if m == members-1 {
						rest.Member = m
						n.Contribs = append(n.Contribs, rest)
						break
					}
					if rng.Intn(3) == 0 {
						continue // member never reached it
					}
					c := Contrib{Member: m, Calls: rest.Calls / 2, RecursiveCalls: rest.RecursiveCalls / 2, SelfNs: rest.SelfNs / 2, TotalNs: rest.TotalNs / 2}
					rest.Calls -= c.Calls
					rest.RecursiveCalls -= c.RecursiveCalls
					rest.SelfNs -= c.SelfNs
					rest.TotalNs -= c.TotalNs
					n.Contribs = append(n.Contribs, c)
				}
			}
		}
		p.Threads = append(p.Threads, th)
	}
	add(10, 0, 0, None, 0, 0)
	add(12, 0, 10, funcs[1], 1, 3)
	add(13, 0, 10, funcs[2], 1, 0)
	add(14, 0, 13, funcs[4], 2, 2)
	add(11, 1, 0, None, 0, 0)
	out["mixed"] = p
	sampled := *p
	sampled.Meta.CPUSamples = &CPUSamples{PeriodNs: 1}
	out["mixed busy"] = sampled.Busy() // the sample-only contexts reached, with their samples
	return out
}

func TestGraphMatchesReference(t *testing.T) {
	for name, p := range graphProfiles() {
		scopes := []Scope{{}, {Pid: 10}, {Pid: 11}, {Tid: 10}, {Tid: 121}, {Tid: 13}, {Pid: 10, Tid: 140}}
		for _, s := range scopes {
			got, want := p.Graph(s), p.graphRef(s)
			if got.TracedNs != want.TracedNs || !reflect.DeepEqual(got.Nodes, want.Nodes) {
				t.Fatalf("%s %+v: nodes differ", name, s)
			}
			if len(got.Edges) != len(want.Edges) {
				t.Fatalf("%s %+v: %d edges, want %d", name, s, len(got.Edges), len(want.Edges))
			}
			for i := range got.Edges {
				g, w := got.Edges[i], want.Edges[i]
				if len(g.Threads) == 0 && len(w.Threads) == 0 {
					g.Threads, w.Threads = nil, nil
				}
				if !reflect.DeepEqual(g, w) {
					t.Fatalf("%s %+v: edge %d = %+v, want %+v", name, s, i, g, w)
				}
			}
			for k := range want.nodeIdx {
				if i, ok := got.NodeIndex(k); !ok || i != want.nodeIdx[k] {
					t.Fatalf("%s %+v: NodeIndex(%v) = %d, %v", name, s, k, i, ok)
				}
			}
			if _, ok := got.NodeIndex(Key{len(p.Functions) + 5, None}); ok {
				t.Fatalf("NodeIndex of an absent function")
			}
		}
	}
}
