package model

import (
	"cmp"
	"slices"
)

// Arc is one caller→callee pair of a thread's counted calls (Thread.Arcs):
// a counting probe counts every call of its function by call site, with
// no clock and no return hook, so the callee is in no CCT and its own
// time is in the self time of the frame it ran in.
type Arc struct {
	// Caller is the traced function whose code holds the call site (the
	// return address), or None: code of no function of the profile.
	Caller int
	Callee int // function index
	Calls  int64
	// Contribs splits a composite thread's arc by member thread (merge
	// only), as Node.Contribs does for a node.
	Contribs []ArcContrib
}

// ArcContrib is one member thread's share of a composite arc.
type ArcContrib struct {
	Member int // index into Thread.Members
	Calls  int64
}

// compareArcs is the order of Thread.Arcs: by callee, then caller.
func compareArcs(a, b Arc) int {
	return cmp.Or(cmp.Compare(a.Callee, b.Callee), cmp.Compare(a.Caller, b.Caller))
}

// SortArcs puts arcs in the order Thread.Arcs keeps (by callee, then
// caller), sums the arcs of one pair (and their members' shares) and
// drops those of no calls. It sorts a in place and returns the result
// in a's array; nil when no arc is left.
func SortArcs(a []Arc) []Arc {
	if !slices.IsSortedFunc(a, compareArcs) {
		slices.SortStableFunc(a, compareArcs)
	}
	out := a[:0]
	for _, x := range a {
		if n := len(out); n > 0 && compareArcs(out[n-1], x) == 0 {
			y := &out[n-1]
			y.Calls += x.Calls
			y.Contribs = mergeArcContribs(y.Contribs, x.Contribs)
			continue
		}
		out = append(out, x)
	}
	out = slices.DeleteFunc(out, func(x Arc) bool { return x.Calls == 0 })
	if len(out) == 0 {
		return nil
	}
	return out
}

// mergeArcContribs merges two member lists sorted by member, summing a
// member's shares; a fresh slice, so that arcs never share one.
func mergeArcContribs(a, b []ArcContrib) []ArcContrib {
	if len(a) == 0 && len(b) == 0 {
		return nil
	}
	out := make([]ArcContrib, 0, len(a)+len(b))
	for len(a) > 0 || len(b) > 0 {
		switch {
		case len(b) == 0 || len(a) > 0 && a[0].Member < b[0].Member:
			out, a = append(out, a[0]), a[1:]
		case len(a) == 0 || b[0].Member < a[0].Member:
			out, b = append(out, b[0]), b[1:]
		default:
			out = append(out, ArcContrib{Member: a[0].Member, Calls: a[0].Calls + b[0].Calls})
			a, b = a[1:], b[1:]
		}
	}
	return out
}

// arcCalls is arc a's calls for one (member) thread: the whole arc for a
// recorded thread, the member's share in a composite.
func arcCalls(a *Arc, member int) int64 {
	if member == None {
		return a.Calls
	}
	for _, c := range a.Contribs {
		if c.Member == member {
			return c.Calls
		}
	}
	return 0
}
