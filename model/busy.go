package model

import "slices"

// Busy returns p with the time spent blocked taken out: the time inside
// waiting calls (WaitingFuncs) and everything they call. A context inside
// a waiting call keeps its calls but loses its self time; every other
// context's total loses the waiting time inside it; a thread's traced
// time (and each member's, in a composite thread) loses what its self
// times lost, so they still add up. Breakdown splits the same time out
// of a graph without changing the profile; Busy gives every analysis a
// profile of busy time to work on. p itself is not changed.
func (p *Profile) Busy() *Profile {
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
		busyThread(t, waiting)
	}
	return &out
}

func busyThread(t *Thread, waiting []bool) {
	nodes := t.Nodes
	in := inWaiting(t, waiting, make([]bool, len(nodes)))
	wait := make([]int64, len(nodes))
	waitInside(t, in, func(i int) int64 { return nodes[i].TotalNs }, wait)
	for i := range nodes {
		n := &nodes[i]
		n.Contribs = slices.Clone(n.Contribs)
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
}
