package summary

import (
	"cmp"
	"slices"
	"strconv"

	"github.com/profile-dev/profile/internal/tables"
	"github.com/profile-dev/profile/model"
)

// Thread context: with Options.Threads every
// function and edge is broken down by thread, and spawn and fork edges name
// who created whom in the notation "0→1" (thread 0 spawned thread
// 1). Threads are numbered as render --threads numbers them
// (model.ThreadNumbers), so that a number means the same thread in every
// scope and in the drawing.

// FunctionShare is one thread's share of a function.
type FunctionShare struct {
	Thread int `json:"thread"` // the thread's number (Thread.Number)
	FuncNumbers
}

// EdgeShare is one thread's share of an edge. For a spawn or fork edge,
// Thread is the thread created and Creator the thread that created it (-1
// when that thread is not in the profile); Creator is nil for a call edge.
type EdgeShare struct {
	Thread  int  `json:"thread"`
	Creator *int `json:"creator,omitempty"`
	EdgeNumbers
}

// threadShares dissects the scope's functions and edges by thread.
type threadShares struct {
	p     *model.Profile
	fn    [][]FunctionShare // Report.Functions index (before sorting) -> shares
	edges map[shareKey][]EdgeShare
}

// shareKey is an edge of the report: its ends as Report.Functions indices
// (before sorting) and its kind.
type shareKey struct {
	from, to int32
	kind     model.EdgeKind
}

// newThreadShares dissects graph g, broken down by bd, of the threads
// refs, which numbers numbered; funcOf maps its nodes to Report.Functions
// indices, pct makes a time a percentage.
func newThreadShares(p *model.Profile, numbers *model.ThreadNumbers, g *model.Graph, bd *model.Breakdown,
	refs []model.NumberedThread, funcOf []int, pct func(int64) float64) *threadShares {
	s := &threadShares{p: p, edges: map[shareKey][]EdgeShare{}}
	s.functions(g, bd, refs, funcOf, pct)
	for _, e := range g.Edges {
		k := shareKey{int32(funcOf[e.From]), int32(funcOf[e.To]), e.Kind}
		for _, tv := range e.Threads {
			n := numbers.Number(tv.Ref)
			sh := EdgeShare{Thread: n, EdgeNumbers: EdgeNumbers{Calls: tv.Calls, RecursiveCalls: tv.RecursiveCalls, TotalNs: tv.TotalNs}}
			if e.Kind != model.EdgeCall {
				c := numbers.Creator(n, e.Kind)
				sh.Creator = &c
			}
			s.edges[k] = addShare(s.edges[k], sh)
		}
	}
	for k, shares := range s.edges {
		for i := range shares {
			shares[i].TotalPct = pct(shares[i].TotalNs)
		}
		slices.SortFunc(shares, func(a, b EdgeShare) int {
			return cmp.Or(cmp.Compare(a.Thread, b.Thread), cmp.Compare(creatorOf(a), creatorOf(b)))
		})
		s.edges[k] = shares
	}
	return s
}

// addShare adds sh to the share of the same thread (and creator), or as a
// new share: the per-level edges of one report edge meet here.
func addShare(shares []EdgeShare, sh EdgeShare) []EdgeShare {
	for i := range shares {
		if x := &shares[i]; x.Thread == sh.Thread && creatorOf(*x) == creatorOf(sh) {
			x.Calls += sh.Calls
			x.RecursiveCalls += sh.RecursiveCalls
			x.TotalNs += sh.TotalNs
			return shares
		}
	}
	return append(shares, sh)
}

func creatorOf(s EdgeShare) int {
	if s.Creator == nil {
		return -2
	}
	return *s.Creator
}

// functions sums the breakdown's shares per (function, thread), with the
// summary's conventions: START's total is the thread's traced time. bd's
// threads are refs (the same scope, in the same order).
func (s *threadShares) functions(g *model.Graph, bd *model.Breakdown, refs []model.NumberedThread, funcOf []int,
	pct func(int64) float64) {
	s.fn = make([][]FunctionShare, len(g.Nodes))
	for _, sh := range bd.Shares {
		t := refs[sh.Thread]
		list := &s.fn[funcOf[sh.Node]]
		// a thread's shares come together: its nodes of one function (one
		// per nesting level) meet in its latest share
		if len(*list) == 0 || (*list)[len(*list)-1].Thread != t.Number {
			*list = append(*list, FunctionShare{Thread: t.Number})
		}
		x := &(*list)[len(*list)-1]
		x.Calls += sh.Calls
		x.RecursiveCalls += sh.RecursiveCalls
		x.SelfNs += sh.SelfNs
		x.TotalNs += sh.TotalNs
		if sh.Node == 0 {
			x.TotalNs = t.TracedNs
		}
	}
	for _, list := range s.fn {
		for i := range list {
			list[i].SelfPct, list[i].TotalPct = pct(list[i].SelfNs), pct(list[i].TotalNs)
		}
	}
}

// fill gives the report's functions (not yet sorted) and threads their
// shares and numbers.
func (s *threadShares) fill(r *Report, refs []model.NumberedThread) {
	r.ByThread = true
	for i := range r.Functions {
		f := &r.Functions[i]
		f.Threads = s.fn[i]
		for k := range f.Threads {
			f.Threads[k].Counted = f.Counted
		}
	}
	for i, t := range refs {
		r.Threads[i].Number = &t.Number
	}
}

// edge returns the shares of the report's edge k, marked counted when
// the edge is.
func (s *threadShares) edge(from, to int32, kind model.EdgeKind, counted bool) []EdgeShare {
	shares := s.edges[shareKey{from, to, kind}]
	for i := range shares {
		shares[i].Counted = counted
	}
	return shares
}

// threadSections lays the shares out for the human formats; numbered adds
// the numbers to the threads table.
func threadSections(r *Report, ts tables.Table) (tables.Table, []tables.Table) {
	if !r.ByThread {
		return ts, nil
	}
	n := func(v int64) string { return strconv.FormatInt(v, 10) }
	calls := n
	if r.Totals.Sampled {
		calls = func(int64) string { return "-" }
	}
	ts.Header = append([]string{"#"}, ts.Header...)
	ts.Kinds = append([]tables.Kind{number}, ts.Kinds...)
	for i, x := range r.Threads {
		ts.Rows[i] = append([]string{strconv.Itoa(*x.Number)}, ts.Rows[i]...)
	}
	fs := tables.Table{Title: "Functions by thread (#: the threads table's)",
		Header: []string{"function", "#", "calls", "rc", "self", "self %", "total", "total %"},
		Kinds:  []tables.Kind{symbol, number, number, number, number, number, number, number}}
	for _, f := range r.Functions {
		for _, x := range f.Threads {
			fs.Rows = append(fs.Rows, append([]string{f.Display, strconv.Itoa(x.Thread), calls(x.Calls), calls(x.RecursiveCalls)},
				funcTimes(&x.FuncNumbers)...))
		}
	}
	es := tables.Table{Title: "Edges by thread (#: the threads table's; A→B: thread A created thread B)",
		Header: []string{"caller", "callee", "kind", "#", "calls", "rc", "total", "total %"},
		Kinds:  []tables.Kind{symbol, symbol, text, number, number, number, number, number}}
	for _, e := range r.Edges {
		for _, x := range e.Threads {
			th := strconv.Itoa(x.Thread)
			if x.Creator != nil {
				th = model.CreationLabel(*x.Creator, x.Thread)
			}
			es.Rows = append(es.Rows, append([]string{e.CallerDisplay, e.CalleeDisplay, e.Kind, th, calls(x.Calls),
				calls(x.RecursiveCalls)}, edgeTimes(&x.EdgeNumbers)...))
		}
	}
	return ts, []tables.Table{fs, es}
}

// writeFunctionShares and writeEdgeShares write the by_thread field of a
// function or edge (level 3) as encoding/json would, omitted when empty.
func writeFunctionShares(j *jsonWriter, shares []FunctionShare) {
	writeShares(j, shares, func(x *FunctionShare) {
		j.key(5, "thread", true)
		j.int(int64(x.Thread))
		j.funcNumbers(5, &x.FuncNumbers)
	})
}

func writeEdgeShares(j *jsonWriter, shares []EdgeShare) {
	writeShares(j, shares, func(x *EdgeShare) {
		j.key(5, "thread", true)
		j.int(int64(x.Thread))
		if x.Creator != nil {
			j.intField(5, "creator", int64(*x.Creator))
		}
		j.edgeNumbers(5, &x.EdgeNumbers)
	})
}

func writeShares[T any](j *jsonWriter, shares []T, fields func(*T)) {
	if len(shares) == 0 {
		return
	}
	j.key(3, "by_thread", false)
	j.raw("[")
	for i := range shares {
		j.elem(4, i == 0)
		j.raw("{")
		fields(&shares[i])
		j.end(4, '}')
	}
	j.end(3, ']')
}
