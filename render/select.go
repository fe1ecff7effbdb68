package render

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/profile-dev/profile/internal/human"
	"github.com/profile-dev/profile/model"
)

// What is drawn, pprof-like (-nodecount, -edgefraction): the NodeCount
// functions of largest total time, ranked by wall time so that waiting
// stays in the picture whatever the basis (by sampled CPU time when the
// busy times drawn are CPU samples': there nothing waits), and the call
// edges between
// them that carry at least EdgeFraction of the traced time. Recursive
// edges (their time is inside the outer call) and spawn and fork edges
// are kept whatever their time. By default edges are dropped only from a
// graph too large to draw whole: a small one (the NodeCount functions or
// fewer) keeps every edge. The title says what was left out.

// selection is what is drawn of a view.
type selection struct {
	node     []bool // by view node
	edges    []int  // view edges drawn
	nodes    int    // functions drawn, START aside
	allNodes int
	calls    int     // call edges drawn
	allCalls int     // call edges of the graph
	cutNs    int64   // the smallest total of the NodeCount functions, when some were left out
	unlinked int     // functions left out because every edge of theirs was
	frac     float64 // the edge fraction applied, negative for none
}

// rank orders functions for NodeCount: by total time, or self time where
// it is larger (pruned time folded into a node).
func rank(n *vnode) int64 { return max(n.TotalNs, n.SelfNs+n.dropped) }

func (v *view) choose(opt Options) selection {
	s := selection{node: make([]bool, len(v.nodes))}
	var cand []int
	for i := range v.nodes {
		if v.nodes[i].key.Func == model.StartFunc {
			s.node[i] = true
			continue
		}
		cand = append(cand, i)
	}
	s.allNodes = len(cand)
	names := make(map[int]string, len(cand))
	for _, i := range cand {
		names[i] = v.p.FuncName(v.nodes[i].key.Func)
	}
	slices.SortStableFunc(cand, func(a, b int) int {
		x, y := &v.nodes[a], &v.nodes[b]
		return cmp.Or(cmp.Compare(rank(y), rank(x)), strings.Compare(names[a], names[b]), cmp.Compare(x.key.Level, y.key.Level))
	})
	s.nodes = v.keep(cand, s.node, opt.NodeCount, &s.cutNs)
	s.frac = opt.EdgeFraction
	if s.frac == 0 && s.nodes == s.allNodes {
		s.frac = -1 // drawn whole
	} else if s.frac == 0 {
		s.frac = DefaultEdgeFraction
	}
	minNs := int64(0)
	if s.frac > 0 {
		minNs = int64(s.frac * float64(v.g.TracedNs))
	}
	for ei := range v.edges {
		e := &v.edges[ei]
		if e.kind == model.EdgeCall {
			s.allCalls++
		}
		if !s.node[e.from] || !s.node[e.to] {
			continue
		}
		if e.kind == model.EdgeCall {
			if e.TotalNs < minNs && e.RecursiveCalls == 0 {
				continue
			}
			s.calls++
		}
		s.edges = append(s.edges, ei)
	}
	// a function whose every edge was dropped would float unconnected
	linked := make([]bool, len(v.nodes))
	for _, ei := range s.edges {
		linked[v.edges[ei].from], linked[v.edges[ei].to] = true, true
	}
	for _, i := range cand {
		if s.node[i] && !linked[i] {
			s.node[i] = false
			s.nodes--
			s.unlinked++
		}
	}
	v.stagger(s)
	return s
}

// keep marks up to count functions of cand, ranked, and returns how many
// it marked. A function comes with its callers along its heaviest
// incoming edges up to one already kept, so that a hot function is not
// left unconnected because its callers rank lower. cut is set to the
// rank of the first function left out.
func (v *view) keep(cand []int, kept []bool, count int, cut *int64) int {
	heaviest := make([]int, len(v.nodes)) // node -> its heaviest caller, -1 if none
	best := make([]int64, len(v.nodes))
	for i := range heaviest {
		heaviest[i] = -1
	}
	for i := range v.edges {
		e := &v.edges[i]
		if e.from == e.to {
			continue
		}
		if heaviest[e.to] < 0 || e.TotalNs > best[e.to] {
			heaviest[e.to], best[e.to] = e.from, e.TotalNs
		}
	}
	n := 0
	var chain []int
	for _, c := range cand {
		if kept[c] {
			continue
		}
		chain = chain[:0]
		for x := c; x >= 0 && !kept[x] && !slices.Contains(chain, x); x = heaviest[x] {
			chain = append(chain, x)
		}
		if count > 0 && n+len(chain) > count {
			if *cut == 0 {
				*cut = rank(&v.nodes[c])
			}
			continue
		}
		for _, x := range chain {
			kept[x] = true
		}
		n += len(chain)
	}
	return n
}

// elided says in two lines what the drawing leaves out, none when
// nothing.
func (s *selection) elided(opt Options) []string {
	if s.nodes == s.allNodes && s.calls == s.allCalls {
		return nil
	}
	var why []string
	if s.cutNs > 0 {
		why = append(why, fmt.Sprintf("functions of less total time than the %d drawn (%s or less)", opt.NodeCount, human.Duration(s.cutNs)))
	}
	if s.calls < s.allCalls {
		why = append(why, fmt.Sprintf("call edges under %s of the time", pct(s.frac)))
	}
	if s.unlinked > 0 {
		why = append(why, "functions left without an edge")
	}
	return []string{fmt.Sprintf("showing %d of %d functions and %d of %d call edges", s.nodes, s.allNodes, s.calls, s.allCalls),
		"left out: " + strings.Join(why, ", ")}
}

// stagger spreads a wide fan of leaves over several ranks, as Graphviz's
// unflatten -l does: a function calling many leaf functions would
// otherwise lay them all side by side on one rank, as wide as the
// drawing gets.
func (v *view) stagger(s selection) {
	const fan = 8 // leaves per rank
	in := make([]int, len(v.nodes))
	out := make([]int, len(v.nodes))
	for _, ei := range s.edges {
		e := &v.edges[ei]
		if e.from != e.to {
			in[e.to]++
			out[e.from]++
		}
	}
	leaves := map[int][]int{} // caller -> its edges to leaves
	var callers []int
	for _, ei := range s.edges {
		e := &v.edges[ei]
		if e.kind == model.EdgeCall && e.from != e.to && out[e.to] == 0 && in[e.to] == 1 {
			if len(leaves[e.from]) == 0 {
				callers = append(callers, e.from)
			}
			leaves[e.from] = append(leaves[e.from], ei)
		}
	}
	for _, c := range callers {
		l := leaves[c]
		if len(l) <= fan {
			continue
		}
		ranks := min(4, (len(l)+fan-1)/fan)
		for k, ei := range l {
			v.edges[ei].minlen = 1 + k%ranks
		}
	}
}
