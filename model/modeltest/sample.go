// Package modeltest builds profiles in code for the tests and benchmarks of
// the offline packages: a small hand-checked sample and large synthetic
// ones. Every profile it returns passes Validate.
package modeltest

import (
	"fmt"
	"math/rand"

	"github.com/profile-dev/profile/model"
)

// Script drives one thread's Recorder: each step enters (a function name)
// or exits ("") after Dt nanoseconds, or gives CPU samples (CPU).
type Step struct {
	Dt   int64
	Func string // "" exits the innermost activation
	Kind model.CallKind
	// Samples, when positive, makes the step that many CPU samples of
	// Builder.Period each, given as Recorder.Sample gives them: to the
	// innermost activation, or to Func's context below it.
	Samples int64
}

// Builder assembles a profile thread by thread from scripts.
type Builder struct {
	P      *model.Profile
	in     *model.Interner
	exe    int
	modIdx map[string]int
	// Period is the CPU sampling period of CPU steps; Samples counts the
	// samples they gave.
	Period  int64
	Samples int64
}

// NewBuilder starts a profile whose main executable is exe.
func NewBuilder(exe string) *Builder {
	p := model.New()
	p.Meta = model.Meta{ToolVersion: "test", Mode: "synthetic", Command: []string{exe}, Exe: exe}
	b := &Builder{P: p, in: model.NewInterner(p), modIdx: map[string]int{}}
	b.exe = b.in.Module(exe, "")
	return b
}

// Func interns a function: "name" lives in the executable, "lib.so:name"
// in that library (path /lib/lib.so).
func (b *Builder) Func(name string) int {
	for i := 0; i < len(name); i++ {
		if name[i] == ':' && i+1 < len(name) && name[i+1] != ':' && (i == 0 || name[i-1] != ':') {
			m := b.in.Module("/lib/"+name[:i], "")
			return b.in.Func(m, name[i+1:])
		}
	}
	return b.in.Func(b.exe, name)
}

// Process adds a process and returns its index. forkedBy may be "".
func (b *Builder) Process(pid, parent int, forkedBy string, forkedByTid int) int {
	pr := model.Process{Pid: pid, Parent: parent, ForkedBy: model.None, ForkedByTid: forkedByTid,
		ExecOf: model.None, Exe: b.P.Meta.Exe, Argv: []string{b.P.Meta.Exe}, Exited: true}
	if parent != model.None {
		pr.ParentPid = b.P.Processes[parent].Pid
	}
	if forkedBy != "" {
		pr.ForkedBy = b.Func(forkedBy)
	}
	b.P.Processes = append(b.P.Processes, pr)
	return len(b.P.Processes) - 1
}

// Thread runs a script through a Recorder and adds the thread.
func (b *Builder) Thread(proc, tid, parentTid int, spawnedBy string, level int, inflight []string, script []Step) int {
	var now int64 = 1_000
	r := model.NewRecorder(now)
	for _, f := range inflight {
		r.EnterInFlight(b.Func(f), now)
	}
	for _, s := range script {
		now += s.Dt
		if s.Samples > 0 {
			if b.Period <= 0 {
				panic("modeltest: CPU samples without a Builder.Period")
			}
			fn := model.None
			if s.Func != "" {
				fn = b.Func(s.Func)
			}
			r.Sample(fn, s.Samples*b.Period)
			b.Samples += s.Samples
			continue
		}
		if s.Func == "" {
			if !r.Exit(now) {
				panic("modeltest: exit with nothing open")
			}
			continue
		}
		r.Enter(b.Func(s.Func), now, s.Kind)
	}
	nodes, traced := r.Finish(now + 10)
	t := model.Thread{Tid: tid, Process: proc, Name: fmt.Sprintf("t%d", tid), ParentTid: parentTid,
		SpawnedBy: model.None, Level: level, TracedNs: traced, Nodes: nodes}
	if spawnedBy != "" {
		t.SpawnedBy = b.Func(spawnedBy)
	}
	b.P.Threads = append(b.P.Threads, t)
	return len(b.P.Threads) - 1
}

// Enter is a step calling f directly after dt ns, PLT through the PLT;
// Exit returns from the innermost call after dt ns.
func Enter(dt int64, f string) Step { return Step{Dt: dt, Func: f, Kind: model.KindDirect} }
func PLT(dt int64, f string) Step   { return Step{Dt: dt, Func: f, Kind: model.KindPLT} }
func Exit(dt int64) Step            { return Step{Dt: dt} }

// CPU is a step giving n CPU samples to the innermost activation or, with
// fn, to fn's context below it (a function without frames: a counted
// one).
func CPU(n int64, fn string) Step { return Step{Func: fn, Samples: n} }

// Sample is a small profile with every feature: recursion (fib, depth 3),
// a library call through the PLT, a thread spawning a thread (levels 0, 1
// and 2), a worker called both from main and as a thread root, and a
// forked child whose in-flight frames were copied from its parent.
func Sample() *model.Profile { return sample().P }

func sample() *Builder {
	b := NewBuilder("/bin/app")
	p0 := b.Process(100, model.None, "", 0)
	b.Thread(p0, 100, 0, "", 0, nil, []Step{
		Enter(100, "main"),
		Enter(50, "fib"), Enter(10, "fib"), Enter(10, "fib"), Exit(30), Exit(20), Exit(40),
		{Dt: 5, Func: "libc.so.6:usleep", Kind: model.KindPLT}, Exit(500),
		Enter(5, "worker"), Exit(200),
		Enter(5, "spawn_workers"), Enter(5, "libc.so.6:pthread_create"), Exit(20), Exit(5),
		Enter(5, "do_fork"), Enter(5, "libc.so.6:fork"), Exit(60), Exit(5),
		Exit(10),
	})
	b.Thread(p0, 101, 100, "spawn_workers", 1, nil, []Step{
		{Dt: 3, Func: "worker", Kind: model.KindIndirect},
		Enter(5, "spawn_more"), Enter(5, "libc.so.6:pthread_create"), Exit(15), Exit(5),
		Enter(5, "compute"), Exit(300), Exit(5),
	})
	b.Thread(p0, 102, 101, "spawn_more", 2, nil, []Step{
		{Dt: 2, Func: "worker", Kind: model.KindIndirect}, Enter(5, "compute"), Exit(120), Exit(5),
	})
	p1 := b.Process(200, p0, "do_fork", 100)
	b.Thread(p1, 200, 0, "", 0, []string{"main", "do_fork"}, []Step{
		Enter(20, "child_work"), Enter(5, "fib"), Enter(5, "fib"), Exit(10), Exit(10), Exit(80),
	})
	return b
}

// Synthetic builds a profile of about nodes CCT nodes over threads threads
// with random but valid shapes, for benchmarks. seed makes it repeatable.
func Synthetic(nodes, threads int, seed int64) *model.Profile {
	rng := rand.New(rand.NewSource(seed))
	p := model.New()
	p.Meta = model.Meta{ToolVersion: "test", Mode: "synthetic", Exe: "/bin/synthetic", Command: []string{"/bin/synthetic"}}
	in := model.NewInterner(p)
	exe := in.Module("/bin/synthetic", "")
	libc := in.Module("/lib/libc.so.6", "")
	funcs := make([]int, 2000)
	for i := range funcs {
		m := exe
		if i%10 == 9 {
			m = libc
		}
		funcs[i] = in.Func(m, fmt.Sprintf("fn_%04d", i))
	}
	p.Processes = []model.Process{{Pid: 1000, Parent: model.None, ForkedBy: model.None, ExecOf: model.None, Exe: "/bin/synthetic"}}
	per := nodes / threads
	for ti := 0; ti < threads; ti++ {
		tree := model.NewTree()
		for len(tree.Nodes) < per {
			parent := 0
			if len(tree.Nodes) > 1 {
				// bias towards recent nodes: deep, bushy trees like real CCTs
				parent = len(tree.Nodes) - 1 - rng.Intn(min(len(tree.Nodes)-1, 64))
				if rng.Intn(8) == 0 {
					parent = rng.Intn(len(tree.Nodes))
				}
			}
			n := tree.Child(parent, funcs[rng.Intn(len(funcs))])
			nd := &tree.Nodes[n]
			calls := int64(1 + rng.Intn(1000))
			nd.Calls += calls
			nd.DirectCalls += calls
			nd.SelfNs += int64(rng.Intn(1_000_000))
		}
		var traced int64
		// totals: a node's total is its self plus its subtree (no recursion)
		ns := tree.Nodes
		for i := len(ns) - 1; i >= 0; i-- {
			ns[i].TotalNs += ns[i].SelfNs
			if i > 0 {
				ns[ns[i].Parent].TotalNs += ns[i].TotalNs
			}
			traced += ns[i].SelfNs
		}
		ns[0].TotalNs = 0
		tid := 1000 + ti
		parentTid, spawned, level := 0, model.None, 0
		if ti > 0 {
			parentTid, spawned, level = 1000, funcs[0], 1
		}
		p.Threads = append(p.Threads, model.Thread{Tid: tid, Process: 0, Name: "synthetic", ParentTid: parentTid,
			SpawnedBy: spawned, Level: level, TracedNs: traced, Nodes: ns})
	}
	return p
}

// SampleComposite folds Sample's threads 101 and 102 by hand into one
// composite thread with two members (runs 0 and 1), as merge would for
// threads of one nesting level: the offline packages test composites
// without depending on merge.
func SampleComposite() *model.Profile {
	p := Sample()
	a, b := p.Threads[1], p.Threads[2]
	tree := model.TreeOf(append([]model.Node(nil), a.Nodes...))
	for i := range tree.Nodes {
		n := &tree.Nodes[i]
		n.Contribs = []model.Contrib{{Member: 0, Calls: n.Calls, RecursiveCalls: n.RecursiveCalls, SelfNs: n.SelfNs, TotalNs: n.TotalNs}}
	}
	idx := make([]int, len(b.Nodes))
	for i, n := range b.Nodes {
		j := 0
		if i > 0 {
			j = tree.Child(idx[n.Parent], n.Func)
		}
		idx[i] = j
		m := &tree.Nodes[j]
		m.Calls += n.Calls
		m.RecursiveCalls += n.RecursiveCalls
		m.SelfNs += n.SelfNs
		m.TotalNs += n.TotalNs
		m.DirectCalls += n.DirectCalls
		m.IndirectCalls += n.IndirectCalls
		m.PLTCalls += n.PLTCalls
		m.Contribs = append(m.Contribs, model.Contrib{Member: 1, Calls: n.Calls, RecursiveCalls: n.RecursiveCalls, SelfNs: n.SelfNs, TotalNs: n.TotalNs})
	}
	c := model.Thread{Tid: a.Tid, Process: a.Process, Name: "worker", ParentTid: a.ParentTid, SpawnedBy: a.SpawnedBy,
		Level: a.Level, TracedNs: a.TracedNs + b.TracedNs, Nodes: tree.Nodes,
		Members: []model.Member{
			{Run: 0, Pid: 100, Tid: a.Tid, Name: a.Name, ParentTid: a.ParentTid, SpawnedBy: a.SpawnedBy, Level: a.Level, TracedNs: a.TracedNs},
			{Run: 1, Pid: 100, Tid: b.Tid, Name: b.Name, ParentTid: b.ParentTid, SpawnedBy: b.SpawnedBy, Level: a.Level, TracedNs: b.TracedNs},
		}}
	p.Threads = []model.Thread{p.Threads[0], c, p.Threads[3]}
	return p
}
