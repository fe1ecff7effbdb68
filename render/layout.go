package render

// Which way the graph is laid out. Graphviz's dot lays a call graph out
// top-down, callers above callees: a function calling many others puts
// them side by side, and a program of many such functions is drawn very
// wide (a C++ program of 300 functions: 16,000 pt). When the top-down
// drawing would be wider than maxWidth, and a left-to-right one narrower,
// the graph is laid out left to right: the side-by-side functions then
// stack up, and the drawing grows down, where a reader scrolls anyway.
// Widths are estimated from the boxes' sizes as dot places them: the
// boxes of one rank side by side, and between two ranks the labels of the
// edges that leave the first.

// Layout parameters, inches.
const (
	maxWidth   = 3000.0 / 72 // 3,000 pt: 4,000 CSS pixels
	rankSep    = 0.35
	nodeSep    = 0.2
	edgeFont   = 9
	legendFont = 9
)

// boxHeight is the height in inches of a box holding lines at size pt,
// as Graphviz makes it: 1.2 lines per em, a margin, 0.5 in at least.
func boxHeight(lines []string, size float64) float64 {
	return max(0.5, float64(len(lines))*size*1.2/72+0.1)
}

// direction chooses the rankdir: "TB", or "LR" when a top-down drawing
// would be too wide and a left-to-right one is narrower.
func (d *drawer) direction() string {
	rank := d.ranks()
	n := 0
	for _, r := range rank {
		n = max(n, r+1)
	}
	// per rank: the boxes side by side (TB) or the widest box (LR); per
	// gap after a rank, the same of the labels of the edges leaving it
	side, widest := make([]float64, n), make([]float64, n)
	gapSide, gapWidest := make([]float64, n), make([]float64, n)
	for i, b := range d.boxes {
		r := rank[i]
		side[r] += b.w + nodeSep
		widest[r] = max(widest[r], b.w)
	}
	for _, e := range d.lines {
		ve := &d.v.edges[e.edge]
		r := rank[d.id[ve.from]]
		if rank[d.id[ve.to]] <= r {
			continue // a back edge or a loop: its label sits beside the node
		}
		gapSide[r] += e.w + nodeSep
		gapWidest[r] = max(gapWidest[r], e.w)
	}
	legend := boxWidth(d.legendText(d.inScope), legendFont) + nodeSep
	tb, lr := 0.0, legend+rankSep
	for r := range n {
		tb = max(tb, side[r], gapSide[r])
		lr += widest[r] + gapWidest[r] + 2*rankSep
	}
	tb += legend
	if tb > maxWidth && lr < tb {
		return "LR"
	}
	return "TB"
}

// ranks places the drawn nodes (by DOT number) on ranks as dot would
// without crossings to avoid: each node one rank (or an edge's minlen)
// below its lowest caller, back edges (found depth-first from START)
// ignored.
func (d *drawer) ranks() []int {
	n := len(d.boxes)
	out := make([][]edgeTo, n)
	for _, e := range d.lines {
		ve := &d.v.edges[e.edge]
		if ve.from != ve.to {
			out[d.id[ve.from]] = append(out[d.id[ve.from]], edgeTo{d.id[ve.to], max(1, ve.minlen)})
		}
	}
	// depth-first order without back edges: a topological order of the
	// remaining graph (reverse postorder)
	const (
		unseen = iota
		open
		done
	)
	state := make([]int, n)
	var post []int
	var visit func(u int)
	visit = func(u int) {
		state[u] = open
		for _, e := range out[u] {
			if state[e.to] == unseen {
				visit(e.to)
			}
		}
		state[u] = done
		post = append(post, u)
	}
	for u := range n { // START is node 0: first
		if state[u] == unseen {
			visit(u)
		}
	}
	pos := make([]int, n)
	for i, u := range post {
		pos[u] = len(post) - 1 - i
	}
	rank := make([]int, n)
	for i := len(post) - 1; i >= 0; i-- {
		u := post[i]
		for _, e := range out[u] {
			if pos[e.to] > pos[u] { // forward in the order: not a back edge
				rank[e.to] = max(rank[e.to], rank[u]+e.minlen)
			}
		}
	}
	return rank
}

type edgeTo struct{ to, minlen int }
