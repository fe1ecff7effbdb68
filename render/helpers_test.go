package render_test

import (
	"fmt"
	"math/rand"

	"github.com/profile-dev/profile/model"
)

// treeProfile is one thread whose CCT is a random tree of n contexts over
// funcs distinct functions (funcs >= n gives one function per context),
// with recursion (a few back-calls) and, when pruned, elided contexts and
// folded self time as prune leaves them.
func treeProfile(n, funcs int, seed int64, pruned bool) *model.Profile {
	rng := rand.New(rand.NewSource(seed))
	p := model.New()
	p.Meta = model.Meta{Mode: "synthetic", Exe: "/bin/big", Command: []string{"/bin/big"}}
	in := model.NewInterner(p)
	exe := in.Module("/bin/big", "")
	lib := in.Module("/usr/lib/libbig.so.1", "")
	fs := make([]int, funcs)
	for i := range fs {
		m := exe
		if i%7 == 6 {
			m = lib
		}
		fs[i] = in.Func(m, fmt.Sprintf("ns::fn_%04d<int>", i))
	}
	p.Processes = []model.Process{{Pid: 1, Parent: model.None, ForkedBy: model.None, ExecOf: model.None, Exe: "/bin/big"}}
	t := model.NewTree()
	for len(t.Nodes) < n {
		parent := 0
		if len(t.Nodes) > 1 {
			parent = 1 + rng.Intn(len(t.Nodes)-1)
		}
		f := fs[len(t.Nodes)%funcs]
		if rng.Intn(20) == 0 && parent > 0 { // recursion: call an ancestor's function again
			f = t.Nodes[parent].Func
		}
		c := t.Child(parent, f)
		nd := &t.Nodes[c]
		nd.Calls += int64(1 + rng.Intn(100))
		nd.DirectCalls = nd.Calls
		nd.SelfNs += int64(rng.Intn(1_000_000))
		if pruned && rng.Intn(10) == 0 {
			nd.Elided = true
			nd.DroppedNs = int64(rng.Intn(50_000))
		}
	}
	var traced int64
	ns := t.Nodes
	for i := len(ns) - 1; i >= 0; i-- {
		ns[i].TotalNs += ns[i].SelfNs
		if i > 0 {
			ns[ns[i].Parent].TotalNs += ns[i].TotalNs
		}
		traced += ns[i].SelfNs + ns[i].DroppedNs
	}
	ns[0].TotalNs = 0
	// recursive contexts: their time is inside the outer activation
	for i := 1; i < len(ns); i++ {
		for a := ns[i].Parent; a > 0; a = ns[a].Parent {
			if ns[a].Func == ns[i].Func {
				ns[i].RecursiveCalls = ns[i].Calls
				ns[i].TotalNs = 0
				break
			}
		}
	}
	p.Threads = []model.Thread{{Tid: 1, Process: 0, Name: "big", SpawnedBy: model.None, TracedNs: traced, Nodes: ns}}
	return p
}
