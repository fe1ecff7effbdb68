// Package summary computes the summary of a profile (docs/design.md, Offline
// analytics): counts, hottest functions and edges, hottest path, recursion,
// threads, processes, levels of multithreading, libraries with their
// coverage and time blocked in waiting calls. Compute builds a Report from
// the model; the Write functions format it as a table, markdown, JSON or
// CSV.
//
// Percentages are percent (0 to 100) of the scope's traced time: the sum
// of the traced wall time of every thread in scope.
package summary

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/profile-dev/profile/model"
)

// Format names the JSON layout of a Report.
const Format = "profile-summary/1"

// Options select what Compute summarises.
type Options struct {
	Top int // list only the Top hottest functions and edges; 0 lists all
	Pid int // only this process (0: every process)
	Tid int // only this thread (0: every thread)
	// Threads breaks every function and edge down by thread (threads.go).
	Threads bool
	// Busy takes the time blocked in waiting calls out of every time and
	// percentage (model.Profile.Busy): the tables rank what computes.
	// With CPU samples the busy times are the samples' instead
	// (Totals.BusySampled). The blocked time itself is still reported, as
	// a share of wall time.
	Busy bool
	// FullNames shows function names in full in the tables; by default
	// they are shortened (names.Short). JSON and CSV, which carry Name,
	// Caller, Callee, SpawnedBy and ForkedBy, are always in full.
	FullNames bool
}

// Report is a profile's summary. Marshalled with encoding/json it is the
// document of docs/summary-json.md; the fields tagged
// `json:"-"` go beyond that format and appear in the table and markdown.
type Report struct {
	Format    string     `json:"format"`
	Meta      Meta       `json:"meta"`
	Totals    Totals     `json:"totals"`
	Functions []Function `json:"functions"`
	Edges     []Edge     `json:"edges"`
	Modules   []Module   `json:"modules"`
	Threads   []Thread   `json:"threads"`
	Processes []Process  `json:"processes"`

	Scope     model.Scope `json:"-"`
	FullNames bool        `json:"-"` // the tables show names in full (Options.FullNames)
	ByThread  bool        `json:"-"` // functions, edges and threads carry their thread shares and numbers
	Values    string      `json:"-"` // where the numbers come from: model.Meta.Values
	AllFuncs  int         `json:"-"` // functions before Top
	// CountedFuncs are the functions of the scope only counted (before
	// Top): FuncNumbers.Counted.
	CountedFuncs int         `json:"-"`
	AllEdges     int         `json:"-"` // edges before Top
	HottestPath  []PathStep  `json:"-"`
	Recursion    []Recursion `json:"-"` // recursive functions, deepest first
	Levels       []Level     `json:"-"` // threads per nesting level
	Blocking     []BlockedFn `json:"-"` // blocking functions, most blocked first
}

// Meta describes the profiled run.
type Meta struct {
	Command []string `json:"command"`
	Exe     string   `json:"exe"`
	// StartedAs names the run's first process as it was started, beside
	// Exe where that differs (model.StartedAs): the tables' exe.
	StartedAs   string   `json:"-"`
	Pid         int      `json:"pid"` // the first process's pid, 0 if none
	Mode        string   `json:"mode"`
	DurationNs  int64    `json:"duration_ns"`
	Partial     bool     `json:"partial"`
	Detached    bool     `json:"detached"` // the tracer detached, the target went on running
	Stops       int64    `json:"stops"`
	TracedCalls int64    `json:"traced_calls"`
	Warnings    []string `json:"warnings"`
	// CPUSamples says how the threads' CPU time was sampled (record
	// --sample); nil when it was not.
	CPUSamples *CPUSamples `json:"cpu_samples"`
}

// CPUSamples is how the threads' CPU time was sampled (model.CPUSamples):
// with it, the busy times are the samples' (Totals.BusySampled).
type CPUSamples struct {
	PeriodNs int64 `json:"period_ns"` // 0: runs sampled at different periods, merged
	Samples  int64 `json:"samples"`   // given to calling contexts
	Kernel   int64 `json:"kernel"`    // of Samples, taken in the kernel
	InProbes int64 `json:"in_probes"` // in the probes' own code: given to none
	// InProbesPct is InProbes in percent of Samples + InProbes: the
	// probes' share of the sampled CPU time.
	InProbesPct float64 `json:"in_probes_pct"`
	Lost        int64   `json:"lost"`        // dropped by the kernel
	WithKernel  bool    `json:"with_kernel"` // the kernel sampled too, else user mode only
	// NotSampled says why some threads' busy times are measured, not
	// sampled ("" when every thread was sampled).
	NotSampled string `json:"not_sampled"`
}

func cpuSamples(c *model.CPUSamples) *CPUSamples {
	if c == nil {
		return nil
	}
	return &CPUSamples{PeriodNs: c.PeriodNs, Samples: c.Samples, Kernel: c.Kernel, InProbes: c.InProbes,
		InProbesPct: c.InProbesPct(), Lost: c.Lost, WithKernel: c.WithKernel, NotSampled: c.NotSampled}
}

// model is c as the model has it, to describe it as the model does.
func (c *CPUSamples) model() *model.CPUSamples {
	return &model.CPUSamples{PeriodNs: c.PeriodNs, Samples: c.Samples, Kernel: c.Kernel, InProbes: c.InProbes,
		Lost: c.Lost, WithKernel: c.WithKernel, NotSampled: c.NotSampled}
}

// Totals are the scope's counts and times.
type Totals struct {
	Nodes             int   `json:"nodes"` // call-graph nodes, START and per-level thread roots included
	Edges             int   `json:"edges"` // call-graph edges: call, spawn and fork
	Calls             int64 `json:"calls"`
	DirectCalls       int64 `json:"direct_calls"`
	IndirectCalls     int64 `json:"indirect_calls"`
	PLTCalls          int64 `json:"plt_calls"`
	Threads           int   `json:"threads"`
	Processes         int   `json:"processes"`
	MaxNestingLevel   int   `json:"max_nesting_level"`
	MaxRecursionDepth int   `json:"max_recursion_depth"`
	TracedNs          int64 `json:"traced_ns"`
	BlockedNs         int64 `json:"blocked_ns"`
	// WaitingCPUNs is the CPU time sampled inside the waiting calls
	// (WaitingCPU: the profile's samples cover every thread, in the
	// kernel too), taken out of BlockedNs: a thread copying to a socket
	// inside write is busy, not blocked.
	WaitingCPUNs int64 `json:"waiting_cpu_ns"`
	// WallNs is the scope's traced wall time, whatever Times: the base
	// of the blocked share.
	WallNs int64 `json:"wall_ns"`
	// Times says what the times are: "wall", or "busy" (Options.Busy:
	// blocked time taken out, traced_ns the busy time).
	Times string `json:"times"`
	// Sampled: the values are sampled (an imported pprof profile), not
	// traced; there are no call counts (every calls field is 0).
	Sampled bool `json:"sampled"`
	// BusySampled: the times are busy ones taken from CPU samples
	// (Meta.CPUSamples, model.Profile.Busy): a self time is the CPU time
	// sampled in the function's own code, waiting calls included.
	BusySampled bool `json:"busy_sampled"`
	WaitingCPU  bool `json:"waiting_cpu_sampled"` // see WaitingCPUNs
}

// Function is one function, all its calling contexts and nesting levels
// summed.
type Function struct {
	Name   string `json:"name"`
	Module string `json:"module"`
	FuncNumbers
	// TracedSinceNs is when tracing of the function began, in ns from the
	// profile's start (model.Function.TracedSinceNs, record --auto-expand):
	// its numbers cover the run from then on. 0: from the start.
	TracedSinceNs int64 `json:"traced_since_ns,omitempty"`
	// TracedUntilNs is when the tracer took the function's probe out (a
	// trap probe found hot, model.Function.TracedUntilNs): its numbers
	// cover the run up to then. 0: to the end.
	TracedUntilNs int64 `json:"traced_until_ns,omitempty"`
	// Threads is the function's share per thread (Options.Threads).
	Threads []FunctionShare `json:"by_thread,omitempty"`

	// Display is the name as the tables show it, "module:name" for
	// library functions: shortened unless Options.FullNames.
	Display string `json:"-"`
}

// FuncNumbers are a function's numbers in the scope (Function) or in one
// thread (FunctionShare).
type FuncNumbers struct {
	Calls          int64 `json:"calls"`
	RecursiveCalls int64 `json:"recursive_calls"`
	// Counted: every call was counted by a counting probe (record
	// --counted), none timed: the times were not measured (they are in
	// the callers' self time). They are 0 here, and left out of the JSON
	// (counted.go) and the tables.
	Counted  bool    `json:"counted,omitempty"`
	SelfNs   int64   `json:"self_ns"`
	TotalNs  int64   `json:"total_ns"`
	SelfPct  float64 `json:"self_pct"`
	TotalPct float64 `json:"total_pct"`
}

// EdgeNumbers are an edge's numbers in the scope (Edge) or in one thread
// (EdgeShare).
type EdgeNumbers struct {
	Calls          int64 `json:"calls"`
	RecursiveCalls int64 `json:"recursive_calls"`
	// Counted: every call along the edge was counted by a counting probe,
	// none timed: as FuncNumbers.Counted.
	Counted  bool    `json:"counted,omitempty"`
	TotalNs  int64   `json:"total_ns"`
	TotalPct float64 `json:"total_pct"`
}

// Edge is one (caller, callee, kind) pair of functions.
type Edge struct {
	Caller       string `json:"caller"`
	Callee       string `json:"callee"`
	CallerModule string `json:"caller_module"`
	CalleeModule string `json:"callee_module"`
	Kind         string `json:"kind"`
	EdgeNumbers
	// Threads is the edge's share per thread (Options.Threads).
	Threads []EdgeShare `json:"by_thread,omitempty"`

	CallerDisplay string `json:"-"` // Function.Display of the caller
	CalleeDisplay string `json:"-"`
}

// Module is one ELF file with the self time of its functions.
type Module struct {
	Module  string  `json:"module"`
	SelfNs  int64   `json:"self_ns"`
	SelfPct float64 `json:"self_pct"`
	// DynamicOnly: traced through its dynamic symbols only (no symbol
	// table): its internal functions are not seen.
	DynamicOnly bool `json:"dynamic_only"`
}

// Thread is one thread (a member thread of a composite profile).
type Thread struct {
	Tid          int    `json:"tid"`
	Pid          int    `json:"pid"`
	Name         string `json:"name"`
	ParentTid    int    `json:"parent_tid"`
	SpawnedBy    string `json:"spawned_by"`
	NestingLevel int    `json:"nesting_level"`
	TracedNs     int64  `json:"traced_ns"`
	// Number is the thread's number in the by_thread shares and "0→1"
	// (Options.Threads only).
	Number *int `json:"number,omitempty"`
}

// Process is one process image.
type Process struct {
	Pid       int    `json:"pid"`
	ParentPid int    `json:"parent_pid"`
	ForkedBy  string `json:"forked_by"`
	Exe       string `json:"exe"`
	StartedAs string `json:"-"` // as Meta.StartedAs
	ExitCode  int    `json:"exit_code"`
	Signal    string `json:"signal"`
	// State is how the image ended: ProcExited (ExitCode is its
	// status), ProcKilled (by Signal), ProcExec (replaced by an exec) or
	// ProcRunning (still running when tracing ended: ExitCode means nothing).
	State string `json:"state"`
}

// The states of a Process.
const (
	ProcExited  = "exited"
	ProcKilled  = "killed"
	ProcExec    = "exec"
	ProcRunning = "running"
)

// procState is the State of process image i of p.
func procState(p *model.Profile, i int, replaced map[int]bool) string {
	pr := &p.Processes[i]
	switch {
	case pr.Signal != "":
		return ProcKilled
	case pr.Exited:
		return ProcExited
	case replaced[i]:
		return ProcExec
	}
	return ProcRunning
}

// PathStep is one call of the hottest path: the callee entered and the
// numbers of the edge into it.
type PathStep struct {
	Display  string // as Function.Display
	Level    int    // nesting level of a thread root, model.None otherwise
	Calls    int64
	TotalNs  int64
	TotalPct float64
}

// Recursion is a recursive function: its recursive calls (rc) and the
// most activations of it ever on one calling-context path.
type Recursion struct {
	Display        string // as Function.Display
	Calls          int64
	RecursiveCalls int64
	MaxDepth       int
	full           string // model.Profile.FuncName: the tie-break, shortened or not
}

// Level counts the threads at one nesting level.
type Level struct {
	Level    int
	Threads  int
	TracedNs int64
}

// BlockedFn is a blocking function and its time not already inside
// another blocking call: its wall time, split (with CPU samples of the
// kernel too) into the time its thread was on a CPU inside it (copying
// to a socket, a page fault) and the time it was blocked.
type BlockedFn struct {
	Display   string // as Function.Display
	Calls     int64
	WallNs    int64
	OnCPUNs   int64 // 0 without the split (Totals.WaitingCPU)
	BlockedNs int64 // WallNs - OnCPUNs
	Pct       float64
	full      string // model.Profile.FuncName: the tie-break, shortened or not
	fn        int
}

// waitingSampled tells whether samples split a waiting call's time into
// on-CPU and blocked: every thread sampled, in the kernel too (user-mode
// samples miss the kernel's work inside a system call).
func waitingSampled(c *model.CPUSamples) bool {
	return c != nil && c.WithKernel && c.NotSampled == ""
}

// waitingCPU is each waiting function's CPU time in busy graph g of
// profile p: the samples its activations (and their callees) took.
func waitingCPU(p *model.Profile, g *model.Graph) map[int]int64 {
	waiting := p.WaitingFuncs()
	out := map[int]int64{}
	for _, n := range g.Nodes {
		if f := n.Key.Func; f >= 0 && f < len(waiting) && waiting[f] {
			out[f] += n.TotalNs
		}
	}
	return out
}

// Compute summarises profile p.
func Compute(p *model.Profile, opt Options) (*Report, error) {
	if p == nil {
		return nil, errors.New("summary: no profile")
	}
	if opt.Top < 0 {
		return nil, fmt.Errorf("summary: --top must not be negative (got %d)", opt.Top)
	}
	wall := p
	if opt.Busy {
		p = p.Busy()
	}
	scope := model.Scope{Pid: opt.Pid, Tid: opt.Tid}
	numbers := p.ThreadNumbers()
	refs := numbers.InScope(scope)
	procs := processesInScope(p, scope, refs)
	if (opt.Pid != 0 || opt.Tid != 0) && len(refs) == 0 && len(procs) == 0 {
		return nil, scope.NotFound()
	}
	g := p.Graph(scope)
	r := &Report{Format: Format, Scope: scope, FullNames: opt.FullNames}
	pct := func(ns int64) float64 { return 100 * g.Coverage(ns) }

	r.Meta = Meta{Command: nonNil(p.Meta.Command), Exe: p.Meta.Exe, StartedAs: p.Meta.StartedAs(), Mode: p.Meta.Mode, DurationNs: p.Meta.DurationNs,
		Partial: p.Meta.Partial, Detached: p.Meta.Detached, Stops: p.Meta.Stops, TracedCalls: p.Meta.TracedCalls,
		Warnings: nonNil(slices.Clone(p.Meta.Warnings)), CPUSamples: cpuSamples(p.Meta.CPUSamples)}
	if len(p.Processes) > 0 {
		r.Meta.Pid = p.Processes[0].Pid
	}

	// functions: graph nodes summed over nesting levels
	fidx := make(map[int]int) // function -> index in r.Functions
	var counted []int64       // by r.Functions index: the calls of counting probes
	for _, n := range g.Nodes {
		i, ok := fidx[n.Key.Func]
		if !ok {
			fn := p.Functions[n.Key.Func]
			r.Functions = append(r.Functions, Function{Name: fn.Name, Module: p.ModuleName(fn.Module),
				TracedSinceNs: fn.TracedSinceNs, TracedUntilNs: fn.TracedUntilNs, Display: p.DisplayName(n.Key.Func, opt.FullNames)})
			i = len(r.Functions) - 1
			fidx[n.Key.Func] = i
			counted = append(counted, 0)
		}
		counted[i] += n.CountedCalls
		f := &r.Functions[i]
		f.Calls += n.Calls
		f.RecursiveCalls += n.RecursiveCalls
		f.SelfNs += n.SelfNs
		f.TotalNs += n.TotalNs
	}
	// START spans every thread's traced time.
	r.Functions[fidx[model.StartFunc]].TotalNs = g.TracedNs
	modSelf := make(map[string]int64)
	var modOrder []string
	for i := range r.Functions {
		f := &r.Functions[i]
		f.SelfPct, f.TotalPct = pct(f.SelfNs), pct(f.TotalNs)
		r.Totals.Calls += f.Calls
		if f.Counted = isCounted(counted[i], f.Calls, f.SelfNs+f.TotalNs); f.Counted {
			r.CountedFuncs++
			continue // no self time to add to its module's
		}
		if f.Module == "" {
			continue // START
		}
		if _, ok := modSelf[f.Module]; !ok {
			modOrder = append(modOrder, f.Module)
		}
		modSelf[f.Module] += f.SelfNs
	}
	dynamicOnly := make(map[string]bool)
	for i, md := range p.Modules {
		dynamicOnly[p.ModuleName(i)] = dynamicOnly[p.ModuleName(i)] || md.DynamicOnly
	}
	for _, m := range modOrder {
		r.Modules = append(r.Modules, Module{Module: m, SelfNs: modSelf[m], SelfPct: pct(modSelf[m]), DynamicOnly: dynamicOnly[m]})
	}
	funcOf := make([]int, len(g.Nodes)) // graph node -> r.Functions index
	for i, n := range g.Nodes {
		funcOf[i] = fidx[n.Key.Func]
	}
	bd := p.Breakdown(g, scope)
	var shares *threadShares
	if opt.Threads {
		shares = newThreadShares(p, numbers, g, bd, refs, funcOf, pct)
	}

	// edges: graph edges summed over nesting levels. Only an edge with an
	// end in a function that has per-level nodes can meet another edge of
	// the same functions; only those go through the map.
	leveled := make(map[int]bool)
	for _, n := range g.Nodes {
		if n.Key.Level != model.None {
			leveled[n.Key.Func] = true
		}
	}
	type ekey struct {
		from, to int32
		kind     model.EdgeKind
	}
	type agg struct {
		ekey
		calls, rc, total, counted int64
	}
	eidx := make(map[ekey]int)
	aggs := make([]agg, 0, len(g.Edges))
	for _, e := range g.Edges {
		k := ekey{int32(funcOf[e.From]), int32(funcOf[e.To]), e.Kind}
		shared := leveled[g.Nodes[e.From].Key.Func] || leveled[g.Nodes[e.To].Key.Func]
		i, ok := -1, false
		if shared {
			i, ok = eidx[k]
		}
		if !ok {
			aggs = append(aggs, agg{ekey: k})
			i = len(aggs) - 1
			if shared {
				eidx[k] = i
			}
		}
		ag := &aggs[i]
		ag.calls += e.Calls
		ag.rc += e.RecursiveCalls
		ag.total += e.TotalNs
		ag.counted += e.CountedCalls
	}
	// sort (total, index) pairs, then build only the edges listed
	fn := r.Functions // not yet sorted: agg indices point here
	type kv struct {
		total int64
		i     int32
	}
	order := make([]kv, len(aggs))
	for i := range aggs {
		order[i] = kv{aggs[i].total, int32(i)}
	}
	slices.SortFunc(order, func(x, y kv) int {
		if x.total != y.total {
			if x.total > y.total {
				return -1
			}
			return 1
		}
		a, b := &aggs[x.i], &aggs[y.i]
		fa, fb, ta, tb := &fn[a.from], &fn[b.from], &fn[a.to], &fn[b.to]
		ca, cb := isCounted(a.counted, a.calls, a.total), isCounted(b.counted, b.calls, b.total)
		return cmp.Or(compareCounted(ca, cb, a.calls, b.calls),
			strings.Compare(fa.Name, fb.Name), strings.Compare(ta.Name, tb.Name),
			strings.Compare(fa.Module, fb.Module), strings.Compare(ta.Module, tb.Module),
			strings.Compare(a.kind.String(), b.kind.String()))
	})
	r.AllEdges = len(aggs)
	if opt.Top > 0 {
		order = order[:min(opt.Top, len(order))]
	}
	r.Edges = make([]Edge, len(order))
	for i, o := range order {
		ag := &aggs[o.i]
		from, to := &fn[ag.from], &fn[ag.to]
		r.Edges[i] = Edge{Caller: from.Name, Callee: to.Name, CallerModule: from.Module, CalleeModule: to.Module,
			Kind: ag.kind.String(),
			EdgeNumbers: EdgeNumbers{Calls: ag.calls, RecursiveCalls: ag.rc, Counted: isCounted(ag.counted, ag.calls, ag.total),
				TotalNs: ag.total, TotalPct: pct(ag.total)},
			CallerDisplay: from.Display, CalleeDisplay: to.Display}
		if shares != nil {
			r.Edges[i].Threads = shares.edge(ag.from, ag.to, ag.kind, r.Edges[i].Counted)
		}
	}

	r.HottestPath = hottestPath(p, g, opt.FullNames)
	w := walkCCTs(p, refs)
	r.Totals.DirectCalls, r.Totals.IndirectCalls, r.Totals.PLTCalls = w.direct, w.indirect, w.plt
	r.Totals.MaxRecursionDepth = w.maxDepth
	// blocked time: of the wall-time profile, a share of wall time
	gw, bdw := g, bd
	if opt.Busy {
		gw = wall.Graph(scope)
		bdw = wall.Breakdown(gw, scope)
	}
	r.Totals.BlockedNs, r.Totals.WallNs, r.Totals.Times = bdw.WaitNs, gw.TracedNs, "wall"
	if opt.Busy {
		r.Totals.Times, r.Totals.BusySampled = "busy", p.Meta.BusySampled()
	}
	for f, d := range w.depth {
		if fn := r.Functions[fidx[f]]; d > 1 || fn.RecursiveCalls > 0 {
			r.Recursion = append(r.Recursion, Recursion{Display: fn.Display, Calls: fn.Calls,
				RecursiveCalls: fn.RecursiveCalls, MaxDepth: d, full: p.FuncName(f)})
		}
	}
	sort.Slice(r.Recursion, func(i, j int) bool {
		a, b := r.Recursion[i], r.Recursion[j]
		if a.MaxDepth != b.MaxDepth {
			return a.MaxDepth > b.MaxDepth
		}
		if a.RecursiveCalls != b.RecursiveCalls {
			return a.RecursiveCalls > b.RecursiveCalls
		}
		return a.full < b.full
	})
	var onCPU map[int]int64
	if waitingSampled(wall.Meta.CPUSamples) {
		gb := g
		if !opt.Busy {
			gb = wall.Busy().Graph(scope)
		}
		onCPU = waitingCPU(wall, gb)
		r.Totals.WaitingCPU = true
	}
	r.Blocking = blockedFuncs(wall, gw, bdw, onCPU, func(ns int64) float64 { return 100 * gw.Coverage(ns) }, opt.FullNames)
	for _, b := range r.Blocking {
		r.Totals.BlockedNs -= b.OnCPUNs
		r.Totals.WaitingCPUNs += b.OnCPUNs
	}
	// threads, levels, processes
	levels := map[int]*Level{}
	for _, t := range refs {
		spawned := ""
		if t.SpawnedBy != model.None {
			spawned = p.Functions[t.SpawnedBy].Name
		}
		r.Threads = append(r.Threads, Thread{Tid: t.Tid, Pid: t.Pid, Name: t.Name, ParentTid: t.ParentTid,
			SpawnedBy: spawned, NestingLevel: t.Level, TracedNs: t.TracedNs})
		r.Totals.MaxNestingLevel = max(r.Totals.MaxNestingLevel, t.Level)
		l := levels[t.Level]
		if l == nil {
			l = &Level{Level: t.Level}
			levels[t.Level] = l
		}
		l.Threads++
		l.TracedNs += t.TracedNs
	}
	for _, l := range levels {
		r.Levels = append(r.Levels, *l)
	}
	sort.Slice(r.Levels, func(i, j int) bool { return r.Levels[i].Level < r.Levels[j].Level })
	replaced := map[int]bool{} // images an exec replaced
	for _, pr := range p.Processes {
		if pr.ExecOf != model.None {
			replaced[pr.ExecOf] = true
		}
	}
	for _, pi := range procs {
		pr := p.Processes[pi]
		out := Process{Pid: pr.Pid, ParentPid: pr.ParentPid, Exe: pr.Exe, StartedAs: pr.StartedAs(), ExitCode: pr.ExitCode, Signal: pr.Signal,
			State: procState(p, pi, replaced)}
		if pr.Parent != model.None {
			out.ParentPid = p.Processes[pr.Parent].Pid
		}
		if pr.ForkedBy != model.None {
			out.ForkedBy = p.Functions[pr.ForkedBy].Name
		}
		r.Processes = append(r.Processes, out)
	}

	r.Totals.Nodes, r.Totals.Edges = len(g.Nodes), len(g.Edges)
	r.Totals.Threads, r.Totals.Processes = len(r.Threads), len(r.Processes)
	r.Totals.TracedNs = g.TracedNs
	r.Totals.Sampled, r.Values = p.Meta.Sampled(), p.Meta.Values()
	if shares != nil {
		shares.fill(r, refs)
	}

	sortReport(r)
	r.AllFuncs = len(r.Functions)
	if opt.Top > 0 {
		r.Functions = r.Functions[:min(opt.Top, len(r.Functions))]
	}
	r.Functions = nonNil(r.Functions)
	r.Edges = nonNil(r.Edges)
	r.Modules = nonNil(r.Modules)
	r.Threads = nonNil(r.Threads)
	r.Processes = nonNil(r.Processes)
	return r, nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// processesInScope lists the processes of the scope: every one without a
// scope, else those whose pid matches (with --tid: that has the thread).
func processesInScope(p *model.Profile, s model.Scope, refs []model.NumberedThread) []int {
	pids := make(map[int]bool)
	for _, t := range refs {
		pids[t.Pid] = true
	}
	var out []int
	for i, pr := range p.Processes {
		if (s.Tid == 0 && (s.Pid == 0 || s.Pid == pr.Pid)) || pids[pr.Pid] {
			out = append(out, i)
		}
	}
	return out
}

// isCounted tells a function or edge whose calls (of them counted, by
// counting probes) were all counted and none timed (no time at all).
func isCounted(counted, calls, ns int64) bool {
	return counted > 0 && counted == calls && ns == 0
}

// compareCounted orders, among equal times, the measured before the
// counted, which have no time to rank by, and the counted by calls, most
// first.
func compareCounted(a, b bool, callsA, callsB int64) int {
	switch {
	case a != b && !a:
		return -1
	case a != b:
		return 1
	case a:
		return cmp.Compare(callsB, callsA)
	}
	return 0
}

func sortReport(r *Report) {
	sortBy(r.Functions, func(f *Function) int64 { return f.SelfNs }, func(a, b *Function) int {
		return cmp.Or(compareCounted(a.Counted, b.Counted, a.Calls, b.Calls),
			strings.Compare(a.Name, b.Name), strings.Compare(a.Module, b.Module))
	})
	sortBy(r.Modules, func(m *Module) int64 { return m.SelfNs }, func(a, b *Module) int {
		return strings.Compare(a.Module, b.Module)
	})
}

// sortBy sorts s by key, largest first, then by tie. It sorts compact
// (key, index) pairs rather than the large structs themselves.
func sortBy[T any](s []T, key func(*T) int64, tie func(a, b *T) int) {
	type kv struct {
		key int64
		i   int32
	}
	idx := make([]kv, len(s))
	for i := range s {
		idx[i] = kv{key(&s[i]), int32(i)}
	}
	slices.SortFunc(idx, func(a, b kv) int {
		if a.key != b.key {
			return cmp.Compare(b.key, a.key)
		}
		return tie(&s[a.i], &s[b.i])
	})
	sorted := make([]T, len(s))
	for i, x := range idx {
		sorted[i] = s[x.i]
	}
	copy(s, sorted)
}

// hottestPath follows, from START, the call edge of the largest total time
// to a function not yet on the path; ties go by full name.
func hottestPath(p *model.Profile, g *model.Graph, fullNames bool) []PathStep {
	out := make([][]int, len(g.Nodes))
	for i, e := range g.Edges {
		if e.Kind == model.EdgeCall && e.TotalNs > 0 {
			out[e.From] = append(out[e.From], i)
		}
	}
	onPath := make([]bool, len(g.Nodes))
	var path []PathStep
	for cur := 0; ; {
		onPath[cur] = true
		best := -1
		for _, ei := range out[cur] {
			e := &g.Edges[ei]
			if onPath[e.To] {
				continue
			}
			if best < 0 || e.TotalNs > g.Edges[best].TotalNs ||
				e.TotalNs == g.Edges[best].TotalNs && keyLess(p, g.Nodes[e.To].Key, g.Nodes[g.Edges[best].To].Key) {
				best = ei
			}
		}
		if best < 0 {
			return path
		}
		e := &g.Edges[best]
		k := g.Nodes[e.To].Key
		path = append(path, PathStep{Display: p.DisplayName(k.Func, fullNames), Level: k.Level, Calls: e.Calls,
			TotalNs: e.TotalNs, TotalPct: 100 * g.Coverage(e.TotalNs)})
		cur = e.To
	}
}

func keyLess(p *model.Profile, a, b model.Key) bool {
	if na, nb := p.FuncName(a.Func), p.FuncName(b.Func); na != nb {
		return na < nb
	}
	if a.Func != b.Func {
		return a.Func < b.Func
	}
	return a.Level < b.Level
}

// blockedFuncs lists the waiting calls of graph g with the time of their
// outermost activations (not inside another waiting call), most blocked
// first, ties by full name.
// onCPU holds each function's sampled CPU time (nil: none).
func blockedFuncs(p *model.Profile, g *model.Graph, bd *model.Breakdown, onCPU map[int]int64, pct func(int64) float64, fullNames bool) []BlockedFn {
	byFunc := map[int]*BlockedFn{}
	var out []BlockedFn
	for i, w := range bd.Nodes {
		if w.OuterCalls == 0 && w.OuterNs == 0 {
			continue
		}
		f := g.Nodes[i].Key.Func
		b := byFunc[f]
		if b == nil {
			out = append(out, BlockedFn{Display: p.DisplayName(f, fullNames), full: p.FuncName(f)})
			b = &out[len(out)-1]
			byFunc[f] = b
		}
		b.Calls += w.OuterCalls
		b.WallNs += w.OuterNs
		b.fn = f
	}
	for i := range out {
		b := &out[i]
		b.OnCPUNs = min(onCPU[b.fn], b.WallNs)
		b.BlockedNs = b.WallNs - b.OnCPUNs
		b.Pct = pct(b.BlockedNs)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.BlockedNs != b.BlockedNs {
			return a.BlockedNs > b.BlockedNs
		}
		return a.full < b.full
	})
	return out
}

// walk holds what only the CCTs' paths tell: call kinds and recursion
// depth.
type walk struct {
	direct, indirect, plt int64
	maxDepth              int
	depth                 map[int]int // function -> max activations on one path
}

// walkCCTs visits every CCT of the scope's threads refs depth-first. Call
// kinds are not split by member in a composite thread: they count only
// when all of the thread's members are in scope.
func walkCCTs(p *model.Profile, refs []model.NumberedThread) *walk {
	w := &walk{depth: map[int]int{}}
	active := make([]int32, len(p.Functions)) // activations of f on the current path
	depth := make([]int32, len(p.Functions))
	inScope := map[int]int{} // thread -> members in scope
	for _, t := range refs {
		inScope[t.Thread]++
	}
	var kids, start []int32
	var stack []int32
	for ri, t := range refs {
		th := &p.Threads[t.Thread]
		nodes := th.Nodes
		// call kinds: once per thread
		if ri == 0 || refs[ri-1].Thread != t.Thread {
			if len(th.Members) == 0 || inScope[t.Thread] == len(th.Members) {
				for i := range nodes {
					w.direct += nodes[i].DirectCalls
					w.indirect += nodes[i].IndirectCalls
					w.plt += nodes[i].PLTCalls
				}
			}
			// children lists (CSR), shared by the thread's members
			start = resize(start, len(nodes)+1)
			clear(start)
			for i := 1; i < len(nodes); i++ {
				start[nodes[i].Parent+1]++
			}
			for i := 1; i <= len(nodes); i++ {
				start[i] += start[i-1]
			}
			kids = resize(kids, len(nodes))
			fill := resize(stack, len(nodes))
			copy(fill, start[:len(nodes)])
			for i := 1; i < len(nodes); i++ {
				par := nodes[i].Parent
				kids[fill[par]] = int32(i)
				fill[par]++
			}
			stack = fill[:0]
		}
		// depth-first: a node is pushed as n+1 (enter) and popped as -(n+1) (leave)
		stack = append(stack[:0], 1)
		for len(stack) > 0 {
			x := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if x < 0 {
				active[nodes[-x-1].Func]--
				continue
			}
			n := int(x - 1)
			if _, reached := p.NodeVec(t.ThreadRef, n); !reached {
				continue // this member never reached the context
			}
			if f := nodes[n].Func; n > 0 {
				active[f]++
				if a := active[f]; a > depth[f] {
					depth[f] = a
				}
				stack = append(stack, -x)
			}
			for k := start[n+1] - 1; k >= start[n]; k-- {
				stack = append(stack, kids[k]+1)
			}
		}
	}
	for f, d := range depth {
		if d > 0 {
			w.depth[f] = int(d)
			w.maxDepth = max(w.maxDepth, int(d))
		}
	}
	return w
}

func resize(s []int32, n int) []int32 {
	if cap(s) < n {
		return make([]int32, n)
	}
	return s[:n]
}
