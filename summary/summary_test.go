package summary_test

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"sort"
	"testing"

	"github.com/profile-dev/profile/model"
	"github.com/profile-dev/profile/model/modeltest"
	"github.com/profile-dev/profile/summary"
)

// The expectations here are computed from the model's CCTs by the test's
// own walks (parent chains, not summary's depth-first walk).

type fkey struct{ name, module string }

type ekey struct {
	caller, callee fkey
	kind           string
}

type gkey struct{ fn, level int } // graph key, for the hottest path

type vec struct{ calls, rc, self, total int64 }

type expect struct {
	funcs                 map[fkey]vec
	edges                 map[ekey]vec
	modules               map[string]int64
	calls                 int64
	direct, indirect, plt int64
	traced, blocked       int64
	maxDepth, maxLevel    int
	depth                 map[fkey]int
	threads               []summary.Thread
	processes             []summary.Process
	path                  []string
}

type tref struct {
	ti, member            int
	pid, tid, ptid, spawn int
	level                 int
	name                  string
	traced                int64
	thread                *model.Thread
}

func refsOf(p *model.Profile, s model.Scope) []tref {
	ok := func(pid, tid int) bool { return (s.Pid == 0 || pid == s.Pid) && (s.Tid == 0 || tid == s.Tid) }
	var out []tref
	for ti := range p.Threads {
		t := &p.Threads[ti]
		if len(t.Members) == 0 {
			if pid := p.Processes[t.Process].Pid; ok(pid, t.Tid) {
				out = append(out, tref{ti, -1, pid, t.Tid, t.ParentTid, t.SpawnedBy, t.Level, t.Name, t.TracedNs, t})
			}
			continue
		}
		for mi, m := range t.Members {
			if ok(m.Pid, m.Tid) {
				out = append(out, tref{ti, mi, m.Pid, m.Tid, m.ParentTid, m.SpawnedBy, m.Level, m.Name, m.TracedNs, t})
			}
		}
	}
	return out
}

// nodeOf is a node's numbers for a member; reached is false when the
// member never entered the context.
func nodeOf(n *model.Node, member int) (v vec, reached bool) {
	if member < 0 {
		return vec{n.Calls, n.RecursiveCalls, n.SelfNs, n.TotalNs}, true
	}
	for _, c := range n.Contribs {
		if c.Member == member {
			v = vec{c.Calls, c.RecursiveCalls, c.SelfNs, c.TotalNs}
		}
	}
	return v, v != vec{}
}

func isLib(p *model.Profile, f int) bool {
	path := p.Modules[p.Functions[f].Module].Path
	if path == "" || path == p.Meta.Exe {
		return false
	}
	for _, pr := range p.Processes {
		if pr.Exe == path {
			return false
		}
	}
	return true
}

func base(path string) string {
	for i := len(path) - 1; i >= 0; i-- {
		if path[i] == '/' {
			return path[i+1:]
		}
	}
	return path
}

func display(p *model.Profile, f int) string {
	if isLib(p, f) {
		return base(p.Modules[p.Functions[f].Module].Path) + ":" + p.Functions[f].Name
	}
	return p.Functions[f].Name
}

func compute(p *model.Profile, s model.Scope) *expect {
	x := &expect{funcs: map[fkey]vec{}, edges: map[ekey]vec{}, modules: map[string]int64{}, depth: map[fkey]int{}}
	fk := func(f int) fkey {
		return fkey{p.Functions[f].Name, base(p.Modules[p.Functions[f].Module].Path)}
	}
	add := func(m map[fkey]vec, k fkey, v vec) {
		o := m[k]
		m[k] = vec{o.calls + v.calls, o.rc + v.rc, o.self + v.self, o.total + v.total}
	}
	gedges := map[[2]gkey]int64{} // graph edge -> total, for the hottest path
	refs := refsOf(p, s)
	members := map[int]int{}
	for _, r := range refs {
		members[r.ti]++
	}
	kindsDone := map[int]bool{}
	for _, r := range refs {
		t := r.thread
		x.traced += r.traced
		x.maxLevel = max(x.maxLevel, r.level)
		if !kindsDone[r.ti] && (len(t.Members) == 0 || members[r.ti] == len(t.Members)) {
			kindsDone[r.ti] = true
			for _, n := range t.Nodes {
				x.direct += n.DirectCalls
				x.indirect += n.IndirectCalls
				x.plt += n.PLTCalls
			}
		}
		key := func(i int) gkey {
			if i > 0 && t.Nodes[i].Parent == 0 {
				return gkey{t.Nodes[i].Func, r.level}
			}
			return gkey{t.Nodes[i].Func, -1}
		}
		for i := range t.Nodes {
			n := &t.Nodes[i]
			v, reached := nodeOf(n, r.member)
			if i > 0 && !reached {
				continue
			}
			add(x.funcs, fk(n.Func), v)
			if i == 0 {
				continue
			}
			x.calls += v.calls
			parent := t.Nodes[n.Parent].Func
			ek := ekey{fk(parent), fk(n.Func), "call"}
			o := x.edges[ek]
			x.edges[ek] = vec{o.calls + v.calls, o.rc + v.rc, 0, o.total + v.total}
			gedges[[2]gkey{key(n.Parent), key(i)}] += v.total
			// recursion depth: activations of n.Func on the path to n
			d, blockedAbove := 0, false
			for a := i; a > 0; a = t.Nodes[a].Parent {
				if t.Nodes[a].Func == n.Func {
					d++
				}
				if a != i && isLib(p, t.Nodes[a].Func) && model.IsWaitingCall(p.Functions[t.Nodes[a].Func].Name) {
					blockedAbove = true
				}
			}
			x.depth[fk(n.Func)] = max(x.depth[fk(n.Func)], d)
			x.maxDepth = max(x.maxDepth, d)
			if isLib(p, n.Func) && model.IsWaitingCall(p.Functions[n.Func].Name) && !blockedAbove {
				x.blocked += v.total
			}
		}
		root := model.StartFunc
		for i := 1; i < len(t.Nodes); i++ {
			if t.Nodes[i].Parent == 0 {
				root = t.Nodes[i].Func
				break
			}
		}
		if root != model.StartFunc && r.spawn != model.None {
			ek := ekey{fk(r.spawn), fk(root), "spawn"}
			x.edges[ek] = vec{calls: x.edges[ek].calls + 1}
			add(x.funcs, fk(r.spawn), vec{}) // the spawner may lie outside the scope
		}
		spawned := ""
		if r.spawn != model.None {
			spawned = p.Functions[r.spawn].Name
		}
		x.threads = append(x.threads, summary.Thread{Tid: r.tid, Pid: r.pid, Name: r.name, ParentTid: r.ptid,
			SpawnedBy: spawned, NestingLevel: r.level, TracedNs: r.traced})
	}
	start := x.funcs[fkey{"START", ""}]
	start.total = x.traced
	x.funcs[fkey{"START", ""}] = start
	ok := func(pid, tid int) bool { return (s.Pid == 0 || pid == s.Pid) && (s.Tid == 0 || tid == s.Tid) }
	pids := map[int]bool{}
	for _, r := range refs {
		pids[r.pid] = true
	}
	for pi, pr := range p.Processes {
		ppid := pr.ParentPid
		if pr.Parent >= 0 {
			ppid = p.Processes[pr.Parent].Pid
		}
		if (s.Tid == 0 && ok(pr.Pid, 0)) || pids[pr.Pid] {
			forked := ""
			if pr.ForkedBy >= 0 {
				forked = p.Functions[pr.ForkedBy].Name
			}
			state := "running"
			switch {
			case pr.Signal != "":
				state = "killed"
			case pr.Exited:
				state = "exited"
			case slices.ContainsFunc(p.Processes, func(q model.Process) bool { return q.ExecOf == pi }):
				state = "exec"
			}
			x.processes = append(x.processes, summary.Process{Pid: pr.Pid, ParentPid: ppid, ForkedBy: forked,
				Exe: pr.Exe, StartedAs: pr.StartedAs(), ExitCode: pr.ExitCode, Signal: pr.Signal, State: state})
		}
		if pr.ForkedBy < 0 || (!ok(pr.Pid, 0) && !ok(ppid, pr.ForkedByTid)) {
			continue
		}
		for ti := range p.Threads {
			t := &p.Threads[ti]
			if t.Process != pi || t.ParentTid != 0 {
				continue
			}
			for i := 1; i < len(t.Nodes); i++ {
				if t.Nodes[i].Parent == 0 {
					ek := ekey{fk(pr.ForkedBy), fk(t.Nodes[i].Func), "fork"}
					x.edges[ek] = vec{calls: x.edges[ek].calls + 1}
					add(x.funcs, fk(pr.ForkedBy), vec{})
					add(x.funcs, fk(t.Nodes[i].Func), vec{})
					break
				}
			}
			break
		}
	}
	for k, v := range x.funcs {
		if k.module != "" {
			x.modules[k.module] += v.self
		}
	}
	// hottest path over graph keys
	seen := map[gkey]bool{{model.StartFunc, -1}: true}
	for cur := (gkey{model.StartFunc, -1}); ; {
		var best gkey
		var bestNs int64 = -1
		for e, ns := range gedges {
			if e[0] != cur || seen[e[1]] || ns <= 0 {
				continue
			}
			if ns > bestNs || ns == bestNs && display(p, e[1].fn) < display(p, best.fn) {
				best, bestNs = e[1], ns
			}
		}
		if bestNs < 0 {
			break
		}
		seen[best] = true
		x.path = append(x.path, display(p, best.fn))
		cur = best
	}
	return x
}

func pctOf(ns, traced int64) float64 {
	if traced == 0 {
		return 0
	}
	return 100 * float64(ns) / float64(traced)
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// check compares a report with the expectations.
func check(t *testing.T, p *model.Profile, s model.Scope, r *summary.Report) {
	t.Helper()
	x := compute(p, s)
	g := p.Graph(s)
	tot := r.Totals
	if tot.Nodes != len(g.Nodes) || tot.Edges != len(g.Edges) {
		t.Errorf("nodes, edges = %d, %d; graph has %d, %d", tot.Nodes, tot.Edges, len(g.Nodes), len(g.Edges))
	}
	want := summary.Totals{Nodes: tot.Nodes, Edges: tot.Edges, Calls: x.calls, DirectCalls: x.direct,
		IndirectCalls: x.indirect, PLTCalls: x.plt, Threads: len(x.threads), Processes: len(x.processes),
		MaxNestingLevel: x.maxLevel, MaxRecursionDepth: x.maxDepth, TracedNs: x.traced, BlockedNs: x.blocked, WallNs: x.traced,
		Times: "wall"}
	if tot != want {
		t.Errorf("totals\n got %+v\nwant %+v", tot, want)
	}
	if r.AllFuncs != len(x.funcs) || r.AllEdges != len(x.edges) {
		t.Errorf("%d functions, %d edges; want %d, %d", r.AllFuncs, r.AllEdges, len(x.funcs), len(x.edges))
	}
	for i, f := range r.Functions {
		v, ok := x.funcs[fkey{f.Name, f.Module}]
		if !ok || f.Calls != v.calls || f.RecursiveCalls != v.rc || f.SelfNs != v.self || f.TotalNs != v.total ||
			!near(f.SelfPct, pctOf(v.self, x.traced)) || !near(f.TotalPct, pctOf(v.total, x.traced)) {
			t.Errorf("function %+v, want %+v", f, v)
		}
		if i > 0 {
			q := r.Functions[i-1]
			if q.SelfNs < f.SelfNs || q.SelfNs == f.SelfNs && q.Name > f.Name {
				t.Errorf("functions out of order: %s before %s", q.Name, f.Name)
			}
		}
	}
	for i, e := range r.Edges {
		v, ok := x.edges[ekey{fkey{e.Caller, e.CallerModule}, fkey{e.Callee, e.CalleeModule}, e.Kind}]
		if !ok || e.Calls != v.calls || e.RecursiveCalls != v.rc || e.TotalNs != v.total || !near(e.TotalPct, pctOf(v.total, x.traced)) {
			t.Errorf("edge %+v, want %+v (found %v)", e, v, ok)
		}
		if i > 0 && r.Edges[i-1].TotalNs < e.TotalNs {
			t.Errorf("edges out of order at %d", i)
		}
	}
	if len(r.Modules) != len(x.modules) {
		t.Errorf("modules %+v, want %v", r.Modules, x.modules)
	}
	for _, m := range r.Modules {
		if m.SelfNs != x.modules[m.Module] || !near(m.SelfPct, pctOf(m.SelfNs, x.traced)) {
			t.Errorf("module %+v, want %d", m, x.modules[m.Module])
		}
	}
	if len(r.Threads) != len(x.threads) {
		t.Fatalf("threads %+v, want %+v", r.Threads, x.threads)
	}
	for i := range r.Threads {
		if r.Threads[i] != x.threads[i] {
			t.Errorf("thread %+v, want %+v", r.Threads[i], x.threads[i])
		}
	}
	if len(r.Processes) != len(x.processes) {
		t.Fatalf("processes %+v, want %+v", r.Processes, x.processes)
	}
	for i := range r.Processes {
		if r.Processes[i] != x.processes[i] {
			t.Errorf("process %+v, want %+v", r.Processes[i], x.processes[i])
		}
	}
	var path []string
	for _, st := range r.HottestPath {
		path = append(path, st.Display)
	}
	if len(path) != len(x.path) || (len(path) > 0 && !equalStrings(path, x.path)) {
		t.Errorf("hottest path %v, want %v", path, x.path)
	}
	for _, rc := range r.Recursion {
		found := false
		for k, d := range x.depth {
			if display(p, funcIndex(p, k)) == rc.Display {
				found = true
				if d != rc.MaxDepth {
					t.Errorf("%s max depth %d, want %d", rc.Display, rc.MaxDepth, d)
				}
			}
		}
		if !found {
			t.Errorf("recursion entry %+v not expected", rc)
		}
	}
	nrec := 0
	for k, d := range x.depth {
		if d > 1 || x.funcs[k].rc > 0 {
			nrec++
		}
	}
	if nrec != len(r.Recursion) {
		t.Errorf("%d recursive functions, want %d", len(r.Recursion), nrec)
	}
	var lv int
	for _, l := range r.Levels {
		lv += l.Threads
	}
	if lv != len(x.threads) {
		t.Errorf("levels count %d threads, want %d", lv, len(x.threads))
	}
	var blocked int64
	for _, b := range r.Blocking {
		blocked += b.BlockedNs
	}
	if blocked != x.blocked {
		t.Errorf("blocking breakdown adds up to %d, want %d", blocked, x.blocked)
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func funcIndex(p *model.Profile, k fkey) int {
	for i, f := range p.Functions {
		if f.Name == k.name && base(p.Modules[f.Module].Path) == k.module {
			return i
		}
	}
	return -1
}

func mustCompute(t *testing.T, p *model.Profile, opt summary.Options) *summary.Report {
	t.Helper()
	r, err := summary.Compute(p, opt)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestSampleNumbers(t *testing.T) {
	p := modeltest.Sample()
	for _, s := range []model.Scope{{}, {Pid: 100}, {Pid: 200}, {Tid: 101}, {Tid: 102}, {Pid: 100, Tid: 100}} {
		r := mustCompute(t, p, summary.Options{Pid: s.Pid, Tid: s.Tid})
		check(t, p, s, r)
	}
	// A few hand-checked numbers of the sample.
	r := mustCompute(t, p, summary.Options{})
	if r.Totals.MaxRecursionDepth != 3 || r.Totals.MaxNestingLevel != 2 || r.Totals.BlockedNs != 500 ||
		r.Totals.PLTCalls != 1 || r.Totals.IndirectCalls != 2 || r.Totals.Threads != 4 || r.Totals.Processes != 2 {
		t.Errorf("sample totals %+v", r.Totals)
	}
	if r.Functions[0].Name != "usleep" || r.Functions[0].Module != "libc.so.6" {
		t.Errorf("hottest function %+v", r.Functions[0])
	}
	if len(r.HottestPath) != 2 || r.HottestPath[0].Display != "main" || r.HottestPath[0].Level != 0 ||
		r.HottestPath[1].Display != "libc.so.6:usleep" {
		t.Errorf("hottest path %+v", r.HottestPath)
	}
	if len(r.Recursion) != 1 || r.Recursion[0].Display != "fib" || r.Recursion[0].MaxDepth != 3 || r.Recursion[0].RecursiveCalls != 3 {
		t.Errorf("recursion %+v", r.Recursion)
	}
	if len(r.Levels) != 3 || r.Levels[0].Threads != 2 || r.Levels[1].Threads != 1 || r.Levels[2].Threads != 1 {
		t.Errorf("levels %+v", r.Levels)
	}
	var kinds []string
	for _, e := range r.Edges {
		if e.Kind != "call" {
			kinds = append(kinds, e.Kind+":"+e.Caller+">"+e.Callee)
		}
	}
	sort.Strings(kinds)
	if !equalStrings(kinds, []string{"fork:do_fork>main", "spawn:spawn_more>worker", "spawn:spawn_workers>worker"}) {
		t.Errorf("spawn and fork edges %v", kinds)
	}
}

func TestTop(t *testing.T) {
	p := modeltest.Sample()
	all := mustCompute(t, p, summary.Options{})
	top := mustCompute(t, p, summary.Options{Top: 3})
	if len(top.Functions) != 3 || len(top.Edges) != 3 || len(top.Threads) != len(all.Threads) ||
		len(top.Processes) != len(all.Processes) || len(top.Modules) != len(all.Modules) {
		t.Fatalf("top 3: %d functions, %d edges, %d threads", len(top.Functions), len(top.Edges), len(top.Threads))
	}
	for i := range top.Functions {
		if !reflect.DeepEqual(top.Functions[i], all.Functions[i]) || !reflect.DeepEqual(top.Edges[i], all.Edges[i]) {
			t.Errorf("top entry %d differs", i)
		}
	}
	if top.AllFuncs != len(all.Functions) || top.Totals != all.Totals {
		t.Errorf("top changes the totals")
	}
	if big := mustCompute(t, p, summary.Options{Top: 1000}); len(big.Functions) != len(all.Functions) {
		t.Errorf("top beyond the count")
	}
	if _, err := summary.Compute(p, summary.Options{Top: -1}); err == nil {
		t.Errorf("negative top accepted")
	}
}

func TestScopeErrors(t *testing.T) {
	p := modeltest.Sample()
	for _, o := range []summary.Options{{Pid: 999}, {Tid: 999}, {Pid: 200, Tid: 100}} {
		if _, err := summary.Compute(p, o); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
}

// blockingProfile nests waiting calls: usleep calls nanosleep (counted
// once), a program function named read is not a library call, and
// recursion runs through two functions (a -> b -> a).
func blockingProfile() *model.Profile {
	b := modeltest.NewBuilder("/bin/srv")
	p0 := b.Process(10, model.None, "", 0)
	d := model.KindDirect
	b.Thread(p0, 10, 0, "", 0, nil, []modeltest.Step{
		{Dt: 10, Func: "main", Kind: d},
		{Dt: 5, Func: "libc.so.6:usleep", Kind: model.KindPLT}, {Dt: 5, Func: "libc.so.6:nanosleep", Kind: d}, {Dt: 100}, {Dt: 5},
		{Dt: 5, Func: "read", Kind: d}, {Dt: 40}, // the program's own read
		{Dt: 5, Func: "libc.so.6:__libc_read", Kind: model.KindPLT}, {Dt: 30},
		{Dt: 5, Func: "libpthread.so.0:pthread_cond_timedwait", Kind: model.KindPLT}, {Dt: 70},
		{Dt: 5, Func: "a", Kind: d}, {Dt: 5, Func: "b", Kind: d}, {Dt: 5, Func: "a", Kind: model.KindIndirect},
		{Dt: 5, Func: "b", Kind: d}, {Dt: 5, Func: "a", Kind: d}, {Dt: 5, Func: "libc.so.6:poll", Kind: model.KindPLT},
		{Dt: 20}, {Dt: 1}, {Dt: 1}, {Dt: 1}, {Dt: 1}, {Dt: 1},
		{Dt: 3},
	})
	b.Thread(p0, 11, 10, "main", 1, nil, []modeltest.Step{
		{Dt: 2, Func: "loop", Kind: model.KindIndirect},
		{Dt: 2, Func: "libc.so.6:epoll_wait", Kind: model.KindPLT}, {Dt: 500},
		{Dt: 2, Func: "libc.so.6:recvfrom", Kind: model.KindPLT}, {Dt: 50},
		{Dt: 2},
	})
	return b.P
}

func TestBlockingAndRecursion(t *testing.T) {
	p := blockingProfile()
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	r := mustCompute(t, p, summary.Options{})
	check(t, p, model.Scope{}, r)
	// usleep 110 (nanosleep inside is not counted again), __libc_read 30,
	// pthread_cond_timedwait 70, poll 20, epoll_wait 500, recvfrom 50.
	if r.Totals.BlockedNs != 110+30+70+20+500+50 {
		t.Errorf("blocked = %d", r.Totals.BlockedNs)
	}
	if r.Totals.MaxRecursionDepth != 3 {
		t.Errorf("max recursion depth = %d, want 3 (a -> b -> a -> b -> a)", r.Totals.MaxRecursionDepth)
	}
	var depthA, depthB int
	for _, x := range r.Recursion {
		switch x.Display {
		case "a":
			depthA = x.MaxDepth
		case "b":
			depthB = x.MaxDepth
		}
	}
	if depthA != 3 || depthB != 2 {
		t.Errorf("depths a=%d b=%d", depthA, depthB)
	}
	// the waiting calls, most blocked first: nanosleep ran only inside usleep
	var blocked []string
	for _, b := range r.Blocking {
		blocked = append(blocked, fmt.Sprintf("%s %d×%d", b.Display, b.Calls, b.BlockedNs))
	}
	want := []string{"libc.so.6:epoll_wait 1×500", "libc.so.6:usleep 1×110", "libpthread.so.0:pthread_cond_timedwait 1×70",
		"libc.so.6:recvfrom 1×50", "libc.so.6:__libc_read 1×30", "libc.so.6:poll 1×20"}
	if !slices.Equal(blocked, want) {
		t.Errorf("blocking functions %q, want %q", blocked, want)
	}
}

func TestSynthetic(t *testing.T) {
	p := modeltest.Synthetic(6_000, 6, 3)
	for _, s := range []model.Scope{{}, {Tid: 1003}} {
		r := mustCompute(t, p, summary.Options{Pid: s.Pid, Tid: s.Tid})
		check(t, p, s, r)
	}
}

// composite is the sample with threads 101 and 102 folded into one
// composite thread (modeltest.SampleComposite).
func composite(t *testing.T) *model.Profile {
	p := modeltest.SampleComposite()
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestComposite(t *testing.T) {
	p := composite(t)
	for _, s := range []model.Scope{{}, {Tid: 102}, {Tid: 101}, {Pid: 100}} {
		r := mustCompute(t, p, summary.Options{Pid: s.Pid, Tid: s.Tid})
		check(t, p, s, r)
	}
	r := mustCompute(t, p, summary.Options{Tid: 102})
	if r.Totals.Threads != 1 || r.Threads[0].Tid != 102 || r.Totals.IndirectCalls != 0 {
		t.Errorf("member scope: %+v", r.Totals)
	}
}
