package merge

import (
	"bytes"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/profile-dev/profile/model"
	"github.com/profile-dev/profile/model/modeltest"
)

// spawner: threads spawning threads over three levels, one thread root
// (worker at level 1) spawning a thread itself.
func spawner() *model.Profile {
	b := modeltest.NewBuilder("/bin/pool")
	p := b.Process(300, model.None, "", 0)
	b.Thread(p, 300, 0, "", 0, nil, []modeltest.Step{
		modeltest.Enter(10, "main"), modeltest.Enter(5, "spawn_pool"),
		modeltest.PLT(5, "libpthread.so.0:pthread_create"), modeltest.Exit(20), modeltest.PLT(5, "libpthread.so.0:pthread_create"), modeltest.Exit(20), modeltest.Exit(5),
		modeltest.Enter(5, "worker"), modeltest.Enter(3, "compute"), modeltest.Exit(50), modeltest.Exit(5),
		modeltest.PLT(5, "libpthread.so.0:pthread_join"), modeltest.Exit(400), modeltest.Exit(10),
	})
	b.Thread(p, 301, 300, "spawn_pool", 1, nil, []modeltest.Step{
		modeltest.Enter(3, "worker"), modeltest.Enter(5, "spawn_helper"), modeltest.PLT(5, "libpthread.so.0:pthread_create"), modeltest.Exit(15), modeltest.Exit(5),
		modeltest.Enter(5, "compute"), modeltest.Exit(200), modeltest.Enter(5, "compute"), modeltest.Exit(100), modeltest.Exit(5),
	})
	b.Thread(p, 302, 300, "spawn_pool", 1, nil, []modeltest.Step{
		modeltest.Enter(3, "worker"), modeltest.PLT(5, "libpthread.so.0:pthread_create"), modeltest.Exit(15),
		modeltest.Enter(5, "compute"), modeltest.Enter(2, "compute"), modeltest.Exit(30), modeltest.Exit(70), modeltest.Exit(5),
	})
	b.Thread(p, 303, 301, "spawn_helper", 2, nil, []modeltest.Step{
		modeltest.Enter(2, "helper"), modeltest.Enter(5, "compute"), modeltest.Exit(120), modeltest.Exit(5),
	})
	b.Thread(p, 304, 302, "worker", 2, nil, []modeltest.Step{
		modeltest.Enter(2, "worker"), modeltest.Enter(5, "compute"), modeltest.Exit(90), modeltest.Exit(5),
	})
	b.P.Meta.DurationNs, b.P.Meta.Stops, b.P.Meta.TracedCalls = 2_000, 40, 20
	b.P.Meta.Filters = []string{"compute|worker"}
	return b.P
}

// attached: an attach-mode run of the same program with in-flight frames,
// an exec'd image, a crash and a partial profile.
func attached() *model.Profile {
	b := modeltest.NewBuilder("/bin/pool")
	b.P.Meta.Mode = "attach"
	sh := b.Process(500, model.None, "", 0)
	b.P.Processes[sh].Exe = "/bin/sh"
	p := b.Process(500, model.None, "", 0)
	b.P.Processes[p].ExecOf = sh
	b.Thread(p, 500, 0, "", 0, []string{"main", "worker"}, []modeltest.Step{
		modeltest.Enter(5, "compute"), modeltest.Exit(70), modeltest.Enter(5, "compute"), modeltest.Exit(30),
		modeltest.Step{Dt: 5, Func: "helper", Kind: model.KindIndirect}, modeltest.Exit(40),
	})
	b.Thread(p, 501, 500, "spawn_pool", 1, []string{"worker"}, []modeltest.Step{
		modeltest.Enter(5, "compute"), modeltest.Enter(3, "worker"), modeltest.Enter(2, "compute"), modeltest.Exit(10), modeltest.Exit(5), modeltest.Exit(60),
	})
	b.P.Meta.Partial, b.P.Meta.PartialReason = true, "target crashed"
	b.P.Meta.Crash = &model.Crash{Pid: 500, Tid: 501, Signal: "SIGSEGV", Addr: 0x10, Stack: []string{"compute+0x4"}}
	b.P.Meta.DurationNs, b.P.Meta.Stops, b.P.Meta.TracedCalls = 3_000, 12, 6
	b.P.Meta.StartUnixNs = 1_700_000_000_000_000_000
	b.P.Meta.Filters = []string{"compute|worker"}
	b.P.Meta.Libs = []string{"libpthread.so.0"}
	return b.P
}

// container: pid 1 forking a child, as in a fresh pid namespace; two such
// runs differ only below the identical root process.
func container(childPid int, work string) *model.Profile {
	b := modeltest.NewBuilder("/bin/init")
	p0 := b.Process(1, model.None, "", 0)
	b.Thread(p0, 1, 0, "", 0, nil, []modeltest.Step{modeltest.Enter(10, "main"), modeltest.Enter(5, "start_child"), modeltest.Exit(30), modeltest.Exit(5)})
	p1 := b.Process(childPid, p0, "start_child", 1)
	b.Thread(p1, childPid, 0, "", 0, []string{"main", "start_child"}, []modeltest.Step{modeltest.Enter(5, work), modeltest.Exit(50)})
	return b.P
}

type named struct {
	name string
	p    func() *model.Profile
}

func inputs() []named {
	return []named{
		{"sample", modeltest.Sample},
		{"spawner", spawner},
		{"attached", attached},
		{"synthetic", func() *model.Profile { return modeltest.Synthetic(3000, 5, 7) }},
		{"synthetic2", func() *model.Profile { return modeltest.Synthetic(2000, 3, 8) }},
		{"container-a", func() *model.Profile { return container(7, "serve") }},
		{"container-b", func() *model.Profile { return container(9, "batch") }},
		{"pruned", pruned},
		{"counted", modeltest.Counted},
	}
}

// pruned: the spawner with every non-root node under 20ns self folded
// into its parent, as prune does: elided edges and dropped time (built by
// hand: merge's tests do not depend on prune).
func pruned() *model.Profile {
	p := spawner()
	for ti := range p.Threads {
		nodes := p.Threads[ti].Nodes
		at := make([]int, len(nodes)) // input node -> output node (or nearest kept ancestor's)
		dropped := make([]bool, len(nodes))
		var out []model.Node
		for i := range nodes {
			n := nodes[i]
			if i > 0 && n.Parent != 0 && n.SelfNs < 20 {
				dropped[i] = true
				at[i] = at[n.Parent]
				out[at[i]].DroppedNs += n.SelfNs
				continue
			}
			if i > 0 {
				n.Elided = dropped[n.Parent]
				n.Parent = at[n.Parent]
				for j := 1; j < len(out); j++ {
					if out[j].Parent == n.Parent && out[j].Func == n.Func {
						panic("pruned: sibling clash; pick another script")
					}
				}
			}
			at[i] = len(out)
			out = append(out, n)
		}
		p.Threads[ti].Nodes = out
	}
	if err := p.Validate(); err != nil {
		panic(err)
	}
	return p
}

func TestPrunedInput(t *testing.T) {
	p := pruned()
	var elided int
	var dropped int64
	for _, th := range p.Threads {
		for _, n := range th.Nodes {
			if n.Elided {
				elided++
			}
			dropped += n.DroppedNs
		}
	}
	if elided == 0 || dropped == 0 {
		t.Fatalf("pruned() has %d elided nodes, %dns dropped: not a pruned profile", elided, dropped)
	}
	m := mustMerge(t, Run{"p", p}, Run{"s", spawner()})
	var melided int
	var mdropped int64
	for _, th := range m.Threads {
		for _, n := range th.Nodes {
			if n.Elided {
				melided++
			}
			mdropped += n.DroppedNs
		}
	}
	if melided == 0 || mdropped != dropped {
		t.Errorf("merged: %d elided nodes, %dns dropped; want some and %dns", melided, mdropped, dropped)
	}
}

func mustMerge(t *testing.T, runs ...Run) *model.Profile {
	t.Helper()
	m, err := MergeRuns(runs)
	if err != nil {
		t.Fatalf("merge: %v", err)
	}
	if err := m.Validate(); err != nil {
		t.Fatalf("merged profile invalid: %v", err)
	}
	return m
}

func equal(t *testing.T, what string, a, b *model.Profile) {
	t.Helper()
	if !reflect.DeepEqual(a, b) {
		t.Errorf("%s: profiles differ: %s", what, firstDiff(a, b))
	}
}

// firstDiff names the first differing part, for readable failures.
func firstDiff(a, b *model.Profile) string {
	switch {
	case !reflect.DeepEqual(a.Meta, b.Meta):
		return fmt.Sprintf("meta\n%+v\n%+v", a.Meta, b.Meta)
	case !reflect.DeepEqual(a.Modules, b.Modules):
		return "modules"
	case !reflect.DeepEqual(a.Functions, b.Functions):
		return "functions"
	case !reflect.DeepEqual(a.Processes, b.Processes):
		return fmt.Sprintf("processes\n%+v\n%+v", a.Processes, b.Processes)
	case len(a.Threads) != len(b.Threads):
		return fmt.Sprintf("%d threads vs %d", len(a.Threads), len(b.Threads))
	}
	for i := range a.Threads {
		x, y := a.Threads[i], b.Threads[i]
		if !reflect.DeepEqual(x.Members, y.Members) {
			return fmt.Sprintf("thread %d members\n%+v\n%+v", i, x.Members, y.Members)
		}
		if len(x.Nodes) != len(y.Nodes) {
			return fmt.Sprintf("thread %d: %d nodes vs %d", i, len(x.Nodes), len(y.Nodes))
		}
		for j := range x.Nodes {
			if !reflect.DeepEqual(x.Nodes[j], y.Nodes[j]) {
				return fmt.Sprintf("thread %d node %d\n%+v\n%+v", i, j, x.Nodes[j], y.Nodes[j])
			}
		}
		x.Nodes, y.Nodes = nil, nil
		if !reflect.DeepEqual(x, y) {
			return fmt.Sprintf("thread %d\n%+v\n%+v", i, x, y)
		}
	}
	return "?"
}

func TestAssociative(t *testing.T) {
	ins := inputs()
	for i := 0; i+2 < len(ins); i++ {
		a, b, c := ins[i], ins[i+1], ins[i+2]
		t.Run(a.name+"+"+b.name+"+"+c.name, func(t *testing.T) {
			ra, rb, rc := Run{a.name, a.p()}, Run{b.name, b.p()}, Run{c.name, c.p()}
			bc := mustMerge(t, rb, rc)
			ab := mustMerge(t, ra, rb)
			left := mustMerge(t, ra, Run{"bc.data", bc})
			right := mustMerge(t, Run{"ab.data", ab}, rc)
			flat := mustMerge(t, ra, rb, rc)
			equal(t, "a+(b+c) vs (a+b)+c", left, right)
			equal(t, "a+(b+c) vs a+b+c", left, flat)
			if want := []string{a.name, b.name, c.name}; !reflect.DeepEqual(flat.Meta.Sources, sorted(want)) {
				t.Errorf("sources %q, want %q", flat.Meta.Sources, sorted(want))
			}
		})
	}
	// unnamed runs (Merge) too
	p, q, r := modeltest.Sample(), spawner(), attached()
	l, err1 := Merge(p, mustMerge(t, Run{Profile: q}, Run{Profile: r}))
	rr, err2 := Merge(mustMerge(t, Run{Profile: p}, Run{Profile: q}), r)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	equal(t, "Merge(p, Merge(q, r)) vs Merge(Merge(p, q), r)", l, rr)
}

func sorted(xs []string) []string {
	xs = slices.Clone(xs)
	slices.Sort(xs)
	return xs
}

func TestCommutative(t *testing.T) {
	ins := inputs()
	for i := range ins {
		for j := i + 1; j < len(ins); j++ {
			a, b := ins[i], ins[j]
			t.Run(a.name+"+"+b.name, func(t *testing.T) {
				ab := mustMerge(t, Run{a.name, a.p()}, Run{b.name, b.p()})
				ba := mustMerge(t, Run{b.name, b.p()}, Run{a.name, a.p()})
				equal(t, "a+b vs b+a", ab, ba)
			})
		}
	}
	// runs with the same name are ordered by content, not by position
	x := mustMerge(t, Run{"run.data", container(7, "serve")}, Run{"run.data", container(9, "batch")})
	y := mustMerge(t, Run{"run.data", container(9, "batch")}, Run{"run.data", container(7, "serve")})
	equal(t, "same-named runs swapped", x, y)
	// three-way permutations
	p, q, r := modeltest.Sample(), spawner(), attached()
	base, _ := Merge(p, q, r)
	for _, perm := range [][]*model.Profile{{p, r, q}, {q, p, r}, {q, r, p}, {r, p, q}, {r, q, p}} {
		m, err := Merge(perm...)
		if err != nil {
			t.Fatal(err)
		}
		equal(t, "permutation", base, m)
	}
}

func TestIdentityWithEmpty(t *testing.T) {
	for _, c := range inputs() {
		t.Run(c.name, func(t *testing.T) {
			alone := mustMerge(t, Run{c.name, c.p()})
			equal(t, "p+empty", alone, mustMerge(t, Run{c.name, c.p()}, Run{"empty", model.New()}))
			equal(t, "empty+p", alone, mustMerge(t, Run{"empty", model.New()}, Run{c.name, c.p()}))
			equal(t, "merge(merge(p))", alone, mustMerge(t, Run{"again", alone}))
			equal(t, "merge(merge(p)+empty)", alone, mustMerge(t, Run{"x", alone}, Run{"", model.New()}))
		})
	}
	m, err := Merge()
	if err != nil || len(m.Threads) != 0 || m.Meta.Mode != "merge" {
		t.Errorf("Merge() = %+v, %v; want an empty composite", m, err)
	}
	if err := m.Validate(); err != nil {
		t.Error(err)
	}
}

// vec is the numbers compared by conservation checks.
type vec struct {
	calls, rc, self, total, direct, indirect, plt, inflight, dropped int64
	nodes                                                            int
}

func (v *vec) add(n *model.Node) {
	v.calls += n.Calls
	v.rc += n.RecursiveCalls
	v.self += n.SelfNs
	v.total += n.TotalNs
	v.direct += n.DirectCalls
	v.indirect += n.IndirectCalls
	v.plt += n.PLTCalls
	v.inflight += n.InFlight
	v.dropped += n.DroppedNs
	v.nodes++
}

// perFunc sums node numbers per function identity ("module:name").
func perFunc(ps ...*model.Profile) map[string]vec {
	out := map[string]vec{}
	for _, p := range ps {
		for _, t := range p.Threads {
			for i := range t.Nodes {
				n := &t.Nodes[i]
				fn := p.Functions[n.Func]
				k := p.Modules[fn.Module].Path + ":" + fn.Name
				v := out[k]
				v.add(n)
				v.nodes = 0
				out[k] = v
			}
		}
	}
	return out
}

// threadKey names a source thread across runs.
func threadKey(run string, pid, tid int) string { return fmt.Sprintf("%s/%d/%d", run, pid, tid) }

// paths maps each calling context (path of function identities) of a
// thread, or of one member of a composite thread, to its numbers.
func paths(p *model.Profile, t *model.Thread, member int) map[string]model.Contrib {
	out := map[string]model.Contrib{}
	names := make([]string, len(t.Nodes))
	for i := range t.Nodes {
		n := &t.Nodes[i]
		fn := p.Functions[n.Func]
		names[i] = p.Modules[fn.Module].Path + ":" + fn.Name
		if i > 0 {
			names[i] = names[n.Parent] + ">" + names[i]
		}
		c := model.Contrib{Calls: n.Calls, RecursiveCalls: n.RecursiveCalls, SelfNs: n.SelfNs, TotalNs: n.TotalNs}
		if member != model.None {
			c = model.Contrib{}
			found := false
			for _, x := range n.Contribs {
				if x.Member == member {
					c, found = x, true
				}
			}
			if !found {
				continue
			}
		}
		c.Member = 0
		out[names[i]] = c
	}
	return out
}

func TestConservation(t *testing.T) {
	ins := inputs()
	var runs []Run
	var profiles []*model.Profile
	for _, c := range ins {
		p := c.p()
		runs = append(runs, Run{c.name, p})
		profiles = append(profiles, p)
	}
	m := mustMerge(t, runs...)

	// per function, every number adds up
	want, got := perFunc(profiles...), perFunc(m)
	for k, w := range want {
		if got[k] != w {
			t.Errorf("function %s: merged %+v, inputs %+v", k, got[k], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d functions with nodes after merge, %d before", len(got), len(want))
	}

	// every source thread is exactly one member, and its contributions
	// reproduce its own CCT context by context
	source := map[string]*model.Thread{}
	sourceProfile := map[string]*model.Profile{}
	var nthreads, nprocs int
	var traced int64
	for i, p := range profiles {
		nprocs += len(p.Processes)
		for ti := range p.Threads {
			th := &p.Threads[ti]
			k := threadKey(ins[i].name, p.Processes[th.Process].Pid, th.Tid)
			source[k], sourceProfile[k] = th, p
			nthreads++
			traced += th.TracedNs
		}
	}
	if len(m.Processes) != nprocs {
		t.Errorf("%d processes, want %d", len(m.Processes), nprocs)
	}
	var members int
	var mtraced int64
	for ti := range m.Threads {
		th := &m.Threads[ti]
		mtraced += th.TracedNs
		if th.Tid != 0 || th.Name != fmt.Sprintf("level %d", th.Level) || (ti > 0 && m.Threads[ti-1].Level >= th.Level) {
			t.Errorf("composite thread %d: tid %d name %q level %d breaks the conventions", ti, th.Tid, th.Name, th.Level)
		}
		for mi, mb := range th.Members {
			members++
			k := threadKey(m.Meta.Sources[mb.Run], mb.Pid, mb.Tid)
			src := source[k]
			if src == nil {
				t.Errorf("member %s has no source thread", k)
				continue
			}
			delete(source, k)
			sp, mp := paths(sourceProfile[k], src, model.None), paths(m, th, mi)
			if !reflect.DeepEqual(sp, mp) {
				t.Errorf("member %s: contexts differ from its source thread\n got %v\nwant %v", k, mp, sp)
			}
			if mb.TracedNs != src.TracedNs || mb.Level != th.Level || mb.Level != src.Level || mb.Name != src.Name {
				t.Errorf("member %s: %+v does not describe its source", k, mb)
			}
		}
	}
	if members != nthreads || len(source) != 0 {
		t.Errorf("%d members for %d source threads; unmatched %v", members, nthreads, source)
	}
	if mtraced != traced {
		t.Errorf("traced %d ns, inputs %d ns", mtraced, traced)
	}
}

func TestMeta(t *testing.T) {
	m := mustMerge(t, Run{"b.data", attached()}, Run{"a.data", spawner()})
	x := m.Meta
	if x.Mode != "merge" || x.DurationNs != 5_000 || x.Stops != 52 || x.TracedCalls != 26 || !x.Partial ||
		x.PartialReason != "target crashed" || x.Crash == nil || x.Crash.Pid != 500 || x.StartUnixNs != 1_700_000_000_000_000_000 {
		t.Errorf("meta %+v", x)
	}
	if !reflect.DeepEqual(x.Sources, []string{"a.data", "b.data"}) || !reflect.DeepEqual(x.Filters, []string{"compute|worker"}) ||
		!reflect.DeepEqual(x.Libs, []string{"libpthread.so.0"}) || x.Exe != "/bin/pool" {
		t.Errorf("meta %+v", x)
	}
	for _, th := range m.Threads {
		for _, mb := range th.Members {
			want := "a.data"
			if mb.Pid == 500 {
				want = "b.data"
			}
			if x.Sources[mb.Run] != want {
				t.Errorf("member pid %d tid %d labelled %q, want %q", mb.Pid, mb.Tid, x.Sources[mb.Run], want)
			}
		}
	}
	// the exec'd image keeps following the image it replaced
	for i, pr := range m.Processes {
		if pr.Pid == 500 && pr.Exe == "/bin/pool" && (pr.ExecOf == model.None || m.Processes[pr.ExecOf].Exe != "/bin/sh" || pr.ExecOf >= i) {
			t.Errorf("exec'd process %+v lost its image", pr)
		}
	}
	// different executables: exe and command cleared
	m = mustMerge(t, Run{"a", spawner()}, Run{"b", modeltest.Sample()})
	if m.Meta.Exe != "" || m.Meta.Command != nil {
		t.Errorf("exe %q command %q, want both cleared", m.Meta.Exe, m.Meta.Command)
	}
}

func TestCanonicalOrder(t *testing.T) {
	m := mustMerge(t, Run{"a", spawner()}, Run{"b", attached()}, Run{"c", modeltest.Sample()})
	for i := 1; i < len(m.Modules); i++ {
		if m.Modules[i-1].Path >= m.Modules[i].Path {
			t.Errorf("modules not sorted: %q before %q", m.Modules[i-1].Path, m.Modules[i].Path)
		}
	}
	for i := 2; i < len(m.Functions); i++ {
		a, b := m.Functions[i-1], m.Functions[i]
		if a.Module > b.Module || a.Module == b.Module && a.Name >= b.Name {
			t.Errorf("functions not sorted: %v before %v", a, b)
		}
	}
	for ti, th := range m.Threads {
		for mi := 1; mi < len(th.Members); mi++ {
			if compareMembers(&th.Members[mi-1], &th.Members[mi]) >= 0 {
				t.Errorf("thread %d members not sorted", ti)
			}
		}
		// depth-first pre-order, children by function
		last := map[int]int{}
		for i := 1; i < len(th.Nodes); i++ {
			n := th.Nodes[i]
			if f, ok := last[n.Parent]; ok && f >= n.Func {
				t.Errorf("thread %d node %d: children of %d out of order", ti, i, n.Parent)
			}
			last[n.Parent] = n.Func
			if prev := th.Nodes[i-1]; n.Parent != i-1 && !isAncestor(th.Nodes, n.Parent, i-1) {
				t.Errorf("thread %d node %d: not in depth-first pre-order (prev %v)", ti, i, prev)
			}
		}
	}
}

func isAncestor(nodes []model.Node, a, n int) bool {
	for ; n != model.None; n = nodes[n].Parent {
		if n == a {
			return true
		}
	}
	return false
}

func TestRoundTrip(t *testing.T) {
	for _, c := range inputs() {
		t.Run(c.name, func(t *testing.T) {
			m := mustMerge(t, Run{c.name, c.p()}, Run{"sample", modeltest.Sample()})
			var buf bytes.Buffer
			if err := model.Write(&buf, m); err != nil {
				t.Fatal(err)
			}
			back, err := model.Read(&buf)
			if err != nil {
				t.Fatal(err)
			}
			equal(t, "write/read", m, back)
		})
	}
}

// TestGraph checks the composite's derived call graph: no path through
// thread roots comes back to where it started, and spawn edges count the
// spawned threads.
func TestGraph(t *testing.T) {
	for _, c := range []named{{"spawner", spawner}, {"sample", modeltest.Sample}, {"attached", attached}} {
		t.Run(c.name, func(t *testing.T) {
			src := c.p()
			m := mustMerge(t, Run{c.name, src}, Run{"spawner2", spawner()})
			g := m.Graph(model.Scope{})
			// the sample forks a child whose root is main again, at level
			// 0: fork edges legitimately return to the level-0 roots, so
			// follow calls and spawns only
			adj := map[int][]int{}
			var spawns int64
			for _, e := range g.Edges {
				if e.Kind != model.EdgeFork {
					adj[e.From] = append(adj[e.From], e.To)
				}
				if e.Kind == model.EdgeSpawn {
					spawns += e.Calls
					var shares int64
					for _, tv := range e.Threads {
						shares += tv.Calls
					}
					if shares != e.Calls {
						t.Errorf("spawn edge %v: thread shares add up to %d", e, shares)
					}
				}
			}
			roots := 0
			for i, n := range g.Nodes {
				if n.Key.Level == model.None || i == 0 {
					continue
				}
				roots++
				if reaches(adj, i, i) {
					t.Errorf("thread root %s at level %d reaches itself", m.FuncName(n.Key.Func), n.Key.Level)
				}
			}
			if roots == 0 {
				t.Error("no thread roots in the graph")
			}
			var want int64
			for _, p := range []*model.Profile{src, spawner()} {
				for _, th := range p.Threads {
					if th.SpawnedBy != model.None && th.RootFunc() != model.StartFunc {
						want++
					}
				}
			}
			if spawns != want {
				t.Errorf("spawn edges count %d threads, want %d", spawns, want)
			}
		})
	}
}

func reaches(adj map[int][]int, from, target int) bool {
	seen := map[int]bool{}
	stack := slices.Clone(adj[from])
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if n == target {
			return true
		}
		if !seen[n] {
			seen[n] = true
			stack = append(stack, adj[n]...)
		}
	}
	return false
}

func TestErrors(t *testing.T) {
	bad := modeltest.Sample()
	bad.Threads[0].Nodes[3].Parent = 7
	broken, _ := Merge(modeltest.Sample())
	broken.Threads[1].Members = nil
	for i := range broken.Threads[1].Nodes {
		broken.Threads[1].Nodes[i].Contribs = nil
	}
	noShares, _ := Merge(modeltest.Counted())
	noShares.Threads[1].Arcs[0].Contribs = nil
	badArc := modeltest.Counted()
	badArc.Threads[0].Arcs[0].Callee = len(badArc.Functions)
	for _, c := range []struct {
		name string
		runs []Run
		want string
	}{
		{"nil profile", []Run{{"x.data", nil}}, "no profile"},
		{"invalid input", []Run{{"bad.data", bad}}, "bad.data"},
		{"composite thread without members", []Run{{"c.data", broken}}, "no members"},
		{"composite arc without member shares", []Run{{"c.data", noShares}}, "arc 0 has calls but no member contributions"},
		{"arc callee out of range", []Run{{"a.data", badArc}}, "thread 0 arc 0: caller or callee out of range"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := MergeRuns(c.runs)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want one mentioning %q", err, c.want)
			}
		})
	}
}

// TestInputsUntouched: merge is pure.
func TestInputsUntouched(t *testing.T) {
	a, b := spawner(), attached()
	m := mustMerge(t, Run{"a", a}, Run{"b", b})
	m.Threads[0].Nodes[1].Calls += 100
	m.Processes[0].Argv[0] = "changed"
	equal(t, "a after merge", a, spawner())
	equal(t, "b after merge", b, attached())
	_ = m
}

func BenchmarkMerge(b *testing.B) {
	p := modeltest.Synthetic(1_000_000, 64, 1)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := Merge(p); err != nil {
			b.Fatal(err)
		}
	}
}
