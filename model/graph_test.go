package model_test

import (
	"reflect"
	"testing"

	"github.com/profile-dev/profile/model"
	"github.com/profile-dev/profile/model/modeltest"
)

func funcIndex(t *testing.T, p *model.Profile, name string) int {
	t.Helper()
	for i := range p.Functions {
		if p.FuncName(i) == name {
			return i
		}
	}
	t.Fatalf("no function %q", name)
	return -1
}

func TestGraphOfSample(t *testing.T) {
	p := modeltest.Sample()
	g := p.Graph(model.Scope{})
	fn := func(name string) int { return funcIndex(t, p, name) }
	node := func(name string, level int) model.GraphNode {
		i, ok := g.NodeIndex(model.Key{Func: fn(name), Level: level})
		if !ok {
			t.Fatalf("no graph node %s@%d", name, level)
		}
		return g.Nodes[i]
	}
	edge := func(from, to model.Key, kind model.EdgeKind) model.GraphEdge {
		f, ok1 := g.NodeIndex(from)
		to_, ok2 := g.NodeIndex(to)
		if ok1 && ok2 {
			for _, e := range g.Edges {
				if e.From == f && e.To == to_ && e.Kind == kind {
					return e
				}
			}
		}
		t.Fatalf("no %v edge %v -> %v", kind, from, to)
		return model.GraphEdge{}
	}
	// fib: 3 calls in the main thread (2 recursive), 2 in the child (1
	// recursive). Outermost durations: 110 ns and 25 ns.
	fib := node("fib", model.None)
	if fib.Calls != 5 || fib.RecursiveCalls != 3 || fib.TotalNs != 135 || fib.SelfNs != 30+20+60+10+15 {
		t.Errorf("fib = %+v", fib)
	}
	// worker: once from main (a call), twice as a thread root (levels 1, 2).
	if w := node("worker", model.None); w.Calls != 1 || w.TotalNs != 200 {
		t.Errorf("worker = %+v", w)
	}
	if w := node("worker", 1); w.Calls != 1 {
		t.Errorf("worker@1 = %+v", w)
	}
	if w := node("worker", 2); w.Calls != 1 {
		t.Errorf("worker@2 = %+v", w)
	}
	none := model.None
	if e := edge(model.Key{Func: fn("spawn_workers"), Level: none}, model.Key{Func: fn("worker"), Level: 1}, model.EdgeSpawn); e.Calls != 1 {
		t.Errorf("spawn edge = %+v", e)
	}
	if e := edge(model.Key{Func: fn("spawn_more"), Level: none}, model.Key{Func: fn("worker"), Level: 2}, model.EdgeSpawn); e.Calls != 1 {
		t.Errorf("spawn edge level 2 = %+v", e)
	}
	if e := edge(model.Key{Func: fn("do_fork"), Level: none}, model.Key{Func: fn("main"), Level: 0}, model.EdgeFork); e.Calls != 1 {
		t.Errorf("fork edge = %+v", e)
	}
	if e := edge(model.Key{Func: fn("main"), Level: 0}, model.Key{Func: fn("libc.so.6:usleep"), Level: none}, model.EdgeCall); e.Calls != 1 || e.PLTCalls != 1 || e.TotalNs != 500 {
		t.Errorf("usleep edge = %+v", e)
	}
	// The fib self edge carries the recursion: 3 recursive calls of 3.
	if e := edge(model.Key{Func: fn("fib"), Level: none}, model.Key{Func: fn("fib"), Level: none}, model.EdgeCall); e.Calls != 3 || e.RecursiveCalls != 3 || e.TotalNs != 0 {
		t.Errorf("fib->fib = %+v", e)
	}
	var traced, self int64
	for _, th := range p.Threads {
		traced += th.TracedNs
	}
	for _, n := range g.Nodes {
		self += n.SelfNs
	}
	if g.TracedNs != traced || self != traced {
		t.Errorf("graph traced %d, self sum %d, threads %d", g.TracedNs, self, traced)
	}
	// Scopes: one thread, one process.
	if g1 := p.Graph(model.Scope{Tid: 102}); g1.TracedNs != p.Threads[2].TracedNs {
		t.Errorf("thread scope traced = %d", g1.TracedNs)
	}
	if g2 := p.Graph(model.Scope{Pid: 200}); g2.TracedNs != p.Threads[3].TracedNs || g2.Coverage(g2.TracedNs) != 1 {
		t.Errorf("process scope traced = %d", g2.TracedNs)
	}
}

func TestRecorderTimers(t *testing.T) {
	r := model.NewRecorder(0)
	r.Enter(1, 10, model.KindDirect)   // a
	r.Enter(2, 20, model.KindDirect)   // b
	r.Enter(1, 30, model.KindIndirect) // a again: recursive
	r.Exit(60)
	r.Exit(70)
	r.EnterInFlight(3, 80)
	nodes, traced := r.Finish(100) // closes c at 100, a at 100
	if traced != 100 {
		t.Fatalf("traced = %d", traced)
	}
	want := []model.Node{
		{Func: 0, Parent: -1, SelfNs: 10},
		{Func: 1, Parent: 0, Calls: 1, DirectCalls: 1, SelfNs: 10 + 10 + 0, TotalNs: 90},
		{Func: 2, Parent: 1, Calls: 1, DirectCalls: 1, SelfNs: 20, TotalNs: 50},
		{Func: 1, Parent: 2, Calls: 1, RecursiveCalls: 1, IndirectCalls: 1, SelfNs: 30},
		{Func: 3, Parent: 1, InFlight: 1, SelfNs: 20, TotalNs: 20},
	}
	if len(nodes) != len(want) {
		t.Fatalf("nodes = %+v", nodes)
	}
	for i := range want {
		if nodes[i].Func != want[i].Func || nodes[i].Parent != want[i].Parent || nodes[i].Calls != want[i].Calls ||
			nodes[i].RecursiveCalls != want[i].RecursiveCalls || nodes[i].SelfNs != want[i].SelfNs ||
			nodes[i].TotalNs != want[i].TotalNs || nodes[i].InFlight != want[i].InFlight ||
			nodes[i].DirectCalls != want[i].DirectCalls || nodes[i].IndirectCalls != want[i].IndirectCalls {
			t.Errorf("node %d = %+v, want %+v", i, nodes[i], want[i])
		}
	}
}

// Counted calls (Thread.Arcs) add exact calls, no time, to their callee's
// node and to the call edge from their caller, thread by thread as the
// scope selects; a call from code of no function adds to the node only.
func TestGraphArcs(t *testing.T) {
	type edgeWant struct {
		from, to    string
		fromLevel   int
		calls, rc   int64
		threadCalls []int64 // by edge share, in ThreadRef order
	}
	none := model.None
	cases := []struct {
		name        string
		p           *model.Profile
		scope       model.Scope
		hash, hashR int64 // hash's calls, recursive calls; 0: no node
		checksum    int64
		edges       []edgeWant
		noEdgeFrom  []string // no call edge from these into hash
	}{
		{name: "whole profile", p: modeltest.Counted(), hash: 22, hashR: 5, checksum: 2, edges: []edgeWant{
			{"main", "hash", 0, 7, 0, []int64{7}}, // main runs as thread 100's first subroutine
			{"hash", "hash", none, 5, 5, []int64{5}},
			{"compute", "hash", none, 6, 0, []int64{4, 2}},
			{"child_work", "hash", none, 1, 0, []int64{1}},
			{"hash", "checksum", none, 2, 0, []int64{2}},
		}},
		{name: "tid 101", p: modeltest.Counted(), scope: model.Scope{Tid: 101}, hash: 7, edges: []edgeWant{
			{"compute", "hash", none, 4, 0, []int64{4}},
		}, noEdgeFrom: []string{"main", "hash", "child_work"}},
		{name: "pid 200", p: modeltest.Counted(), scope: model.Scope{Pid: 200}, hash: 1, checksum: 2, edges: []edgeWant{
			{"child_work", "hash", none, 1, 0, []int64{1}},
			{"hash", "checksum", none, 2, 0, []int64{2}},
		}, noEdgeFrom: []string{"main", "hash", "compute"}},
		{name: "composite", p: countedComposite(), hash: 9, edges: []edgeWant{
			{"compute", "hash", none, 6, 0, []int64{4, 2}},
		}},
		{name: "composite, one member", p: countedComposite(), scope: model.Scope{Tid: 109}, hash: 2, edges: []edgeWant{
			{"compute", "hash", none, 2, 0, []int64{2}},
		}},
		{name: "no arcs in scope", p: modeltest.Counted(), scope: model.Scope{Tid: 102, Pid: 200}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := c.p
			g := p.Graph(c.scope)
			fn := func(name string) int { return funcIndex(t, p, name) }
			node := func(name string, calls, rc int64) {
				t.Helper()
				i, ok := g.NodeIndex(model.Key{Func: fn(name), Level: none})
				if calls == 0 {
					if ok {
						t.Errorf("%s has a node: %+v", name, g.Nodes[i])
					}
					return
				}
				if !ok {
					t.Fatalf("no node for %s", name)
				}
				n := g.Nodes[i]
				want := model.GraphNode{Key: n.Key, Vec: model.Vec{Calls: calls, RecursiveCalls: rc}, CountedCalls: calls}
				if n != want {
					t.Errorf("%s = %+v, want %+v", name, n, want)
				}
			}
			node("hash", c.hash, c.hashR)
			if c.name != "composite" && c.name != "composite, one member" {
				node("checksum", c.checksum, 0)
			}
			find := func(from model.Key, to string) (model.GraphEdge, bool) {
				f, ok1 := g.NodeIndex(from)
				k, ok2 := g.NodeIndex(model.Key{Func: fn(to), Level: none})
				for _, e := range g.Edges {
					if ok1 && ok2 && e.From == f && e.To == k && e.Kind == model.EdgeCall {
						return e, true
					}
				}
				return model.GraphEdge{}, false
			}
			var into int64
			for _, w := range c.edges {
				e, ok := find(model.Key{Func: fn(w.from), Level: w.fromLevel}, w.to)
				if !ok {
					t.Fatalf("no edge %s -> %s", w.from, w.to)
				}
				if e.Calls != w.calls || e.RecursiveCalls != w.rc || e.TotalNs != 0 || e.CountedCalls != w.calls {
					t.Errorf("%s -> %s = %+v, want %d calls, %d rc, counted, no time", w.from, w.to, e, w.calls, w.rc)
				}
				var shares []int64
				for _, tv := range e.Threads {
					shares = append(shares, tv.Calls)
				}
				if !reflect.DeepEqual(shares, w.threadCalls) {
					t.Errorf("%s -> %s by thread = %v, want %v", w.from, w.to, shares, w.threadCalls)
				}
				if w.to == "hash" {
					into += e.Calls
				}
			}
			// the calls from code of no function reach hash by no edge
			var edges int64
			for _, e := range g.Edges {
				if k, ok := g.NodeIndex(model.Key{Func: fn("hash"), Level: none}); ok && e.To == k {
					edges += e.Calls
				}
			}
			if edges != into {
				t.Errorf("edges into hash carry %d calls, want %d", edges, into)
			}
			for _, from := range c.noEdgeFrom {
				for _, l := range []int{none, 0, 1, 2} {
					if e, ok := find(model.Key{Func: fn(from), Level: l}, "hash"); ok {
						t.Errorf("edge %s@%d -> hash out of scope: %+v", from, l, e)
					}
				}
			}
		})
	}
}

// Arcs change nothing of the timed graph: Counted's graph is Sample's
// plus hash and checksum.
func TestGraphArcsLeaveTimesAlone(t *testing.T) {
	a, b := modeltest.Sample().Graph(model.Scope{}), modeltest.Counted().Graph(model.Scope{})
	if len(b.Nodes) != len(a.Nodes)+2 || b.TracedNs != a.TracedNs {
		t.Fatalf("nodes %d -> %d, traced %d -> %d", len(a.Nodes), len(b.Nodes), a.TracedNs, b.TracedNs)
	}
	for _, n := range a.Nodes {
		if i, ok := b.NodeIndex(n.Key); !ok || b.Nodes[i] != n {
			t.Errorf("node %+v: %+v", n, b.Nodes[i])
		}
	}
}
