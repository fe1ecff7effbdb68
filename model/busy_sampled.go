package model

import "slices"

// Busy times from CPU samples (docs/design.md, Sampled times). A probe
// costs tens of nanoseconds where a short call lasts a few, so measured
// times are distorted where calls are many and short; a sample is not.

// busySampled is Busy on thread t of a profile with CPU samples. A
// (member) thread that was sampled takes its busy times from its samples:
// a context's self time is its SampledNs, its DroppedNs the sampled time
// prune folded into it (DroppedSampledNs), its total the sampled time of its subtree
// unless its function is already active on its path (Recorder.Exit counts
// only outermost activations), and the thread's traced time the sum. A
// waiting call keeps its sampled time: a thread on a CPU inside it is
// busy. A thread that was not sampled keeps its measured times less the
// waiting (busyThread). every: every thread was sampled
// (CPUSamples.NotSampled is empty), so one without samples ran less than
// a period on a CPU; else a thread without any sample is taken for one
// that was not sampled.
func busySampled(t *Thread, waiting []bool, every bool) {
	if len(t.Members) == 0 {
		if every || hasSamples(t) {
			sampledThread(t)
		} else {
			busyThread(t, waiting)
		}
		return
	}
	sampled := sampledMembers(t)
	n := 0
	for m := range sampled {
		if sampled[m] = sampled[m] || every; sampled[m] {
			n++
		}
	}
	switch n {
	case 0:
		busyThread(t, waiting)
	case len(sampled):
		sampledThread(t)
	default:
		mixedThread(t, waiting, sampled)
	}
}

// hasSamples reports whether thread t has any sampled time.
func hasSamples(t *Thread) bool {
	for i := range t.Nodes {
		if n := &t.Nodes[i]; n.SampledNs+n.DroppedSampledNs > 0 {
			return true
		}
	}
	return false
}

// sampledMembers marks the members of composite thread t that have any
// sampled time.
func sampledMembers(t *Thread) []bool {
	out := make([]bool, len(t.Members))
	for i := range t.Nodes {
		for _, c := range t.Nodes[i].Contribs {
			if c.SampledNs+c.DroppedSampledNs > 0 && c.Member >= 0 && c.Member < len(out) {
				out[c.Member] = true
			}
		}
	}
	return out
}

// sampledThread gives every node of t, and every member's share, its
// sampled times.
func sampledThread(t *Thread) {
	nodes := t.Nodes
	inner, sub := innerContexts(t), nodeSubtrees(t)
	for i := range nodes {
		n := &nodes[i]
		n.SelfNs, n.DroppedNs, n.TotalNs = n.SampledNs, n.DroppedSampledNs, outerTotal(i, inner, sub[i])
	}
	t.TracedNs = sub[0]
	if len(t.Members) == 0 {
		return
	}
	sampledShares(t, inner, func(int) bool { return true })
	for i := range nodes {
		if n := &nodes[i]; len(n.Contribs) > 0 {
			n.TotalNs = 0 // its shares', which add up to it when every share's member has one in the parent
			for _, c := range n.Contribs {
				n.TotalNs += c.TotalNs
			}
		}
	}
}

// sampledShares gives the shares of the members sampled selects their
// sampled times, and those members their sampled traced time.
func sampledShares(t *Thread, inner []bool, sampled func(m int) bool) {
	nodes := t.Nodes
	off, sub := memberSubtrees(t)
	traced := make([]int64, len(t.Members))
	for i := range nodes {
		for k := range nodes[i].Contribs {
			c := &nodes[i].Contribs[k]
			if !sampled(c.Member) {
				continue
			}
			c.SelfNs, c.TotalNs = c.SampledNs, outerTotal(i, inner, sub[int(off[i])+k])
			traced[c.Member] += c.SampledNs + c.DroppedSampledNs
		}
	}
	for m := range t.Members {
		if sampled(m) {
			t.Members[m].TracedNs = traced[m]
		}
	}
}

// mixedThread gives a composite thread whose members were sampled (as
// sampled says) and not sampled each its own busy times: the sampled
// ones' from their samples, the others' measured less the waiting. A node
// is its members' shares. The time prune folded away is the sampled one:
// the measured one is not split by member, so the unsampled members'
// part of it cannot be told apart; their traced time is their shares'
// self times, and no share's total exceeds its member's traced time.
func mixedThread(t *Thread, waiting []bool, sampled []bool) {
	nodes := t.Nodes
	in := inWaiting(t, waiting, make([]bool, len(nodes)))
	wait := make([]int64, len(nodes))
	for m := range t.Members {
		if !sampled[m] {
			busyMember(t, m, in, wait)
		}
	}
	self := make([]int64, len(t.Members))
	for i := range nodes {
		for _, c := range nodes[i].Contribs {
			if !sampled[c.Member] {
				self[c.Member] += c.SelfNs
			}
		}
	}
	for m := range t.Members {
		if !sampled[m] {
			t.Members[m].TracedNs = self[m]
		}
	}
	inner := innerContexts(t)
	sampledShares(t, inner, func(m int) bool { return sampled[m] })
	t.TracedNs = 0
	var sub []int64 // a node without shares, which only a damaged file has: its own samples
	for i := range nodes {
		n := &nodes[i]
		n.DroppedNs = n.DroppedSampledNs
		if len(n.Contribs) == 0 {
			if sub == nil {
				sub = nodeSubtrees(t)
			}
			n.SelfNs, n.TotalNs = n.SampledNs, outerTotal(i, inner, sub[i])
		} else {
			n.SelfNs, n.TotalNs = 0, 0
			for k := range n.Contribs {
				c := &n.Contribs[k]
				c.TotalNs = min(c.TotalNs, t.Members[c.Member].TracedNs)
				n.SelfNs += c.SelfNs
				n.TotalNs += c.TotalNs
			}
		}
		t.TracedNs += n.SelfNs + n.DroppedNs
	}
}

// nodeSubtrees is the sampled time of each context's subtree.
func nodeSubtrees(t *Thread) []int64 {
	sub := make([]int64, len(t.Nodes))
	for i := range t.Nodes {
		sub[i] = t.Nodes[i].SampledNs + t.Nodes[i].DroppedSampledNs
	}
	for i := len(t.Nodes) - 1; i > 0; i-- { // children follow parents
		sub[t.Nodes[i].Parent] += sub[i]
	}
	return sub
}

// memberSubtrees is, for each share of each node of t (sub[off[i]+k] for
// t.Nodes[i].Contribs[k]), its member's sampled time in the node's
// subtree. A member's share of a node is found in its parent's by member
// (shares are sorted by member): a member that reached a context reached
// its parent.
func memberSubtrees(t *Thread) (off []int32, sub []int64) {
	nodes := t.Nodes
	off = make([]int32, len(nodes))
	var all int32
	for i := range nodes {
		off[i] = all
		all += int32(len(nodes[i].Contribs))
	}
	sub = make([]int64, all)
	for i := range nodes {
		for k, c := range nodes[i].Contribs {
			sub[int(off[i])+k] = c.SampledNs + c.DroppedSampledNs
		}
	}
	for i := len(nodes) - 1; i > 0; i-- { // children follow parents
		par := nodes[i].Parent
		up := nodes[par].Contribs
		for k, c := range nodes[i].Contribs {
			if j, ok := slices.BinarySearchFunc(up, c.Member, func(x Contrib, m int) int { return x.Member - m }); ok {
				sub[int(off[par])+j] += sub[int(off[i])+k]
			}
		}
	}
	return off, sub
}

// outerTotal is the total of context i whose subtree holds sub: 0 for
// the root (as the Recorder leaves START's) and for a context inside an
// activation of its own function (inner), whose time is in the outer
// one's total.
func outerTotal(i int, inner []bool, sub int64) int64 {
	if i == 0 || inner[i] {
		return 0
	}
	return sub
}

// innerContexts marks the contexts of t whose function is already active
// on their path from the root: a recursive call's.
func innerContexts(t *Thread) []bool {
	nodes := t.Nodes
	n := len(nodes)
	inner := make([]bool, n)
	if n <= 1 {
		return inner
	}
	// children lists (CSR), then one depth-first walk counting each
	// function's activations on the current path
	start := make([]int32, n+1)
	maxFunc := 0
	for i := 1; i < n; i++ {
		start[nodes[i].Parent+1]++
		maxFunc = max(maxFunc, nodes[i].Func)
	}
	for i := 0; i < n; i++ {
		start[i+1] += start[i]
	}
	kids := make([]int32, n)
	fill := slices.Clone(start[:n])
	for i := 1; i < n; i++ {
		p := nodes[i].Parent
		kids[fill[p]] = int32(i)
		fill[p]++
	}
	active := make([]int32, maxFunc+1)
	// a node is pushed as i+1 (enter) and popped again as -(i+1) (leave)
	stack := []int32{1}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if x < 0 {
			active[nodes[-x-1].Func]--
			continue
		}
		i := int(x - 1)
		if i > 0 {
			f := nodes[i].Func
			inner[i] = active[f] > 0
			active[f]++
			stack = append(stack, -x)
		}
		for k := start[i]; k < start[i+1]; k++ {
			stack = append(stack, kids[k]+1)
		}
	}
	return inner
}
