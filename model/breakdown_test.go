package model_test

import (
	"fmt"
	"testing"

	"github.com/profile-dev/profile/model"
	"github.com/profile-dev/profile/model/modeltest"
)

// waitingProfile: main calls a, which recurses once into a and waits in
// usleep (100 ns); then system (80 ns), inside which waitpid waits 50 ns;
// then compute (40 ns). Traced 290 ns, of which 180 waiting.
func waitingProfile() *model.Profile {
	b := modeltest.NewBuilder("/bin/app")
	pr := b.Process(1, model.None, "", 0)
	in := func(dt int64, f string) modeltest.Step { return modeltest.Step{Dt: dt, Func: f} }
	out := func(dt int64) modeltest.Step { return modeltest.Step{Dt: dt} }
	b.Thread(pr, 1, 0, "", 0, nil, []modeltest.Step{
		in(10, "main"),
		in(10, "a"), in(10, "a"), in(5, "libc.so.6:usleep"), out(100), out(5), out(5),
		in(5, "libc.so.6:system"), in(10, "libc.so.6:waitpid"), out(50), out(20),
		in(5, "compute"), out(40),
		out(5),
	})
	return b.P
}

func TestBreakdownWaiting(t *testing.T) {
	p := waitingProfile()
	g := p.Graph(model.Scope{})
	b := p.Breakdown(g, model.Scope{})
	if g.TracedNs != 290 || b.WaitNs != 180 || len(b.ThreadWaitNs) != 1 || b.ThreadWaitNs[0] != 180 {
		t.Fatalf("traced %d, waiting %d, by thread %v; want 290, 180", g.TracedNs, b.WaitNs, b.ThreadWaitNs)
	}
	key := func(name string) model.Key {
		k := model.Key{Func: funcIndex(t, p, name), Level: model.None}
		if name == "main" {
			k.Level = 0
		}
		return k
	}
	node := func(name string) int {
		i, ok := g.NodeIndex(key(name))
		if !ok {
			t.Fatalf("no node %s", name)
		}
		return i
	}
	for name, want := range map[string]model.NodeWait{
		"START":             {TotalNs: 180},
		"main":              {TotalNs: 180},
		"a":                 {TotalNs: 100}, // the outer activation's; the inner one's is inside it
		"libc.so.6:usleep":  {SelfNs: 100, TotalNs: 100, OuterCalls: 1, OuterNs: 100},
		"libc.so.6:system":  {SelfNs: 30, TotalNs: 80, OuterCalls: 1, OuterNs: 80},
		"libc.so.6:waitpid": {SelfNs: 50, TotalNs: 50}, // inside system: not outermost
		"compute":           {},
	} {
		if got := b.Nodes[node(name)]; got != want {
			t.Errorf("%s: %+v, want %+v", name, got, want)
		}
	}
	if a := g.Nodes[node("a")]; a.TotalNs != 125 {
		t.Errorf("a total %d, want 125", a.TotalNs)
	}
	edges := map[string]int64{}
	for ei, e := range g.Edges {
		edges[p.FuncName(g.Nodes[e.From].Key.Func)+">"+p.FuncName(g.Nodes[e.To].Key.Func)] = b.Edges[ei]
	}
	for e, want := range map[string]int64{"START>main": 180, "main>a": 100, "a>a": 0, "a>libc.so.6:usleep": 100,
		"main>libc.so.6:system": 80, "libc.so.6:system>libc.so.6:waitpid": 50, "main>compute": 0} {
		if got, ok := edges[e]; !ok || got != want {
			t.Errorf("edge %s waits %d (%v), want %d", e, got, ok, want)
		}
	}
}

// The shares of the threads add up to the graph's numbers, and a
// composite's members are told apart.
func TestBreakdownShares(t *testing.T) {
	for name, p := range map[string]*model.Profile{"sample": modeltest.Sample(), "composite": modeltest.SampleComposite(),
		"synthetic": modeltest.Synthetic(3000, 5, 7), "waiting": waitingProfile(),
		"counted": modeltest.Counted(), "counted composite": countedComposite()} {
		for _, s := range []model.Scope{{}, {Pid: 100}, {Tid: 102}} {
			g := p.Graph(s)
			b := p.Breakdown(g, s)
			sum := make([]model.Vec, len(g.Nodes))
			wait := make([]model.NodeWait, len(g.Nodes))
			var threadWait int64
			for _, sh := range b.Shares {
				v := &sum[sh.Node]
				v.Calls += sh.Calls
				v.RecursiveCalls += sh.RecursiveCalls
				v.SelfNs += sh.SelfNs
				v.TotalNs += sh.TotalNs
				wait[sh.Node].Add(sh.Wait)
			}
			for _, w := range b.ThreadWaitNs {
				threadWait += w
			}
			where := fmt.Sprintf("%s %+v", name, s)
			for i, n := range g.Nodes {
				if sum[i] != n.Vec || wait[i] != b.Nodes[i] {
					t.Errorf("%s: node %v: shares %+v %+v, graph %+v %+v", where, n.Key, sum[i], wait[i], n.Vec, b.Nodes[i])
				}
				if w := b.Nodes[i]; w.SelfNs > n.SelfNs || w.TotalNs > max(n.TotalNs, g.TracedNs) {
					t.Errorf("%s: node %v waits %+v of %+v", where, n.Key, w, n.Vec)
				}
			}
			if threadWait != b.WaitNs || b.Nodes[0].TotalNs != b.WaitNs || len(b.Threads) != len(p.ScopeThreads(s)) {
				t.Errorf("%s: waiting %d, threads %d, START %d", where, b.WaitNs, threadWait, b.Nodes[0].TotalNs)
			}
		}
	}
	// Sample: only thread 100 waits, in usleep (500 ns); the composite's
	// worker [L1] has one share per member: threads 101 (self 15 ns) and
	// 102 (self 10 ns)
	p := modeltest.SampleComposite()
	g := p.Graph(model.Scope{})
	b := p.Breakdown(g, model.Scope{})
	if fmt.Sprint(b.ThreadWaitNs) != "[500 0 0 0]" {
		t.Errorf("composite thread waits %v", b.ThreadWaitNs)
	}
	wl1, _ := g.NodeIndex(model.Key{Func: funcIndex(t, p, "worker"), Level: 1})
	var got []string
	for _, sh := range b.Shares {
		if sh.Node == wl1 {
			got = append(got, fmt.Sprintf("%d/%d:%d", b.Threads[sh.Thread].Tid, b.Threads[sh.Thread].Member, sh.SelfNs))
		}
	}
	if fmt.Sprint(got) != "[101/0:15 102/1:10]" {
		t.Errorf("worker [L1] shares %v", got)
	}
	// Counted: hash's calls by thread, counted calls only (5 of thread
	// 100's recursive)
	p = modeltest.Counted()
	g = p.Graph(model.Scope{})
	b = p.Breakdown(g, model.Scope{})
	hash, _ := g.NodeIndex(model.Key{Func: funcIndex(t, p, "hash"), Level: model.None})
	got = nil
	for _, sh := range b.Shares {
		if sh.Node == hash {
			got = append(got, fmt.Sprintf("%d:%d/%d/%d", b.Threads[sh.Thread].Tid, sh.Calls, sh.RecursiveCalls, sh.SelfNs+sh.TotalNs))
		}
	}
	if fmt.Sprint(got) != "[100:12/5/0 101:7/0/0 102:2/0/0 200:1/0/0]" {
		t.Errorf("hash shares %v", got)
	}
}

// ScopeThreads lists members of composites one by one; Contexts skips
// the contexts a member never reached.
func TestScopeThreads(t *testing.T) {
	p := modeltest.SampleComposite()
	var got []string
	for _, v := range p.ScopeThreads(model.Scope{Pid: 100}) {
		got = append(got, fmt.Sprintf("%d:%d/%d", v.Tid, v.Thread, v.Member))
	}
	if fmt.Sprint(got) != "[100:0/-1 101:1/0 102:1/1]" {
		t.Errorf("scope pid 100: %v", got)
	}
	// member 1 (thread 102) never ran spawn_more or pthread_create
	var ctx []string
	for c := range p.Contexts(model.ThreadRef{Thread: 1, Member: 1}) {
		ctx = append(ctx, fmt.Sprintf("%s:%d", p.FuncName(c.Node.Func), c.SelfNs))
	}
	if fmt.Sprint(ctx) != "[START:12 worker:10 compute:120]" {
		t.Errorf("member 1 contexts %v", ctx)
	}
	if _, ok := p.NodeVec(model.ThreadRef{Thread: 1, Member: 1}, 2); ok {
		t.Errorf("member 1 reached spawn_more")
	}
}
