package model

import (
	"cmp"
	"slices"
)

// FuncSelf is a function's self time summed over every thread.
type FuncSelf struct {
	Func   int
	SelfNs int64
}

// HottestSelf returns up to n functions of p with the largest self time
// summed over every thread, the largest first (ties: the lower index),
// leaving out START, the functions skip names and those with no self
// time. It is how record --auto-expand picks the functions whose callees
// to trace next: their time is spent in code no probe sees. Called on
// p.Busy(), it ranks what computes (by CPU samples' time when p has them,
// a counted function's sample-only contexts included).
func (p *Profile) HottestSelf(n int, skip func(fn int) bool) []FuncSelf {
	self := make([]int64, len(p.Functions))
	for i := range p.Threads {
		for _, nd := range p.Threads[i].Nodes {
			if nd.Func >= 0 && nd.Func < len(self) {
				self[nd.Func] += nd.SelfNs
			}
		}
	}
	var out []FuncSelf
	for fn, ns := range self {
		if fn == StartFunc || ns <= 0 || (skip != nil && skip(fn)) {
			continue
		}
		out = append(out, FuncSelf{fn, ns})
	}
	slices.SortFunc(out, func(a, b FuncSelf) int {
		if c := cmp.Compare(b.SelfNs, a.SelfNs); c != 0 {
			return c
		}
		return cmp.Compare(a.Func, b.Func)
	})
	return out[:min(n, len(out))]
}
