package model

// Calibration is what one traced call costs on the host that made the
// profile, measured per probe kind before tracing, and what was taken out
// of the profile's times.
type Calibration struct {
	Host         string // CPU model the costs were measured on
	Inline, Trap ProbeCost
	// Compensated: the costs were subtracted (Compensate) and so was the
	// time the tracer held threads stopped to set up (HeldNs).
	Compensated  bool
	SubtractedNs int64 // probe time taken out of the self times, all threads
	HeldNs       int64 // set-up time taken out, all threads
	// Trap probes' stops are taken out one by one, each at what it held
	// its thread (the tracer's work on it, measured, plus the kernel's
	// wake-ups, measured on the target): Stops of them, StopNs in all.
	Stops  int64
	StopNs int64
}

// ProbeCost is the time one traced call adds, split by whose self time it
// lands in: InNs in the called function's (between the entry's clock read
// and the return's), OutNs in its caller's (before the entry's clock read
// and after the return's).
type ProbeCost struct {
	InNs, OutNs int64
}

// Compensate returns p with the probes' own cost taken out of its times:
// cost[f] is what a call of function f costs (the zero ProbeCost for a
// function without a probe, and for f beyond cost). A node's self time
// loses its calls' InNs and its callees' OutNs, never going below zero; a
// node's total loses what its whole subtree lost; a thread's traced time
// loses what all its nodes lost, so self times still add up to it. The
// second result is the time taken out.
//
// Composite threads (merged) are left as they are: their nodes split into
// member contributions that the costs do not know. p itself is not
// changed: snapshots share node slices with a running session.
func Compensate(p *Profile, cost []ProbeCost) (*Profile, int64) {
	out := *p
	out.Threads = append([]Thread(nil), p.Threads...)
	var taken int64
	for i := range out.Threads {
		t := &out.Threads[i]
		if len(t.Members) > 0 || len(t.Nodes) == 0 {
			continue
		}
		t.Nodes = append([]Node(nil), t.Nodes...)
		taken += compensateThread(t, cost)
	}
	return &out, taken
}

func compensateThread(t *Thread, cost []ProbeCost) int64 {
	costOf := func(f int) ProbeCost {
		if f >= 0 && f < len(cost) {
			return cost[f]
		}
		return ProbeCost{}
	}
	nodes := t.Nodes
	want := make([]int64, len(nodes))
	for i := 1; i < len(nodes); i++ {
		n := &nodes[i]
		c := costOf(n.Func)
		want[i] += n.Calls * c.InNs
		want[n.Parent] += n.Calls * c.OutNs
	}
	// want becomes what each node's self time lost, then (children after
	// their parents, so summed backwards) what its subtree lost.
	for i := range nodes {
		want[i] = min(want[i], nodes[i].SelfNs)
		nodes[i].SelfNs -= want[i]
	}
	for i := len(nodes) - 1; i > 0; i-- {
		want[nodes[i].Parent] += want[i]
	}
	t.TracedNs -= want[0]
	for i := range nodes {
		n := &nodes[i]
		if n.TotalNs > 0 {
			n.TotalNs = min(max(n.TotalNs-want[i], 0), t.TracedNs)
		}
	}
	return want[0]
}
