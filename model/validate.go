package model

import (
	"fmt"
	"math"
)

// InvariantError names the invariant a profile breaks and where.
type InvariantError struct {
	Where string // e.g. "thread 3 (tid 4242) node 17"
	Rule  string
	// Measurement: a timing measurement can break the rule (clocks read
	// apart), not only a bug or a damaged file; Repair fixes it.
	Measurement bool
}

func (e *InvariantError) Error() string {
	if e.Where == "" {
		return "invalid profile: " + e.Rule
	}
	return "invalid profile: " + e.Where + ": " + e.Rule
}

func broken(where any, format string, args ...any) error {
	return &InvariantError{Where: fmt.Sprint(where), Rule: fmt.Sprintf(format, args...)}
}

func mismeasured(where any, format string, args ...any) error {
	return &InvariantError{Where: fmt.Sprint(where), Rule: fmt.Sprintf(format, args...), Measurement: true}
}

// Validate checks every invariant of the data model and returns the first
// one broken, as an *InvariantError: the structural ones first (indices,
// tree shape, counts), then those a timing measurement can break, which
// Repair fixes.
func (p *Profile) Validate() error {
	if err := p.validateStructure(); err != nil {
		return err
	}
	return p.validateMeasurements()
}

// validateStructure checks the invariants no measurement can break: a
// profile breaking one is damaged or was built by a bug, and Repair leaves
// it alone.
func (p *Profile) validateStructure() error {
	if err := p.validateTables(); err != nil {
		return err
	}
	if err := p.validateProcesses(); err != nil {
		return err
	}
	if err := p.Meta.validateCPUSamples(); err != nil {
		return err
	}
	for i := range p.Threads {
		if err := p.validateThread(i); err != nil {
			return err
		}
	}
	return nil
}

func (p *Profile) validateTables() error {
	if len(p.Modules) == 0 || p.Modules[0].Path != "" {
		return broken("modules", "module 0 must be the empty module of START")
	}
	if len(p.Functions) == 0 || p.Functions[StartFunc] != (Function{Module: 0, Name: StartName}) {
		return broken("functions", "function 0 must be START in module 0")
	}
	seenMod := make(map[string]bool, len(p.Modules))
	for i, m := range p.Modules {
		if seenMod[m.Path] {
			return broken(fmt.Sprintf("module %d", i), "duplicate module %q", m.Path)
		}
		seenMod[m.Path] = true
	}
	// Identity is (module, name): the same function twice with different
	// TracedSinceNs is still a duplicate.
	seen := make(map[funcKey]bool, len(p.Functions))
	for i, f := range p.Functions {
		where := fmt.Sprintf("function %d", i)
		if f.Module < 0 || f.Module >= len(p.Modules) {
			return broken(where, "module index %d out of range", f.Module)
		}
		if i != StartFunc && f.Module == 0 {
			return broken(where, "only START may live in module 0")
		}
		if f.Name == "" {
			return broken(where, "empty name")
		}
		if f.TracedSinceNs < 0 {
			return broken(fmt.Sprintf("%s (%s)", where, f.Name), "negative traced-since time %d ns", f.TracedSinceNs)
		}
		if f.TracedUntilNs < 0 || f.TracedUntilNs > 0 && f.TracedUntilNs < f.TracedSinceNs {
			return broken(fmt.Sprintf("%s (%s)", where, f.Name), "traced-until time %d ns before its traced-since time %d ns", f.TracedUntilNs, f.TracedSinceNs)
		}
		if f.Probe > ProbeCounted {
			return broken(fmt.Sprintf("%s (%s)", where, f.Name), "unknown probe kind %d", f.Probe)
		}
		k := funcKey{f.Module, f.Name}
		if seen[k] {
			return broken(where, "duplicate function %q", f.Name)
		}
		seen[k] = true
	}
	return nil
}

func (p *Profile) validateProcesses() error {
	for i, pr := range p.Processes {
		where := fmt.Sprintf("process %d (pid %d)", i, pr.Pid)
		if pr.Pid <= 0 {
			return broken(where, "pid must be positive")
		}
		if pr.Parent != None && (pr.Parent < 0 || pr.Parent >= i) {
			return broken(where, "parent index %d must precede the process", pr.Parent)
		}
		if pr.ExecOf != None && (pr.ExecOf < 0 || pr.ExecOf >= i) {
			return broken(where, "exec-of index %d must precede the process", pr.ExecOf)
		}
		if pr.ExecOf != None && p.Processes[pr.ExecOf].Pid != pr.Pid {
			return broken(where, "an exec'd image keeps the pid of the image it replaced")
		}
		if !p.funcOrNone(pr.ForkedBy) {
			return broken(where, "forked-by function %d out of range", pr.ForkedBy)
		}
	}
	return nil
}

func (p *Profile) funcOrNone(f int) bool {
	return f == None || (f > StartFunc && f < len(p.Functions))
}

func (p *Profile) validateThread(ti int) error {
	t := &p.Threads[ti]
	where := fmt.Sprintf("thread %d (tid %d)", ti, t.Tid)
	if t.Process < 0 || t.Process >= len(p.Processes) {
		return broken(where, "process index %d out of range", t.Process)
	}
	if !p.funcOrNone(t.SpawnedBy) {
		return broken(where, "spawning function %d out of range", t.SpawnedBy)
	}
	if t.Level < 0 {
		return broken(where, "negative nesting level")
	}
	if t.TracedNs < 0 {
		return broken(where, "negative traced time")
	}
	for mi, m := range t.Members {
		if !p.funcOrNone(m.SpawnedBy) {
			return broken(fmt.Sprintf("%s member %d", where, mi), "spawning function out of range")
		}
		if m.Level != t.Level {
			return broken(fmt.Sprintf("%s member %d", where, mi), "member level %d differs from the thread's %d", m.Level, t.Level)
		}
	}
	if len(t.Nodes) == 0 || t.Nodes[0].Func != StartFunc || t.Nodes[0].Parent != None {
		return broken(where, "node 0 must be the START root")
	}
	var self, sampled int64
	kids := make(map[uint64]bool, len(t.Nodes))
	for ni := range t.Nodes {
		n := &t.Nodes[ni]
		if err := p.validateNode(t, ni, kids); err != nil {
			return err
		}
		// Both are non-negative here: only an overflow can wrap the sum,
		// and Repair must never set the traced time to a wrapped one.
		x := n.SelfNs + n.DroppedNs
		if x < 0 || self > math.MaxInt64-x {
			return broken(where, "self times overflow 64 bits")
		}
		self += x
		// Busy makes the sampled times self times: the same holds.
		x = n.SampledNs + n.DroppedSampledNs
		if x < 0 || sampled > math.MaxInt64-x {
			return broken(where, "sampled times overflow 64 bits")
		}
		sampled += x
	}
	if sampled > 0 && p.Meta.CPUSamples == nil {
		return broken(where, "sampled times in a profile without CPU samples")
	}
	if t.DroppedTrees < 0 {
		return broken(where, "negative dropped tree count")
	}
	if err := p.validateArcs(t); err != nil {
		return broken(where, "%v", err)
	}
	for i := range t.Trees {
		if err := p.validateTree(&t.Trees[i]); err != nil {
			return broken(fmt.Sprintf("%s detail tree %d", where, i), "%v", err)
		}
	}
	return nil
}

// validateArcs checks a thread's counted calls: functions in range (a
// caller may be None, START is neither), calls positive, sorted by
// (callee, caller) without a pair twice, and in a composite thread split
// by member as nodes are.
func (p *Profile) validateArcs(t *Thread) error {
	for i := range t.Arcs {
		a := &t.Arcs[i]
		switch {
		case a.Callee <= StartFunc || a.Callee >= len(p.Functions):
			return fmt.Errorf("arc %d: callee %d out of range", i, a.Callee)
		case !p.funcOrNone(a.Caller):
			return fmt.Errorf("arc %d: caller %d out of range", i, a.Caller)
		case a.Calls <= 0:
			return fmt.Errorf("arc %d: %d calls, want more than 0", i, a.Calls)
		case i > 0 && compareArcs(t.Arcs[i-1], *a) >= 0:
			return fmt.Errorf("arc %d: not after arc %d in (callee, caller) order, or the same pair", i, i-1)
		}
		if len(t.Members) == 0 {
			if len(a.Contribs) > 0 {
				return fmt.Errorf("arc %d: member shares in a thread without members", i)
			}
			continue
		}
		var sum int64
		last := -1
		for _, c := range a.Contribs {
			if c.Member <= last || c.Member >= len(t.Members) || c.Calls <= 0 {
				return fmt.Errorf("arc %d: member shares must name members in increasing order, each with calls", i)
			}
			last = c.Member
			sum += c.Calls
		}
		if sum != a.Calls {
			return fmt.Errorf("arc %d: member shares add up to %d calls, the arc has %d", i, sum, a.Calls)
		}
	}
	return nil
}

// validateTree checks a detail tree's structure: functions in range,
// pre-order depths from 0.
func (p *Profile) validateTree(tr *DetailTree) error {
	for i, c := range tr.Calls {
		if c.Func <= StartFunc || c.Func >= len(p.Functions) {
			return fmt.Errorf("call %d: function %d out of range", i, c.Func)
		}
		if c.NArgs < -1 || c.NArgs > 6 {
			return fmt.Errorf("call %d: %d arguments", i, c.NArgs)
		}
		if i == 0 && c.Depth != 0 || i > 0 && (c.Depth < 1 || c.Depth > tr.Calls[i-1].Depth+1) {
			return fmt.Errorf("call %d: depth %d out of order", i, c.Depth)
		}
	}
	return nil
}

func (p *Profile) validateNode(t *Thread, ni int, kids map[uint64]bool) error {
	n := &t.Nodes[ni]
	where := nodeWhere{t.Tid, ni}
	if ni > 0 {
		if n.Parent < 0 || n.Parent >= ni {
			return broken(where, "parent %d must precede its child", n.Parent)
		}
		if n.Func <= StartFunc || n.Func >= len(p.Functions) {
			return broken(where, "function %d out of range (START only at the root)", n.Func)
		}
		k := childKey(n.Parent, n.Func)
		if kids[k] {
			return broken(where, "two children of node %d for one function", n.Parent)
		}
		kids[k] = true
	}
	switch {
	case n.Calls < 0 || n.RecursiveCalls < 0 || n.SelfNs < 0 || n.TotalNs < 0 ||
		n.DirectCalls < 0 || n.IndirectCalls < 0 || n.PLTCalls < 0 || n.InFlight < 0 || n.DroppedNs < 0 ||
		n.SampledNs < 0 || n.DroppedSampledNs < 0:
		return broken(where, "negative value")
	case n.RecursiveCalls > n.Calls:
		return broken(where, "recursive calls %d exceed calls %d", n.RecursiveCalls, n.Calls)
	case n.DirectCalls+n.IndirectCalls+n.PLTCalls > n.Calls:
		return broken(where, "call kinds add up to more than the calls")
	}
	return validateContribs(n, len(t.Members), where)
}

// validateCPUSamples checks how the CPU time was sampled: no negative
// count, and a period, which only a merge of runs sampled at different
// periods lacks (0: mixed).
func (m *Meta) validateCPUSamples() error {
	c := m.CPUSamples
	switch {
	case c == nil:
		return nil
	case c.Samples < 0 || c.Kernel < 0 || c.InProbes < 0 || c.Lost < 0 || c.PeriodNs < 0:
		return broken("cpu samples", "negative value")
	case c.Kernel > c.Samples:
		return broken("cpu samples", "%d samples in the kernel of %d", c.Kernel, c.Samples)
	case c.PeriodNs == 0 && m.Mode != "merge":
		return broken("cpu samples", "no sampling period (only a merge of runs with different periods has none)")
	}
	return nil
}

// nodeWhere names a node lazily: formatting it for every node of a
// million-node profile would dominate Validate.
type nodeWhere struct{ tid, node int }

func (w nodeWhere) String() string { return fmt.Sprintf("tid %d node %d", w.tid, w.node) }

func validateContribs(n *Node, members int, where nodeWhere) error {
	if len(n.Contribs) == 0 {
		return nil
	}
	var c Contrib
	last := -1
	for _, x := range n.Contribs {
		if x.Member <= last || x.Member >= members {
			return broken(where, "contributions must name members in increasing order")
		}
		last = x.Member
		c.Calls += x.Calls
		c.RecursiveCalls += x.RecursiveCalls
		c.SelfNs += x.SelfNs
		c.TotalNs += x.TotalNs
		c.SampledNs += x.SampledNs
		c.DroppedSampledNs += x.DroppedSampledNs
	}
	if c.Calls != n.Calls || c.RecursiveCalls != n.RecursiveCalls || c.SelfNs != n.SelfNs || c.TotalNs != n.TotalNs ||
		c.SampledNs != n.SampledNs || c.DroppedSampledNs != n.DroppedSampledNs {
		return broken(where, "member contributions do not add up to the node")
	}
	return nil
}

// validateMeasurements checks the invariants a timing measurement can
// break (two clocks read for one thread, a clock stepping back), on a
// structurally valid profile. Repair fixes each of them, but one: a
// composite node whose total its members' shares cannot be cut to fit.
func (p *Profile) validateMeasurements() error {
	for ti := range p.Threads {
		t := &p.Threads[ti]
		where := fmt.Sprintf("thread %d (tid %d)", ti, t.Tid)
		if self := selfSum(t); self != t.TracedNs {
			return mismeasured(where, "self times add up to %d ns, traced time is %d ns", self, t.TracedNs)
		}
		for ni := range t.Nodes {
			n := &t.Nodes[ni]
			if n.TotalNs <= t.TracedNs {
				continue
			}
			if _, ok := fitContribs(t, n); !ok {
				return broken(nodeWhere{t.Tid, ni}, "total time %d ns exceeds the thread's traced time %d ns, "+
					"and its members' shares, each within its member's traced time, do not fit in it "+
					"(a composite thread's traced time is its members' sum)", n.TotalNs, t.TracedNs)
			}
			return mismeasured(nodeWhere{t.Tid, ni}, "total time %d ns exceeds the thread's traced time %d ns", n.TotalNs, t.TracedNs)
		}
		for i := range t.Trees {
			for ci, c := range t.Trees[i].Calls {
				if c.EndNs < c.StartNs {
					return mismeasured(fmt.Sprintf("%s detail tree %d", where, i), "call %d ends before it starts", ci)
				}
			}
		}
	}
	return nil
}

// selfSum is what a thread's traced time must be: the self times of its
// nodes, with what prune folded into them.
func selfSum(t *Thread) int64 {
	var s int64
	for i := range t.Nodes {
		s += t.Nodes[i].SelfNs + t.Nodes[i].DroppedNs
	}
	return s
}
