package model

import "slices"

// Busy returns p with the time spent blocked taken out, so that every
// analysis ranks what computes. p itself is not changed.
//
// With CPU samples (Meta.CPUSamples, docs/design.md, Sampled times) the
// busy times are the sampled ones (busySampled): each context's self time
// becomes its sampled CPU time, inside waiting calls too (a thread copying
// data in read is busy), its total the sampled time of its subtree, and a
// thread's traced time the sum of its samples.
//
// Without, they are the measured times less the time inside waiting calls
// (WaitingFuncs) and everything they call: a context inside a waiting call
// keeps its calls but loses its self time; every other context's total
// loses the waiting time inside it; a thread's traced time (and each
// member's, in a composite thread) loses what its self times lost, so
// they still add up. Breakdown splits the same time out of a graph without
// changing the profile.
//
// A profile imported from a sampling profiler (Meta.Sampling) is returned
// as it is: its values are CPU samples already, a waiting call's among
// them the CPU time spent in it.
func (p *Profile) Busy() *Profile {
	if p.Meta.Sampled() {
		return p
	}
	waiting := p.WaitingFuncs()
	out := *p
	out.Threads = slices.Clone(p.Threads)
	for i := range out.Threads {
		t := &out.Threads[i]
		if len(t.Nodes) == 0 {
			continue
		}
		t.Nodes = slices.Clone(t.Nodes)
		t.Members = slices.Clone(t.Members)
		for j := range t.Nodes {
			t.Nodes[j].Contribs = slices.Clone(t.Nodes[j].Contribs)
		}
		if s := p.Meta.CPUSamples; s != nil {
			busySampled(t, waiting, s.NotSampled == "")
			continue
		}
		busyThread(t, waiting)
	}
	return &out
}

// busyThread takes the waiting time out of thread t's measured times.
func busyThread(t *Thread, waiting []bool) {
	nodes := t.Nodes
	in := inWaiting(t, waiting, make([]bool, len(nodes)))
	wait := make([]int64, len(nodes))
	waitInside(t, in, func(i int) int64 { return nodes[i].TotalNs }, wait)
	for i := range nodes {
		n := &nodes[i]
		if in[i] {
			t.TracedNs -= n.SelfNs + n.DroppedNs
			n.SelfNs, n.DroppedNs = 0, 0
		}
	}
	for i := range nodes {
		nodes[i].TotalNs = min(max(nodes[i].TotalNs-wait[i], 0), t.TracedNs)
	}
	// A composite thread's member contributions, member by member.
	for m := range t.Members {
		busyMember(t, m, in, wait)
	}
}

// busyMember takes the waiting time out of member m's shares of thread
// t's nodes, and of its traced time; in marks the contexts inside waiting
// calls, wait is scratch.
func busyMember(t *Thread, m int, in []bool, wait []int64) {
	nodes := t.Nodes
	waitInside(t, in, func(i int) int64 { return nodeVec(&nodes[i], m).TotalNs }, wait)
	for i := range nodes {
		for k := range nodes[i].Contribs {
			c := &nodes[i].Contribs[k]
			if c.Member != m {
				continue
			}
			if in[i] {
				t.Members[m].TracedNs -= c.SelfNs
				c.SelfNs = 0
			}
			c.TotalNs = max(c.TotalNs-wait[i], 0)
		}
	}
}
