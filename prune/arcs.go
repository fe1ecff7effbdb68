package prune

import "github.com/profile-dev/profile/model"

// Counted calls (model.Thread.Arcs) follow the fate of their functions as
// nodes do. An arc is kept when its callee survives: passes the options
// (with Keep: is an interesting call). Its caller stays when it survives
// too (with Keep: is interesting or still holds a context of the
// thread); else it becomes model.None, code of no function of the
// profile. Unlike a node's parent it is not re-attached to a nearest kept
// ancestor: an arc has no calling context, and the contexts of its caller
// may have several. With Keep, the contexts of the callers of interesting
// counted calls are kept as those of interesting calls are, ancestors
// included: they are where the calls were made.

// arcContexts marks in ctx the callers of thread t's arcs whose callee
// is interesting (match), and reports whether it marked any.
func arcContexts(t *model.Thread, match, ctx []bool) bool {
	marked := false
	for _, a := range t.Arcs {
		if a.Caller != model.None && match[a.Callee] {
			ctx[a.Caller] = true
			marked = true
		}
	}
	return marked
}

// pruneArcs returns thread t's arcs that survive, in a new slice, nodes
// being t's pruned CCT; nil when none. present is scratch, one entry per
// function, left cleared.
func pruneArcs(t *model.Thread, nodes []model.Node, ok, match, present []bool) []model.Arc {
	if len(t.Arcs) == 0 {
		return nil
	}
	callee, caller := ok, ok
	if match != nil {
		callee, caller = match, present
		for _, n := range nodes {
			present[n.Func] = true
		}
		for _, a := range t.Arcs {
			if a.Caller != model.None && match[a.Caller] {
				present[a.Caller] = true
			}
		}
		defer func() {
			for _, n := range nodes {
				present[n.Func] = false
			}
			for _, a := range t.Arcs {
				if a.Caller != model.None {
					present[a.Caller] = false
				}
			}
		}()
	}
	out := make([]model.Arc, 0, len(t.Arcs))
	for _, a := range t.Arcs {
		if !callee[a.Callee] {
			continue
		}
		if a.Caller != model.None && !caller[a.Caller] {
			a.Caller = model.None
		}
		a.Contribs = append([]model.ArcContrib(nil), a.Contribs...)
		out = append(out, a)
	}
	// callers become None: pairs may meet
	return model.SortArcs(out)
}
