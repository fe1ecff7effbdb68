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
	// in: the context is a waiting call or runs inside one.
	in := make([]bool, len(nodes))
	for i := 1; i < len(nodes); i++ {
		in[i] = in[nodes[i].Parent] || waiting[nodes[i].Func]
	}
	// wait[i] is the waiting time inside context i: the totals of the
	// outermost waiting calls in its subtree (its own, if it is inside
	// one); cw[i][k] the same for its contribution Contribs[k]. Children
	// follow their parents, so a backward pass sums them.
	wait := make([]int64, len(nodes))
	cw := make([][]int64, len(nodes))
	for i := range nodes {
		if c := nodes[i].Contribs; len(c) > 0 {
			nodes[i].Contribs = slices.Clone(c)
			cw[i] = make([]int64, len(c))
		}
	}
	for i := len(nodes) - 1; i > 0; i-- {
		n := &nodes[i]
		if in[i] {
			wait[i] = n.TotalNs
			for k, c := range n.Contribs {
				cw[i][k] = c.TotalNs
			}
		}
		par := n.Parent
		if in[par] {
			continue // the parent's own total holds it
		}
		wait[par] += wait[i]
		for k, c := range n.Contribs {
			if pk := contribOf(nodes[par].Contribs, c.Member); pk >= 0 {
				cw[par][pk] += cw[i][k]
			}
		}
	}
	for i := range nodes {
		n := &nodes[i]
		if in[i] {
			t.TracedNs -= n.SelfNs + n.DroppedNs
			n.SelfNs, n.DroppedNs = 0, 0
			for k := range n.Contribs {
				c := &n.Contribs[k]
				if c.Member < len(t.Members) {
					t.Members[c.Member].TracedNs -= c.SelfNs
				}
				c.SelfNs = 0
			}
		}
	}
	for i := range nodes {
		n := &nodes[i]
		n.TotalNs = min(max(n.TotalNs-wait[i], 0), t.TracedNs)
		for k := range n.Contribs {
			c := &n.Contribs[k]
			c.TotalNs = max(c.TotalNs-cw[i][k], 0)
		}
	}
}

// contribOf returns the index in cs (ordered by member) of member m's
// contribution, -1 if it has none.
func contribOf(cs []Contrib, m int) int {
	i, ok := slices.BinarySearchFunc(cs, m, func(c Contrib, m int) int { return c.Member - m })
	if !ok {
		return -1
	}
	return i
}
