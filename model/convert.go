package model

import (
	"fmt"
	"slices"
	"strings"

	"github.com/profile-dev/profile/model/pb"
)

// strtab interns strings for encoding.
type strtab struct {
	list []string
	idx  map[string]int64
}

func newStrtab() *strtab {
	return &strtab{list: []string{""}, idx: map[string]int64{"": 0}}
}

func (s *strtab) id(v string) int64 {
	if i, ok := s.idx[v]; ok {
		return i
	}
	s.list = append(s.list, v)
	i := int64(len(s.list) - 1)
	s.idx[v] = i
	return i
}

func (s *strtab) ids(vs []string) []int64 {
	if len(vs) == 0 {
		return nil
	}
	out := make([]int64, len(vs))
	for i, v := range vs {
		out[i] = s.id(v)
	}
	return out
}

func plus1(i int) int64 { return int64(i) + 1 }

func encode(p *Profile) *pb.ProfileFile {
	st := newStrtab()
	m := p.Meta
	f := &pb.ProfileFile{Meta: &pb.Meta{
		ToolVersionStr: st.id(m.ToolVersion), ModeStr: st.id(m.Mode), CommandStr: st.ids(m.Command),
		ExeStr: st.id(m.Exe), CommStr: st.id(m.Comm), BuildIdStr: st.id(m.BuildID), StartUnixNs: m.StartUnixNs,
		DurationNs: m.DurationNs, Partial: m.Partial, PartialReasonStr: st.id(m.PartialReason), Detached: m.Detached,
		FiltersStr: st.ids(m.Filters), ExcludesStr: st.ids(m.Excludes), LibsStr: st.ids(m.Libs),
		StopOverheadNs: m.StopOverheadNs, Stops: m.Stops, TracedCalls: m.TracedCalls,
		Breakpoints: m.Breakpoints, SourcesStr: st.ids(m.Sources), WarningsStr: st.ids(m.Warnings),
	}}
	if s := m.Sampling; s != nil {
		f.Meta.Sampling = &pb.Sampling{TypeStr: st.id(s.Type), UnitStr: st.id(s.Unit),
			PeriodTypeStr: st.id(s.PeriodType), PeriodUnitStr: st.id(s.PeriodUnit), Period: s.Period}
	}
	if c := m.Calibration; c != nil {
		f.Meta.Calibration = &pb.Calibration{HostStr: st.id(c.Host), InlineInNs: c.Inline.InNs, InlineOutNs: c.Inline.OutNs,
			TrapInNs: c.Trap.InNs, TrapOutNs: c.Trap.OutNs, Compensated: c.Compensated, SubtractedNs: c.SubtractedNs, HeldNs: c.HeldNs,
			Stops: c.Stops, StopNs: c.StopNs}
	}
	if c := m.CPUSamples; c != nil {
		f.Meta.CpuSamples = &pb.CPUSamples{PeriodNs: c.PeriodNs, Samples: c.Samples, Kernel: c.Kernel, InProbes: c.InProbes,
			Lost: c.Lost, WithKernel: c.WithKernel, NotSampledStr: st.id(c.NotSampled)}
	}
	if r := m.Detail; r != nil {
		f.Meta.Detail = &pb.DetailRule{FuncsStr: st.id(r.Funcs), SlowNs: r.SlowNs, IfStr: st.id(r.If), Limit: int64(r.Limit)}
	}
	if c := m.Crash; c != nil {
		f.Meta.Crash = &pb.Crash{Pid: int64(c.Pid), Tid: int64(c.Tid), SignalStr: st.id(c.Signal), Addr: c.Addr, StackStr: st.ids(c.Stack)}
	}
	for _, md := range p.Modules {
		f.Modules = append(f.Modules, &pb.Module{PathStr: st.id(md.Path), BuildIdStr: st.id(md.BuildID), DynamicOnly: md.DynamicOnly,
			SymbolsFromStr: st.id(md.SymbolsFrom)})
	}
	for _, fn := range p.Functions {
		f.Functions = append(f.Functions, &pb.Function{Module: int64(fn.Module), NameStr: st.id(fn.Name), TracedSinceNs: fn.TracedSinceNs,
			TracedUntilNs: fn.TracedUntilNs, Probe: int32(fn.Probe), ProbeNoteStr: st.id(fn.ProbeNote)})
	}
	for _, pr := range p.Processes {
		f.Processes = append(f.Processes, &pb.Process{
			Pid: int64(pr.Pid), ParentPid: int64(pr.ParentPid), ParentPlus1: plus1(pr.Parent),
			ForkedByPlus1: plus1(pr.ForkedBy), ForkedByTid: int64(pr.ForkedByTid), ExecOfPlus1: plus1(pr.ExecOf),
			ExeStr: st.id(pr.Exe), ArgvStr: st.ids(pr.Argv), Exited: pr.Exited, ExitCode: int64(pr.ExitCode),
			SignalStr: st.id(pr.Signal), CommStr: st.id(pr.Comm),
		})
	}
	for i := range p.Threads {
		f.Threads = append(f.Threads, encodeThread(&p.Threads[i], st))
	}
	f.Strings = st.list
	return f
}

func encodeThread(t *Thread, st *strtab) *pb.Thread {
	out := &pb.Thread{
		Tid: int64(t.Tid), Process: int64(t.Process), NameStr: st.id(t.Name), ParentTid: int64(t.ParentTid),
		SpawnedByPlus1: plus1(t.SpawnedBy), Level: int64(t.Level), TracedNs: t.TracedNs,
	}
	for _, m := range t.Members {
		out.Members = append(out.Members, &pb.Member{
			Run: int64(m.Run), Pid: int64(m.Pid), Tid: int64(m.Tid), NameStr: st.id(m.Name),
			ParentTid: int64(m.ParentTid), SpawnedByPlus1: plus1(m.SpawnedBy), Level: int64(m.Level), TracedNs: m.TracedNs,
		})
	}
	n := len(t.Nodes)
	c := &pb.Nodes{
		Func: make([]int64, n), ParentPlus1: make([]int64, n), Calls: make([]int64, n),
		RecursiveCalls: make([]int64, n), SelfNs: make([]int64, n), TotalNs: make([]int64, n),
		DirectCalls: make([]int64, n), IndirectCalls: make([]int64, n), PltCalls: make([]int64, n),
		InFlight: make([]int64, n), Elided: make([]bool, n), DroppedNs: make([]int64, n),
	}
	composite, sampled := false, false
	for i := range t.Nodes {
		nd := &t.Nodes[i]
		c.Func[i], c.ParentPlus1[i], c.Calls[i] = int64(nd.Func), plus1(nd.Parent), nd.Calls
		c.RecursiveCalls[i], c.SelfNs[i], c.TotalNs[i] = nd.RecursiveCalls, nd.SelfNs, nd.TotalNs
		c.DirectCalls[i], c.IndirectCalls[i], c.PltCalls[i] = nd.DirectCalls, nd.IndirectCalls, nd.PLTCalls
		c.InFlight[i], c.Elided[i], c.DroppedNs[i] = nd.InFlight, nd.Elided, nd.DroppedNs
		composite = composite || len(nd.Contribs) > 0
		sampled = sampled || nd.SampledNs != 0 || nd.DroppedSampledNs != 0
	}
	if sampled {
		// Columns written only when something was sampled: a file
		// without samples is as before.
		c.SampledNs, c.DroppedSampledNs = make([]int64, n), make([]int64, n)
		for i := range t.Nodes {
			c.SampledNs[i], c.DroppedSampledNs[i] = t.Nodes[i].SampledNs, t.Nodes[i].DroppedSampledNs
		}
	}
	if composite {
		c.ContribCount = make([]int64, n)
		for i := range t.Nodes {
			c.ContribCount[i] = int64(len(t.Nodes[i].Contribs))
			for _, x := range t.Nodes[i].Contribs {
				c.ContribMember = append(c.ContribMember, int64(x.Member))
				c.ContribCalls = append(c.ContribCalls, x.Calls)
				c.ContribRecursiveCalls = append(c.ContribRecursiveCalls, x.RecursiveCalls)
				c.ContribSelfNs = append(c.ContribSelfNs, x.SelfNs)
				c.ContribTotalNs = append(c.ContribTotalNs, x.TotalNs)
				if sampled {
					c.ContribSampledNs = append(c.ContribSampledNs, x.SampledNs)
					c.ContribDroppedSampledNs = append(c.ContribDroppedSampledNs, x.DroppedSampledNs)
				}
			}
		}
	}
	out.Nodes = c
	for _, tr := range t.Trees {
		out.Trees = append(out.Trees, encodeTree(tr))
	}
	out.DroppedTrees = t.DroppedTrees
	out.Arcs = encodeArcs(t.Arcs)
	return out
}

// encodeArcs stores a thread's arcs column-wise; nil when it has none, so
// that a file without counted calls is as before.
func encodeArcs(arcs []Arc) *pb.Arcs {
	if len(arcs) == 0 {
		return nil
	}
	n := len(arcs)
	c := &pb.Arcs{CallerPlus1: make([]int64, n), Callee: make([]int64, n), Calls: make([]int64, n)}
	composite := false
	for i, a := range arcs {
		c.CallerPlus1[i], c.Callee[i], c.Calls[i] = plus1(a.Caller), int64(a.Callee), a.Calls
		composite = composite || len(a.Contribs) > 0
	}
	if composite {
		c.ContribCount = make([]int64, n)
		for i, a := range arcs {
			c.ContribCount[i] = int64(len(a.Contribs))
			for _, x := range a.Contribs {
				c.ContribMember = append(c.ContribMember, int64(x.Member))
				c.ContribCalls = append(c.ContribCalls, x.Calls)
			}
		}
	}
	return c
}

func encodeTree(tr DetailTree) *pb.DetailTree {
	n := len(tr.Calls)
	c := &pb.DetailTree{Func: make([]int64, n), Depth: make([]int64, n), StartNs: make([]int64, n),
		EndNs: make([]int64, n), Args: make([]uint64, 0, 6*n), Ret: make([]uint64, n), Flags: make([]uint32, n),
		NargsPlus1: make([]int64, n)}
	for i, x := range tr.Calls {
		c.Func[i], c.Depth[i], c.StartNs[i], c.EndNs[i] = int64(x.Func), int64(x.Depth), x.StartNs, x.EndNs
		c.Args = append(c.Args, x.Args[:]...)
		c.Ret[i], c.Flags[i], c.NargsPlus1[i] = x.Ret, uint32(x.Flags), plus1(x.NArgs)
	}
	return c
}

// decoder turns a decoded message into a Profile, checking every index it
// follows so that corrupt input yields an error, never a panic.
type decoder struct {
	strs []string
	err  error
}

func (d *decoder) str(i int64) string {
	if i < 0 || i >= int64(len(d.strs)) {
		d.fail("string index %d out of range", i)
		return ""
	}
	return d.strs[i]
}

func (d *decoder) strList(ids []int64) []string {
	if len(ids) == 0 {
		return nil
	}
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = d.str(id)
	}
	return out
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf(format, args...)
	}
}

// small converts a stored integer to int, failing on values that cannot be
// indices, pids or levels.
func (d *decoder) small(v int64) int {
	if v < -1<<31 || v > 1<<31 {
		d.fail("value %d out of range", v)
		return 0
	}
	return int(v)
}

func decode(f *pb.ProfileFile) (*Profile, error) {
	d := &decoder{strs: f.Strings}
	p := &Profile{}
	if m := f.Meta; m != nil {
		p.Meta = Meta{
			ToolVersion: d.str(m.ToolVersionStr), Mode: d.str(m.ModeStr), Command: d.strList(m.CommandStr),
			Exe: d.str(m.ExeStr), Comm: d.str(m.CommStr), BuildID: d.str(m.BuildIdStr), StartUnixNs: m.StartUnixNs,
			DurationNs: m.DurationNs, Partial: m.Partial, PartialReason: d.str(m.PartialReasonStr), Detached: m.Detached,
			Filters: d.strList(m.FiltersStr), Excludes: d.strList(m.ExcludesStr), Libs: d.strList(m.LibsStr),
			StopOverheadNs: m.StopOverheadNs, Stops: m.Stops, TracedCalls: m.TracedCalls,
			Breakpoints: m.Breakpoints, Sources: d.strList(m.SourcesStr), Warnings: d.strList(m.WarningsStr),
		}
		oldDetached(&p.Meta)
		if s := m.Sampling; s != nil {
			p.Meta.Sampling = &Sampling{Type: d.str(s.TypeStr), Unit: d.str(s.UnitStr),
				PeriodType: d.str(s.PeriodTypeStr), PeriodUnit: d.str(s.PeriodUnitStr), Period: s.Period}
		}
		if c := m.Calibration; c != nil {
			p.Meta.Calibration = &Calibration{Host: d.str(c.HostStr), Inline: ProbeCost{InNs: c.InlineInNs, OutNs: c.InlineOutNs},
				Trap: ProbeCost{InNs: c.TrapInNs, OutNs: c.TrapOutNs}, Compensated: c.Compensated, SubtractedNs: c.SubtractedNs, HeldNs: c.HeldNs,
				Stops: c.Stops, StopNs: c.StopNs}
		}
		if c := m.CpuSamples; c != nil {
			p.Meta.CPUSamples = &CPUSamples{PeriodNs: c.PeriodNs, Samples: c.Samples, Kernel: c.Kernel, InProbes: c.InProbes,
				Lost: c.Lost, WithKernel: c.WithKernel, NotSampled: d.str(c.NotSampledStr)}
		}
		if r := m.Detail; r != nil {
			p.Meta.Detail = &DetailRule{Funcs: d.str(r.FuncsStr), SlowNs: r.SlowNs, If: d.str(r.IfStr), Limit: d.small(r.Limit)}
		}
		if c := m.Crash; c != nil {
			p.Meta.Crash = &Crash{Pid: d.small(c.Pid), Tid: d.small(c.Tid), Signal: d.str(c.SignalStr), Addr: c.Addr, Stack: d.strList(c.StackStr)}
		}
	}
	for _, md := range f.Modules {
		p.Modules = append(p.Modules, Module{Path: d.str(md.PathStr), BuildID: d.str(md.BuildIdStr), DynamicOnly: md.DynamicOnly,
			SymbolsFrom: d.str(md.SymbolsFromStr)})
	}
	for _, fn := range f.Functions {
		p.Functions = append(p.Functions, Function{Module: d.small(fn.Module), Name: d.str(fn.NameStr), TracedSinceNs: fn.TracedSinceNs,
			TracedUntilNs: fn.TracedUntilNs, Probe: probeKind(fn.Probe), ProbeNote: d.str(fn.ProbeNoteStr)})
	}
	for _, pr := range f.Processes {
		p.Processes = append(p.Processes, Process{
			Pid: d.small(pr.Pid), ParentPid: d.small(pr.ParentPid), Parent: d.small(pr.ParentPlus1) - 1,
			ForkedBy: d.small(pr.ForkedByPlus1) - 1, ForkedByTid: d.small(pr.ForkedByTid), ExecOf: d.small(pr.ExecOfPlus1) - 1,
			Exe: d.str(pr.ExeStr), Argv: d.strList(pr.ArgvStr), Exited: pr.Exited, ExitCode: d.small(pr.ExitCode),
			Signal: d.str(pr.SignalStr), Comm: d.str(pr.CommStr),
		})
	}
	for _, t := range f.Threads {
		p.Threads = append(p.Threads, d.thread(t))
	}
	return p, d.err
}

func (d *decoder) thread(t *pb.Thread) Thread {
	out := Thread{
		Tid: d.small(t.Tid), Process: d.small(t.Process), Name: d.str(t.NameStr), ParentTid: d.small(t.ParentTid),
		SpawnedBy: d.small(t.SpawnedByPlus1) - 1, Level: d.small(t.Level), TracedNs: t.TracedNs,
	}
	for _, m := range t.Members {
		out.Members = append(out.Members, Member{
			Run: d.small(m.Run), Pid: d.small(m.Pid), Tid: d.small(m.Tid), Name: d.str(m.NameStr),
			ParentTid: d.small(m.ParentTid), SpawnedBy: d.small(m.SpawnedByPlus1) - 1, Level: d.small(m.Level), TracedNs: m.TracedNs,
		})
	}
	out.Nodes = d.nodes(t.Nodes)
	for _, tr := range t.Trees {
		out.Trees = append(out.Trees, d.tree(tr))
	}
	out.DroppedTrees = t.DroppedTrees
	out.Arcs = d.arcs(t.Arcs)
	return out
}

// arcs reads a thread's arcs; nil for an older file, which has none.
func (d *decoder) arcs(c *pb.Arcs) []Arc {
	if c == nil || len(c.Callee) == 0 {
		return nil
	}
	n := len(c.Callee)
	if len(c.CallerPlus1) != n || len(c.Calls) != n {
		d.fail("arc columns of different lengths")
		return nil
	}
	arcs := make([]Arc, n)
	for i := range arcs {
		arcs[i] = Arc{Caller: d.small(c.CallerPlus1[i]) - 1, Callee: d.small(c.Callee[i]), Calls: c.Calls[i]}
	}
	if len(c.ContribCount) == 0 {
		return arcs
	}
	if len(c.ContribCount) != n || len(c.ContribCalls) != len(c.ContribMember) {
		d.fail("arc contribution columns do not match the arcs")
		return nil
	}
	at, m := 0, len(c.ContribMember)
	for i := range arcs {
		k := c.ContribCount[i]
		if k < 0 || int64(at)+k > int64(m) {
			d.fail("arc contribution counts exceed the contributions")
			return nil
		}
		for j := at; j < at+int(k); j++ {
			arcs[i].Contribs = append(arcs[i].Contribs, ArcContrib{Member: d.small(c.ContribMember[j]), Calls: c.ContribCalls[j]})
		}
		at += int(k)
	}
	if at != m {
		d.fail("arc contributions left over after the last arc")
	}
	return arcs
}

func (d *decoder) tree(c *pb.DetailTree) DetailTree {
	n := len(c.Func)
	if len(c.Depth) != n || len(c.StartNs) != n || len(c.EndNs) != n || len(c.Ret) != n || len(c.Flags) != n || len(c.Args) != 6*n || len(c.NargsPlus1) != n {
		d.fail("detail tree columns of different lengths")
		return DetailTree{}
	}
	tr := DetailTree{Calls: make([]DetailCall, n)}
	for i := range tr.Calls {
		x := &tr.Calls[i]
		x.Func, x.Depth, x.StartNs, x.EndNs = d.small(c.Func[i]), d.small(c.Depth[i]), c.StartNs[i], c.EndNs[i]
		copy(x.Args[:], c.Args[6*i:])
		x.Ret, x.Flags, x.NArgs = c.Ret[i], DetailFlags(c.Flags[i]), d.small(c.NargsPlus1[i])-1
	}
	return tr
}

func (d *decoder) nodes(c *pb.Nodes) []Node {
	if c == nil {
		return nil
	}
	n := len(c.Func)
	for _, col := range [][]int64{c.ParentPlus1, c.Calls, c.RecursiveCalls, c.SelfNs, c.TotalNs, c.DirectCalls, c.IndirectCalls, c.PltCalls, c.InFlight, c.DroppedNs} {
		if len(col) != n {
			d.fail("node columns of different lengths")
			return nil
		}
	}
	if len(c.Elided) != n {
		d.fail("node columns of different lengths")
		return nil
	}
	// The sampled columns are absent (all 0) in older files and when
	// nothing was sampled.
	sampled, dropped := optionalColumn(c.SampledNs, n), optionalColumn(c.DroppedSampledNs, n)
	if sampled == nil || dropped == nil {
		d.fail("node columns of different lengths")
		return nil
	}
	nodes := make([]Node, n)
	for i := range nodes {
		nodes[i] = Node{
			Func: d.small(c.Func[i]), Parent: d.small(c.ParentPlus1[i]) - 1, Calls: c.Calls[i],
			RecursiveCalls: c.RecursiveCalls[i], SelfNs: c.SelfNs[i], TotalNs: c.TotalNs[i],
			DirectCalls: c.DirectCalls[i], IndirectCalls: c.IndirectCalls[i], PLTCalls: c.PltCalls[i], InFlight: c.InFlight[i],
			Elided: c.Elided[i], DroppedNs: c.DroppedNs[i], SampledNs: sampled[i], DroppedSampledNs: dropped[i],
		}
	}
	if len(c.ContribCount) == 0 {
		return nodes
	}
	if len(c.ContribCount) != n {
		d.fail("contribution counts do not match the nodes")
		return nil
	}
	m := len(c.ContribMember)
	for _, col := range [][]int64{c.ContribCalls, c.ContribRecursiveCalls, c.ContribSelfNs, c.ContribTotalNs} {
		if len(col) != m {
			d.fail("contribution columns of different lengths")
			return nil
		}
	}
	sampledShares, droppedShares := optionalColumn(c.ContribSampledNs, m), optionalColumn(c.ContribDroppedSampledNs, m)
	if sampledShares == nil || droppedShares == nil {
		d.fail("contribution columns of different lengths")
		return nil
	}
	at := 0
	for i := range nodes {
		k := c.ContribCount[i]
		if k < 0 || int64(at)+k > int64(m) {
			d.fail("contribution counts exceed the contributions")
			return nil
		}
		for j := at; j < at+int(k); j++ {
			nodes[i].Contribs = append(nodes[i].Contribs, Contrib{
				Member: d.small(c.ContribMember[j]), Calls: c.ContribCalls[j], RecursiveCalls: c.ContribRecursiveCalls[j],
				SelfNs: c.ContribSelfNs[j], TotalNs: c.ContribTotalNs[j], SampledNs: sampledShares[j],
				DroppedSampledNs: droppedShares[j],
			})
		}
		at += int(k)
	}
	if at != m {
		d.fail("contributions left over after the last node")
	}
	return nodes
}

// optionalColumn is a column that may be absent: col itself when it has
// n entries, n zeros when it is empty, nil when its length is wrong.
func optionalColumn(col []int64, n int) []int64 {
	switch len(col) {
	case 0:
		return make([]int64, n) // not nil, even for n == 0
	case n:
		return col
	}
	return nil
}

// oldDetachReason is how files written before Meta.Detached said that the
// tracer detached from a running target: as a reason for being partial.
const oldDetachReason = "detached before the target ended"

// oldDetached reads an older file's detach as Detached, not Partial: the
// profile is complete for its window. A merge of older files joined the
// reasons with "; "; the other reasons stay, and keep it partial.
func oldDetached(m *Meta) {
	if !m.Partial {
		return
	}
	reasons := strings.Split(m.PartialReason, "; ")
	kept := slices.DeleteFunc(slices.Clone(reasons), func(r string) bool { return r == oldDetachReason })
	if len(kept) == len(reasons) {
		return
	}
	m.Detached = true
	m.PartialReason = strings.Join(kept, "; ")
	m.Partial = m.PartialReason != ""
}

// probeKind reads a stored probe kind; one out of range stays out of range
// for Validate to reject.
func probeKind(v int32) ProbeKind {
	if v < 0 || v > 255 {
		return 255
	}
	return ProbeKind(v)
}
