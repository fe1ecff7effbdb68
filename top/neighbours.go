package top

import (
	"cmp"
	"slices"

	"github.com/profile-dev/profile/model"
)

// Link is a caller or a callee of a function: the calls along that edge
// and their total time, since attach and in the interval.
type Link struct {
	Name            string // in full, as Row.Name
	Display         string // as Row.Display
	Calls, TotalNs  int64
	DCalls, DTotals int64
}

// Neighbours are the callers and the callees of function f, busiest in
// the interval first, from the call graphs of both snapshots.
func Neighbours(prev, cur *model.Profile, s Scope, f int, opt Options) (callers, callees []Link) {
	was := edges(prev, s, f)
	is := edges(cur, s, f)
	for k, v := range is {
		l := Link{Name: cur.FuncName(k.other), Display: cur.DisplayName(k.other, opt.FullNames), Calls: v.Calls,
			TotalNs: v.TotalNs}
		b := was[k]
		l.DCalls, l.DTotals = v.Calls-b.Calls, v.TotalNs-b.TotalNs
		if k.caller {
			callers = append(callers, l)
		} else {
			callees = append(callees, l)
		}
	}
	order := func(a, b Link) int {
		if d := cmp.Compare(b.DCalls, a.DCalls); d != 0 {
			return d
		}
		if d := cmp.Compare(b.Calls, a.Calls); d != 0 {
			return d
		}
		return cmp.Compare(a.Name, b.Name)
	}
	slices.SortFunc(callers, order)
	slices.SortFunc(callees, order)
	return callers, callees
}

type linkKey struct {
	other  int
	caller bool // other calls f (else f calls other)
}

// edges sums the call edges into and out of f by the other function.
func edges(p *model.Profile, s Scope, f int) map[linkKey]model.Vec {
	out := map[linkKey]model.Vec{}
	if p == nil {
		return out
	}
	g := p.Graph(s)
	for _, e := range g.Edges {
		if e.Kind != model.EdgeCall {
			continue
		}
		from, to := g.Nodes[e.From].Key.Func, g.Nodes[e.To].Key.Func
		var k linkKey
		switch {
		case to == f && from != model.StartFunc:
			k = linkKey{other: from, caller: true}
		case from == f:
			k = linkKey{other: to}
		default:
			continue
		}
		v := out[k]
		v.Calls += e.Calls
		v.TotalNs += e.TotalNs
		out[k] = v
	}
	return out
}
