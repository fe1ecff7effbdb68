// Package merge builds composite profiles (docs/design.md, Offline
// analytics): any number of runs, with all their processes and threads,
// become one profile whose threads are partitioned by nesting level and
// whose calling contexts are merged by path of functions.
//
// # Conventions
//
// Composite threads. The result has exactly one thread per nesting level
// present in the inputs, in increasing level order. A composite thread has
// Tid 0, ParentTid 0, Name "level N", Level N, TracedNs = the sum of its
// members' traced times, SpawnedBy = the spawning function shared by all its
// members (model.None when they differ or none has one), and Process = the
// first process entry (in the output's order) whose pid is the pid of its
// first member. Members lists every source thread, with Member.Run indexing
// Meta.Sources; members of composite inputs are flattened into members of
// the result, so merging is associative. Every node carries one Contrib per
// member that reached the context (Contribs sorted by member), even when that
// member's numbers there are all zero. A composite thread's counted calls
// (Arcs) are its members' summed by (caller, callee), each arc with one
// ArcContrib per member that made such calls.
//
// Runs and sources. Each input is a run labelled by Run.Name (Merge, which
// takes no names, labels a run with DefaultName). A composite input does
// not add its own label: its Meta.Sources are flattened in its place. Inputs
// without processes and threads (model.New()) are ignored entirely, so
// merging with an empty profile changes nothing. Meta.Sources is sorted by
// name; runs with the same name are ordered by a fingerprint of their
// member threads.
//
// Canonical order. Modules are sorted by path (the empty module of START
// first); functions by (module path, name) after START; a module's build id
// is the smallest non-empty one seen. A function's TracedSinceNs (when
// record --auto-expand began tracing it) is the largest of its inputs'
// (inputs without the function do not count): the window, from each run's
// start on, that every run covers at least. Processes are the multiset of
// all input processes, re-indexed, ordered as a forest (tree parent: the image
// an exec replaced, else the fork parent) walked depth first, siblings and
// roots sorted by pid, then by their other fields, then by a hash of their
// subtree. Members are sorted by (run, pid, tid, level, name, parent tid,
// spawning function, traced time). Nodes are in depth-first pre-order with
// children sorted by function index (function identity). So the result
// does not depend on the order or grouping of the inputs:
// Merge(a, Merge(b, c)), Merge(Merge(a, b), c) and Merge(c, b, a) are deep
// equal.
//
// Meta. Mode is "merge"; DurationNs, Stops, TracedCalls and Breakpoints are
// sums (DurationNs is the total wall time profiled over all runs);
// StartUnixNs is the earliest non-zero start; StopOverheadNs the largest;
// Partial is set if any input was partial, with the distinct reasons
// sorted and joined by "; "; Filters, Excludes and Libs are sorted unions;
// ToolVersion, Command, Exe, Comm and BuildID are kept when all inputs agree and
// cleared otherwise; Crash is the crash with the smallest (pid, tid) if any.
// Detached is set if any input was: a merge of detached profiles is
// detached, not partial.
// Calibration is kept when every input has one: the first input's costs
// (each input's times were compensated with its own), Compensated only if
// every input was, the time taken out summed.
// Sampled inputs (model.Sampling) merge only with sampled inputs of the
// same type (model.CompatibleValues); Sampling is kept, its Period cleared
// when the inputs' periods differ.
// CPUSamples (record --sample) is set when any input has it: its counts
// summed over those inputs, PeriodNs theirs when they all agree and 0
// (mixed) otherwise, WithKernel only if every one sampled the kernel, and
// NotSampled the sorted union of their reasons, with "some runs were not
// sampled" when an input has none: model.Profile.Busy then takes a
// member thread without any sample for one that was not sampled and
// keeps its measured times. Nodes sum SampledNs and DroppedSampledNs like
// their times, each split by member in Contribs.
package merge

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/profile-dev/profile/model"
)

// Run is one labelled input of MergeRuns.
type Run struct {
	Name    string // label recorded in Meta.Sources, e.g. the file name
	Profile *model.Profile
}

// Merge merges profiles into one composite profile; runs are labelled by
// DefaultName. A single profile merges its own threads.
func Merge(profiles ...*model.Profile) (*model.Profile, error) {
	runs := make([]Run, len(profiles))
	for i, p := range profiles {
		runs[i] = Run{Profile: p}
	}
	return MergeRuns(runs)
}

// DefaultName labels an unnamed run: the executable's base name and the
// first pid, e.g. "app[4242]".
func DefaultName(p *model.Profile) string {
	name := path.Base(p.Meta.Exe)
	if p.Meta.Exe == "" {
		name = "run"
	}
	if len(p.Processes) > 0 {
		name += "[" + strconv.Itoa(p.Processes[0].Pid) + "]"
	}
	return name
}

// input is one non-empty run being merged.
type input struct {
	name      string
	p         *model.Profile
	composite bool
	leaves    []*leaf // composite: one per source; recorded: exactly one
	fmap      []int   // input function -> output function
	pmap      []int   // input process -> output process
}

// leaf is one original run (a source of the result).
type leaf struct {
	name string
	fp   string
	out  int
}

// MergeRuns merges labelled runs into one composite profile.
func MergeRuns(runs []Run) (*model.Profile, error) {
	var ins []*input
	for i, r := range runs {
		if r.Profile == nil {
			return nil, fmt.Errorf("merge: run %d (%q): no profile", i, r.Name)
		}
		if len(r.Profile.Processes) == 0 && len(r.Profile.Threads) == 0 {
			continue
		}
		name := r.Name
		if name == "" {
			name = DefaultName(r.Profile)
		}
		if err := checkInput(r.Profile); err != nil {
			return nil, fmt.Errorf("merge %s: %w", name, err)
		}
		if len(ins) > 0 {
			if err := model.CompatibleValues(&ins[0].p.Meta, &r.Profile.Meta); err != nil {
				return nil, fmt.Errorf("merge %s and %s: %w", ins[0].name, name, err)
			}
		}
		in := &input{name: name, p: r.Profile}
		if err := in.classify(); err != nil {
			return nil, fmt.Errorf("merge %s: %w", name, err)
		}
		ins = append(ins, in)
	}
	out := model.New()
	mergeTables(out, ins)
	sortLeaves(out, ins)
	if err := mergeProcesses(out, ins); err != nil {
		return nil, err
	}
	if err := mergeThreads(out, ins); err != nil {
		return nil, err
	}
	mergeMeta(out, ins)
	return out, nil
}

// classify tells a composite input (it has sources or member threads) from
// a recorded one and checks that its member runs are in range.
func (in *input) classify() error {
	p := in.p
	for i := range p.Threads {
		if len(p.Threads[i].Members) > 0 {
			in.composite = true
		}
	}
	in.composite = in.composite || len(p.Meta.Sources) > 0
	if !in.composite {
		in.leaves = []*leaf{{name: in.name}}
		return nil
	}
	names := p.Meta.Sources
	if len(names) == 0 {
		names = []string{in.name}
	}
	for _, n := range names {
		in.leaves = append(in.leaves, &leaf{name: n})
	}
	for ti := range p.Threads {
		t := &p.Threads[ti]
		if len(t.Members) == 0 {
			return fmt.Errorf("thread %d (tid %d) of a composite profile has no members", ti, t.Tid)
		}
		for mi, m := range t.Members {
			if m.Run < 0 || m.Run >= len(in.leaves) {
				return fmt.Errorf("thread %d member %d: run %d out of range (%d sources)", ti, mi, m.Run, len(in.leaves))
			}
		}
	}
	return nil
}

// mergeTables unifies modules by path and functions by (module path, name)
// in canonical order, and fills each input's function map. A function's
// TracedSinceNs is the latest of its inputs', its TracedUntilNs the
// earliest set, its probe kind theirs when they agree (mergeProbe).
func mergeTables(out *model.Profile, ins []*input) {
	build := map[string]string{}
	dynamicOnly := map[string]bool{}
	symbolsFrom := map[string]string{}
	funcs := model.NewFuncMap(model.ByPath)
	for _, in := range ins {
		for _, m := range in.p.Modules {
			dynamicOnly[m.Path] = dynamicOnly[m.Path] || m.DynamicOnly
			if symbolsFrom[m.Path] == "" {
				symbolsFrom[m.Path] = m.SymbolsFrom
			}
			if b, ok := build[m.Path]; !ok || (m.BuildID != "" && (b == "" || m.BuildID < b)) {
				build[m.Path] = m.BuildID
			}
		}
		funcs.Add(in.p)
	}
	paths := make([]string, 0, len(build))
	for p := range build {
		if p != "" {
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	modIdx := map[string]int{"": 0}
	out.Modules[0].BuildID = build[""]
	for _, p := range paths {
		modIdx[p] = len(out.Modules)
		out.Modules = append(out.Modules, model.Module{Path: p, BuildID: build[p], DynamicOnly: dynamicOnly[p], SymbolsFrom: symbolsFrom[p]})
	}
	funcs.Sort()
	for _, id := range funcs.IDs[model.StartFunc+1:] {
		out.Functions = append(out.Functions, model.Function{Module: modIdx[id.Module], Name: id.Name})
	}
	seen := make([]bool, len(out.Functions))
	for _, in := range ins {
		in.fmap = funcs.Add(in.p)
		for f, fn := range in.p.Functions {
			o := &out.Functions[in.fmap[f]]
			o.TracedSinceNs = max(o.TracedSinceNs, fn.TracedSinceNs)
			if fn.TracedUntilNs > 0 && (o.TracedUntilNs == 0 || fn.TracedUntilNs < o.TracedUntilNs) {
				o.TracedUntilNs = fn.TracedUntilNs
			}
			mergeProbe(o, fn, seen[in.fmap[f]])
			seen[in.fmap[f]] = true
		}
	}
}

// fn maps an input function index (or None) to the output's.
func (in *input) fn(f int) int {
	if f == model.None {
		return model.None
	}
	return in.fmap[f]
}

// sortLeaves orders the original runs by name, then by a fingerprint of
// their member threads, and records the names as Meta.Sources.
func sortLeaves(out *model.Profile, ins []*input) {
	var all []*leaf
	for _, in := range ins {
		fps := make([][]string, len(in.leaves))
		for ti := range in.p.Threads {
			t := &in.p.Threads[ti]
			if !in.composite {
				m := recordedMember(in, t, 0)
				fps[0] = append(fps[0], memberKey(&m))
				continue
			}
			for _, m := range t.Members {
				m.SpawnedBy = in.fn(m.SpawnedBy)
				fps[m.Run] = append(fps[m.Run], memberKey(&m))
			}
		}
		for i, l := range in.leaves {
			slices.Sort(fps[i])
			l.fp = strings.Join(fps[i], ";")
			all = append(all, l)
		}
	}
	slices.SortStableFunc(all, func(a, b *leaf) int {
		return cmp.Or(cmp.Compare(a.name, b.name), cmp.Compare(a.fp, b.fp))
	})
	for i, l := range all {
		l.out = i
		out.Meta.Sources = append(out.Meta.Sources, l.name)
	}
}

func memberKey(m *model.Member) string {
	return fmt.Sprintf("%d/%d/%d/%q/%d/%d/%d", m.Pid, m.Tid, m.Level, m.Name, m.ParentTid, m.SpawnedBy, m.TracedNs)
}

// recordedMember describes a recorded thread of in as a member of run.
func recordedMember(in *input, t *model.Thread, run int) model.Member {
	return model.Member{Run: run, Pid: in.p.Processes[t.Process].Pid, Tid: t.Tid, Name: t.Name,
		ParentTid: t.ParentTid, SpawnedBy: in.fn(t.SpawnedBy), Level: t.Level, TracedNs: t.TracedNs}
}

func compareMembers(a, b *model.Member) int {
	return cmp.Or(cmp.Compare(a.Run, b.Run), cmp.Compare(a.Pid, b.Pid), cmp.Compare(a.Tid, b.Tid),
		cmp.Compare(a.Level, b.Level), cmp.Compare(a.Name, b.Name), cmp.Compare(a.ParentTid, b.ParentTid),
		cmp.Compare(a.SpawnedBy, b.SpawnedBy), cmp.Compare(a.TracedNs, b.TracedNs))
}

// proc is an input process on its way to the output.
type proc struct {
	pr     model.Process // ForkedBy already mapped; Parent, ExecOf still input indices
	in     *input
	idx    int // index in its input
	parent *proc
	deps   []*proc
	kids   []*proc
	own    string
	hash   uint64
	out    int
}

// mergeProcesses keeps every input process, in canonical order.
func mergeProcesses(out *model.Profile, ins []*input) error {
	var all, roots []*proc
	for _, in := range ins {
		ps := make([]*proc, len(in.p.Processes))
		for i, pr := range in.p.Processes {
			pr.ForkedBy = in.fn(pr.ForkedBy)
			pr.Argv = slices.Clone(pr.Argv)
			ps[i] = &proc{pr: pr, in: in, idx: i, out: -1}
			ps[i].own = ownKey(&pr)
		}
		for _, x := range ps {
			if x.pr.Parent != model.None {
				x.deps = append(x.deps, ps[x.pr.Parent])
			}
			if x.pr.ExecOf != model.None {
				x.deps = append(x.deps, ps[x.pr.ExecOf])
				x.parent = ps[x.pr.ExecOf]
			} else if x.pr.Parent != model.None {
				x.parent = ps[x.pr.Parent]
			}
			if x.parent != nil {
				x.parent.kids = append(x.parent.kids, x)
			} else {
				roots = append(roots, x)
			}
		}
		in.pmap = make([]int, len(ps))
		all = append(all, ps...)
	}
	for _, r := range roots {
		hashTree(r)
	}
	order := make([]*proc, 0, len(all))
	var walk func(xs []*proc)
	walk = func(xs []*proc) {
		slices.SortStableFunc(xs, compareProcs)
		for _, x := range xs {
			order = append(order, x)
			walk(x.kids)
		}
	}
	walk(roots)
	// Emit in that order, deferring a process whose dependencies (fork
	// parent, replaced image) are not out yet; valid inputs need one pass.
	pending := func(d *proc) bool { return d.out < 0 }
	var emitted []*proc
	for len(emitted) < len(order) {
		progress := false
		for _, x := range order {
			if x.out >= 0 || slices.ContainsFunc(x.deps, pending) {
				continue
			}
			x.out = len(emitted)
			x.in.pmap[x.idx] = x.out
			emitted = append(emitted, x)
			progress = true
		}
		if !progress {
			return fmt.Errorf("merge: process parents form a cycle")
		}
	}
	for _, x := range emitted {
		pr := x.pr
		if pr.Parent != model.None {
			pr.Parent = x.in.pmap[pr.Parent]
		}
		if pr.ExecOf != model.None {
			pr.ExecOf = x.in.pmap[pr.ExecOf]
		}
		out.Processes = append(out.Processes, pr)
	}
	return nil
}

func ownKey(pr *model.Process) string {
	return fmt.Sprintf("%d|%d|%d|%t|%q|%q|%q|%t|%d|%q", pr.ParentPid, pr.ForkedBy, pr.ForkedByTid, pr.ExecOf != model.None,
		pr.Exe, pr.Argv, pr.Comm, pr.Exited, pr.ExitCode, pr.Signal)
}

func compareProcs(a, b *proc) int {
	return cmp.Or(cmp.Compare(a.pr.Pid, b.pr.Pid), cmp.Compare(a.own, b.own), cmp.Compare(a.hash, b.hash))
}

// hashTree hashes each process with its subtree, so that two processes
// equal in every field but with different descendants sort apart.
func hashTree(x *proc) uint64 {
	kids := make([]string, len(x.kids))
	for i, k := range x.kids {
		kids[i] = fmt.Sprintf("%d|%s|%x", k.pr.Pid, k.own, hashTree(k))
	}
	slices.Sort(kids)
	h := fnv.New64a()
	fmt.Fprintf(h, "%d|%s", x.pr.Pid, x.own)
	for _, k := range kids {
		h.Write([]byte{0})
		h.Write([]byte(k))
	}
	x.hash = h.Sum64()
	return x.hash
}

// source is one input thread feeding a composite thread.
type source struct {
	in      *input
	t       *model.Thread
	members []int // input member (or 0 for a recorded thread) -> output member
}

// mergeThreads builds one composite thread per nesting level.
func mergeThreads(out *model.Profile, ins []*input) error {
	type level struct {
		members []*model.Member
		srcs    []*source
		mptr    [][]*model.Member // per source: its members, to number later
	}
	levels := map[int]*level{}
	for _, in := range ins {
		for ti := range in.p.Threads {
			t := &in.p.Threads[ti]
			lv := levels[t.Level]
			if lv == nil {
				lv = &level{}
				levels[t.Level] = lv
			}
			var ms []*model.Member
			if in.composite {
				for _, m := range t.Members {
					m.Run = in.leaves[m.Run].out
					m.SpawnedBy = in.fn(m.SpawnedBy)
					ms = append(ms, &m)
				}
			} else {
				m := recordedMember(in, t, in.leaves[0].out)
				ms = append(ms, &m)
			}
			lv.members = append(lv.members, ms...)
			lv.srcs = append(lv.srcs, &source{in: in, t: t})
			lv.mptr = append(lv.mptr, ms)
		}
	}
	nums := make([]int, 0, len(levels))
	for n := range levels {
		nums = append(nums, n)
	}
	slices.Sort(nums)
	for _, n := range nums {
		lv := levels[n]
		slices.SortStableFunc(lv.members, compareMembers)
		index := make(map[*model.Member]int, len(lv.members))
		t := model.Thread{Tid: 0, Name: "level " + strconv.Itoa(n), ParentTid: 0, Level: n, SpawnedBy: lv.members[0].SpawnedBy}
		for i, m := range lv.members {
			index[m] = i
			t.Members = append(t.Members, *m)
			t.TracedNs += m.TracedNs
			if m.SpawnedBy != t.SpawnedBy {
				t.SpawnedBy = model.None
			}
		}
		for si, s := range lv.srcs {
			for _, m := range lv.mptr[si] {
				s.members = append(s.members, index[m])
			}
		}
		t.Process = 0
		for i, pr := range out.Processes {
			if pr.Pid == t.Members[0].Pid {
				t.Process = i
				break
			}
		}
		nodes, err := mergeNodes(lv.srcs)
		if err != nil {
			return fmt.Errorf("merge level %d: %w", n, err)
		}
		t.Nodes = nodes
		if t.Arcs, err = mergeArcs(lv.srcs); err != nil {
			return fmt.Errorf("merge level %d: %w", n, err)
		}
		out.Threads = append(out.Threads, t)
	}
	return nil
}

// flatContrib is a member's share of a merged node, before sorting.
type flatContrib struct {
	node int32
	c    model.Contrib
}

// mergeNodes merges the CCTs of srcs by path of functions and returns the
// merged tree in canonical order.
func mergeNodes(srcs []*source) ([]model.Node, error) {
	total := 0
	for _, s := range srcs {
		total += len(s.t.Nodes)
	}
	acc := make([]model.Node, 1, total)
	acc[0] = model.Node{Func: model.StartFunc, Parent: model.None}
	kids := make(map[uint64]int32, total)
	contribs := make([]flatContrib, 0, total)
	var idx []int32
	for _, s := range srcs {
		nodes := s.t.Nodes
		idx = slices.Grow(idx[:0], len(nodes))[:len(nodes)]
		for i := range nodes {
			n := &nodes[i]
			var at int32
			if i > 0 {
				fn := s.in.fmap[n.Func]
				k := uint64(idx[n.Parent])<<32 | uint64(fn)
				var ok bool
				if at, ok = kids[k]; !ok {
					at = int32(len(acc))
					acc = append(acc, model.Node{Func: fn, Parent: int(idx[n.Parent])})
					kids[k] = at
				}
			}
			idx[i] = at
			a := &acc[at]
			a.Calls += n.Calls
			a.RecursiveCalls += n.RecursiveCalls
			a.SelfNs += n.SelfNs
			a.TotalNs += n.TotalNs
			a.DirectCalls += n.DirectCalls
			a.IndirectCalls += n.IndirectCalls
			a.PLTCalls += n.PLTCalls
			a.InFlight += n.InFlight
			a.DroppedNs += n.DroppedNs
			a.SampledNs += n.SampledNs
			a.DroppedSampledNs += n.DroppedSampledNs
			a.Elided = a.Elided || n.Elided
			if !s.in.composite {
				contribs = append(contribs, flatContrib{at, model.Contrib{Member: s.members[0],
					Calls: n.Calls, RecursiveCalls: n.RecursiveCalls, SelfNs: n.SelfNs, TotalNs: n.TotalNs,
					SampledNs: n.SampledNs, DroppedSampledNs: n.DroppedSampledNs}})
				continue
			}
			if len(n.Contribs) == 0 && (n.Calls != 0 || n.RecursiveCalls != 0 || n.SelfNs != 0 || n.TotalNs != 0 ||
				n.SampledNs != 0 || n.DroppedSampledNs != 0) {
				return nil, fmt.Errorf("composite thread %q node %d has numbers but no member contributions", s.t.Name, i)
			}
			for _, c := range n.Contribs {
				c.Member = s.members[c.Member]
				contribs = append(contribs, flatContrib{at, c})
			}
		}
	}
	return canonical(acc, contribs), nil
}

// canonical reorders a merged tree depth first, children sorted by
// function, and attaches the contributions sorted by member.
func canonical(acc []model.Node, contribs []flatContrib) []model.Node {
	n := len(acc)
	start := make([]int32, n+1) // CSR of children
	for i := 1; i < n; i++ {
		start[acc[i].Parent+1]++
	}
	for i := 0; i < n; i++ {
		start[i+1] += start[i]
	}
	kids := make([]int32, n)
	fn := make([]int32, n) // compact copy of the functions for sorting
	fill := slices.Clone(start[:n])
	for i := 1; i < n; i++ {
		p := acc[i].Parent
		kids[fill[p]] = int32(i)
		fill[p]++
		fn[i] = int32(acc[i].Func)
	}
	byFunc := func(a, b int32) int { return cmp.Compare(fn[a], fn[b]) }
	for i := 0; i < n; i++ {
		ks := kids[start[i]:start[i+1]]
		if len(ks) > 1 {
			slices.SortFunc(ks, byFunc)
		}
	}
	pos := make([]int32, n) // old -> new
	out := make([]model.Node, 0, n)
	stack := []int32{0}
	for len(stack) > 0 {
		o := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		pos[o] = int32(len(out))
		nd := acc[o]
		if o > 0 {
			nd.Parent = int(pos[nd.Parent])
		}
		out = append(out, nd)
		ks := kids[start[o]:start[o+1]]
		for j := len(ks) - 1; j >= 0; j-- {
			stack = append(stack, ks[j])
		}
	}
	// contributions: counting sort by new node, then by member
	cstart := make([]int32, n+1)
	for _, c := range contribs {
		cstart[pos[c.node]+1]++
	}
	for i := 0; i < n; i++ {
		cstart[i+1] += cstart[i]
	}
	slab := make([]model.Contrib, len(contribs))
	cfill := slices.Clone(cstart[:n])
	for _, c := range contribs {
		p := pos[c.node]
		slab[cfill[p]] = c.c
		cfill[p]++
	}
	for i := 0; i < n; i++ {
		cs := slab[cstart[i]:cstart[i+1]:cstart[i+1]]
		if len(cs) == 0 {
			continue
		}
		if len(cs) > 1 {
			slices.SortFunc(cs, func(a, b model.Contrib) int { return cmp.Compare(a.Member, b.Member) })
			cs = combine(cs)
		}
		out[i].Contribs = cs
	}
	return out
}

// combine sums adjacent contributions of the same member.
func combine(cs []model.Contrib) []model.Contrib {
	w := 0
	for r := 1; r < len(cs); r++ {
		if cs[r].Member == cs[w].Member {
			cs[w].Calls += cs[r].Calls
			cs[w].RecursiveCalls += cs[r].RecursiveCalls
			cs[w].SelfNs += cs[r].SelfNs
			cs[w].TotalNs += cs[r].TotalNs
			cs[w].SampledNs += cs[r].SampledNs
			cs[w].DroppedSampledNs += cs[r].DroppedSampledNs
			continue
		}
		w++
		cs[w] = cs[r]
	}
	return cs[: w+1 : w+1]
}

// mergeMeta combines the inputs' metadata (see the package doc).
func mergeMeta(out *model.Profile, ins []*input) {
	m := &out.Meta
	m.Mode = "merge"
	reasons := map[string]bool{}
	var filters, excludes, libs, warnings []string
	for i, in := range ins {
		x := &in.p.Meta
		if i == 0 {
			m.ToolVersion, m.Exe, m.BuildID, m.Command = x.ToolVersion, x.Exe, x.BuildID, slices.Clone(x.Command)
			m.Comm = x.Comm
			if x.Sampling != nil {
				s := *x.Sampling
				m.Sampling = &s
			}
			if x.Calibration != nil {
				c := *x.Calibration
				m.Calibration = &c
			}
		} else {
			switch c := m.Calibration; {
			case c == nil:
			case x.Calibration == nil:
				m.Calibration = nil
			default:
				c.Compensated = c.Compensated && x.Calibration.Compensated
				c.SubtractedNs += x.Calibration.SubtractedNs
				c.HeldNs += x.Calibration.HeldNs
				c.Host = agree(c.Host, x.Calibration.Host)
			}
			if m.Sampling != nil && x.Sampling != nil && m.Sampling.Period != x.Sampling.Period {
				m.Sampling.Period = 0 // rates differ
			}
			m.ToolVersion = agree(m.ToolVersion, x.ToolVersion)
			m.Exe = agree(m.Exe, x.Exe)
			m.Comm = agree(m.Comm, x.Comm)
			m.BuildID = agree(m.BuildID, x.BuildID)
			if !slices.Equal(m.Command, x.Command) {
				m.Command = nil
			}
		}
		if x.StartUnixNs != 0 && (m.StartUnixNs == 0 || x.StartUnixNs < m.StartUnixNs) {
			m.StartUnixNs = x.StartUnixNs
		}
		m.DurationNs += x.DurationNs
		m.Stops += x.Stops
		m.TracedCalls += x.TracedCalls
		m.Breakpoints += x.Breakpoints
		m.StopOverheadNs = max(m.StopOverheadNs, x.StopOverheadNs)
		m.Detached = m.Detached || x.Detached // a detach loses nothing: not a reason to be partial
		if x.Partial {
			m.Partial = true
			for _, r := range strings.Split(x.PartialReason, "; ") {
				if r != "" {
					reasons[r] = true
				}
			}
		}
		filters = append(filters, x.Filters...)
		excludes = append(excludes, x.Excludes...)
		libs = append(libs, x.Libs...)
		warnings = append(warnings, x.Warnings...)
		if c := x.Crash; c != nil && (m.Crash == nil || compareCrash(c, m.Crash) < 0) {
			cc := *c
			cc.Stack = slices.Clone(c.Stack)
			m.Crash = &cc
		}
	}
	if len(m.Command) == 0 {
		m.Command = nil
	}
	m.CPUSamples = mergeCPUSamples(ins)
	m.PartialReason = strings.Join(sortedSet(mapKeys(reasons)), "; ")
	m.Filters, m.Excludes, m.Libs = sortedSet(filters), sortedSet(excludes), sortedSet(libs)
	m.Warnings = sortedSet(warnings)
}

// notSampledRuns is the NotSampled reason of a merge in which some runs
// were not sampled: a fixed text, so that merging stays associative.
const notSampledRuns = "some runs were not sampled"

// mergeCPUSamples combines the inputs' CPU samples (see the package doc);
// nil when no input was sampled.
func mergeCPUSamples(ins []*input) *model.CPUSamples {
	var out *model.CPUSamples
	var reasons []string
	for _, in := range ins {
		c := in.p.Meta.CPUSamples
		if c == nil {
			reasons = append(reasons, notSampledRuns)
			continue
		}
		if out == nil {
			out = &model.CPUSamples{PeriodNs: c.PeriodNs, WithKernel: true}
		}
		if c.PeriodNs != out.PeriodNs {
			out.PeriodNs = 0 // mixed
		}
		out.Samples += c.Samples
		out.Kernel += c.Kernel
		out.InProbes += c.InProbes
		out.Lost += c.Lost
		out.WithKernel = out.WithKernel && c.WithKernel
		if c.NotSampled != "" {
			reasons = append(reasons, strings.Split(c.NotSampled, "; ")...)
		}
	}
	if out != nil {
		out.NotSampled = strings.Join(sortedSet(reasons), "; ")
	}
	return out
}

func agree(a, b string) string {
	if a == b {
		return a
	}
	return ""
}

func compareCrash(a, b *model.Crash) int {
	return cmp.Or(cmp.Compare(a.Pid, b.Pid), cmp.Compare(a.Tid, b.Tid), cmp.Compare(a.Signal, b.Signal),
		cmp.Compare(a.Addr, b.Addr), slices.Compare(a.Stack, b.Stack))
}

func mapKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// sortedSet sorts and deduplicates xs; nil when empty.
func sortedSet(xs []string) []string {
	if len(xs) == 0 {
		return nil
	}
	xs = slices.Clone(xs)
	slices.Sort(xs)
	return slices.Compact(xs)
}

// checkInput checks what merging relies on, so that a malformed input is
// an error, never a panic. Inputs are meant to be valid profiles (as
// model.Read returns them); the full Validate is left to the caller.
func checkInput(p *model.Profile) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("malformed profile: "+format, args...)
	}
	if len(p.Modules) == 0 || len(p.Functions) == 0 || p.Functions[model.StartFunc].Name != model.StartName {
		return bad("no START function")
	}
	fnOK := func(f int) bool { return f == model.None || f > model.StartFunc && f < len(p.Functions) }
	for i, fn := range p.Functions {
		if fn.Module < 0 || fn.Module >= len(p.Modules) {
			return bad("function %d: module %d out of range", i, fn.Module)
		}
	}
	for i, pr := range p.Processes {
		if pr.Parent != model.None && (pr.Parent < 0 || pr.Parent >= i) || pr.ExecOf != model.None && (pr.ExecOf < 0 || pr.ExecOf >= i) {
			return bad("process %d: parent or exec'd image must precede it", i)
		}
		if !fnOK(pr.ForkedBy) {
			return bad("process %d: forking function %d out of range", i, pr.ForkedBy)
		}
	}
	for ti := range p.Threads {
		t := &p.Threads[ti]
		if t.Process < 0 || t.Process >= len(p.Processes) || !fnOK(t.SpawnedBy) {
			return bad("thread %d: process or spawning function out of range", ti)
		}
		for _, m := range t.Members {
			if !fnOK(m.SpawnedBy) || m.Level != t.Level {
				return bad("thread %d: member spawning function out of range or level differs", ti)
			}
		}
		if len(t.Nodes) == 0 || t.Nodes[0].Func != model.StartFunc || t.Nodes[0].Parent != model.None {
			return bad("thread %d: node 0 must be the START root", ti)
		}
		for i := range t.Nodes {
			n := &t.Nodes[i]
			if i > 0 && (n.Parent < 0 || n.Parent >= i || n.Func <= model.StartFunc || n.Func >= len(p.Functions)) {
				return bad("thread %d node %d: parent or function out of range", ti, i)
			}
			for _, c := range n.Contribs {
				if c.Member < 0 || c.Member >= len(t.Members) {
					return bad("thread %d node %d: contribution of member %d out of range", ti, i, c.Member)
				}
			}
		}
		for i, a := range t.Arcs {
			if a.Callee <= model.StartFunc || a.Callee >= len(p.Functions) || !fnOK(a.Caller) {
				return bad("thread %d arc %d: caller or callee out of range", ti, i)
			}
			for _, c := range a.Contribs {
				if c.Member < 0 || c.Member >= len(t.Members) {
					return bad("thread %d arc %d: contribution of member %d out of range", ti, i, c.Member)
				}
			}
		}
	}
	return nil
}

// mergeProbe gives merged function o the probe kind of input function fn
// (seen: o holds earlier inputs'): the inputs' kind when they agree, with
// the least of their notes; unknown, noted, once they differ (a file
// without kinds differs from one with). Either way the order of the inputs
// does not matter.
func mergeProbe(o *model.Function, fn model.Function, seen bool) {
	switch {
	case !seen:
		o.Probe, o.ProbeNote = fn.Probe, fn.ProbeNote
	case o.Probe == fn.Probe:
		if o.ProbeNote == "" || fn.ProbeNote != "" && fn.ProbeNote < o.ProbeNote {
			o.ProbeNote = fn.ProbeNote
		}
	default:
		o.Probe, o.ProbeNote = model.ProbeUnknown, probesDisagree
	}
}

// probesDisagree is the note of a function the inputs probed differently.
const probesDisagree = "inputs disagree"
