package diff

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
)

// Format names the JSON layout of a Report (docs/diff.md).
const Format = "profile-diff/1"

// SortKey orders a report's rows.
type SortKey string

// Sort keys: the largest change (in absolute value) first; edges, which
// have no self time, sort by total for SortSelf. SortName sorts by name.
const (
	SortSelf  SortKey = "self"
	SortTotal SortKey = "total"
	SortCalls SortKey = "calls"
	SortName  SortKey = "name"
)

// ParseSort reads a sort key.
func ParseSort(s string) (SortKey, error) {
	switch k := SortKey(strings.ToLower(strings.TrimSpace(s))); k {
	case SortSelf, SortTotal, SortCalls, SortName:
		return k, nil
	}
	return "", fmt.Errorf("unknown sort key %q: use self, total, calls or name", s)
}

// Options shape a Report.
type Options struct {
	BaseName, NewName string  // labels of the two profiles, e.g. their files
	Sort              SortKey // "" for SortSelf
	Top               int     // rows of functions and of edges; 0 for all
	Gates             []*Gate // checked against every function, whatever Top
	// FullNames shows full names in the text and markdown tables; by
	// default C++ and Rust names are shortened there (names.Short).
	// JSON always has them in full.
	FullNames bool
	// PerCall compares times per call (self/call, total/call) in the
	// rows, instead of the totals: a run that did more of the same work
	// at the same speed shows no change.
	PerCall bool
	// Noise is the noise floor (noise.go): rows whose changes of time
	// are all under it are left out, and gates' conditions on times do
	// not hold under it. The zero Noise is none.
	Noise Noise
}

// Report is a Result laid out for the writers: sorted, cut to the top
// rows, with the gates' verdicts.
type Report struct {
	Format            string
	BaseName, NewName string
	Base, New         Side
	Sort              SortKey
	AllFunctions      int   // functions before Top, above the noise floor
	AllEdges          int   // edges before Top, above the noise floor
	QuietFunctions    int   // functions left out under the noise floor
	QuietEdges        int   // edges left out under the noise floor
	PerCall           bool  // the rows compare times per call (Options.PerCall)
	Noise             Noise // as given
	NoiseNs           int64 // the noise floor in nanoseconds, 0 for none
	Functions         []Function
	Edges             []Edge
	Gates             []GateResult // one per gate, in the order given
	Breaches          []Breach     // functions breaking a gate, by the first gate broken, the worst first (rank)
	FullNames         bool         // the tables show Display, not Short (Options.FullNames)
}

// GateResult is one gate and the functions that break it, the worst
// first (Gate.severity).
type GateResult struct {
	Gate      *Gate
	Functions []Function
}

// Breach is one function breaking one or more gates.
type Breach struct {
	Function Function
	Gates    []*Gate
}

// Report lays r out.
func (r *Result) Report(opt Options) (*Report, error) {
	if opt.Top < 0 {
		return nil, fmt.Errorf("diff: top must not be negative (got %d)", opt.Top)
	}
	key := opt.Sort
	if key == "" {
		key = SortSelf
	}
	if _, err := ParseSort(string(key)); err != nil {
		return nil, fmt.Errorf("diff: %w", err)
	}
	for _, g := range opt.Gates {
		if g.calls() && (r.Base.Sampled || r.New.Sampled) {
			return nil, fmt.Errorf("diff: gate %s: the profiles' values are sampled, their call counts unknown", g)
		}
	}
	if opt.PerCall && (r.Base.Sampled || r.New.Sampled) {
		return nil, errors.New("diff: per call: the profiles' values are sampled, their call counts unknown")
	}
	floor := opt.Noise.floor(&r.Base, &r.New)
	rep := &Report{Format: Format, BaseName: opt.BaseName, NewName: opt.NewName, Base: r.Base, New: r.New, Sort: key,
		FullNames: opt.FullNames, PerCall: opt.PerCall, Noise: opt.Noise, NoiseNs: floor}
	self, total := rep.timeMetrics()
	for _, f := range r.Functions {
		if floor == 0 || self.size(&f) >= float64(floor) || total.size(&f) >= float64(floor) {
			rep.Functions = append(rep.Functions, f)
		}
	}
	for _, e := range r.Edges {
		if floor == 0 || timeSize(e.Total, e.Calls, opt.PerCall) >= float64(floor) {
			rep.Edges = append(rep.Edges, e)
		}
	}
	rep.AllFunctions, rep.AllEdges = len(rep.Functions), len(rep.Edges)
	rep.QuietFunctions, rep.QuietEdges = len(r.Functions)-len(rep.Functions), len(r.Edges)-len(rep.Edges)
	sortFunctions(rep.Functions, functionOrder(key, self, total))
	sortEdges(rep.Edges, edgeOrder(key, opt.PerCall))
	// Gates check every function, listed or not: a gate may ask for less
	// than the rows show (the floor still applies to its times).
	var ranks []rank // of each breach, to sort them
	for _, f := range r.Functions {
		var broken []*Gate
		first := 0
		for i, g := range opt.Gates {
			if g.Breaks(&f, floor) {
				if len(broken) == 0 {
					first = i
				}
				broken = append(broken, g)
			}
		}
		if len(broken) > 0 {
			rep.Breaches = append(rep.Breaches, Breach{Function: f, Gates: broken})
			ranks = append(ranks, rank{first, broken[0].severity(&f)})
		}
	}
	sortWorst(rep.Breaches, ranks, func(b *Breach) *Function { return &b.Function })
	for _, g := range opt.Gates {
		gr := GateResult{Gate: g}
		ranks = ranks[:0]
		for _, f := range r.Functions {
			if g.Breaks(&f, floor) {
				gr.Functions = append(gr.Functions, f)
				ranks = append(ranks, rank{0, g.severity(&f)})
			}
		}
		sortWorst(gr.Functions, ranks, func(f *Function) *Function { return f })
		rep.Gates = append(rep.Gates, gr)
	}
	if opt.Top > 0 {
		rep.Functions = rep.Functions[:min(opt.Top, len(rep.Functions))]
		rep.Edges = rep.Edges[:min(opt.Top, len(rep.Edges))]
	}
	return rep, nil
}

// timeMetrics are the metrics of the rows' self and total columns.
func (r *Report) timeMetrics() (self, total Metric) {
	if r.PerCall {
		return MetricSelfPerCall, MetricTotalPerCall
	}
	return MetricSelf, MetricTotal
}

// rank is how bad a breach is: the gate it breaks first (in the order
// given: severities of different gates are not comparable), then its
// severity there.
type rank struct {
	gate     int
	severity float64
}

// sortWorst sorts xs by rank (one per x), the worst first, then by name.
func sortWorst[T any](xs []T, ranks []rank, fn func(*T) *Function) {
	idx := make([]int, len(xs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		return cmp.Or(cmp.Compare(ranks[a].gate, ranks[b].gate), cmp.Compare(ranks[b].severity, ranks[a].severity),
			byName(fn(&xs[a]), fn(&xs[b])))
	})
	sorted := make([]T, len(xs))
	for i, k := range idx {
		sorted[i] = xs[k]
	}
	copy(xs, sorted)
}

// absDesc orders by the absolute value of a change, largest first.
func absDesc(a, b int64) int {
	abs := func(x int64) int64 {
		if x < 0 {
			return -x
		}
		return x
	}
	return cmp.Compare(abs(b), abs(a))
}

func functionOrder(key SortKey, self, total Metric) func(a, b *Function) int {
	var size func(*Function) float64
	switch key {
	case SortSelf:
		size = self.size
	case SortTotal:
		size = total.size
	case SortCalls:
		size = func(f *Function) float64 { return math.Abs(float64(f.Calls.Delta)) }
	default:
		return byName
	}
	return func(a, b *Function) int { return cmp.Or(cmp.Compare(size(b), size(a)), byName(a, b)) }
}

func edgeOrder(key SortKey, perCall bool) func(a, b *Edge) int {
	switch key {
	case SortSelf, SortTotal:
		return func(a, b *Edge) int {
			return cmp.Or(cmp.Compare(timeSize(b.Total, b.Calls, perCall), timeSize(a.Total, a.Calls, perCall)), edgeByName(a, b))
		}
	case SortCalls:
		return func(a, b *Edge) int { return cmp.Or(absDesc(a.Calls.Delta, b.Calls.Delta), edgeByName(a, b)) }
	}
	return edgeByName
}

// edgeByName orders edges by caller, callee and kind.
func edgeByName(a, b *Edge) int {
	return cmp.Or(cmp.Compare(a.CallerDisplay, b.CallerDisplay), cmp.Compare(a.CalleeDisplay, b.CalleeDisplay),
		cmp.Compare(a.Caller.Module, b.Caller.Module), cmp.Compare(a.Callee.Module, b.Callee.Module),
		cmp.Compare(a.Kind, b.Kind))
}

func sortFunctions(fs []Function, order func(a, b *Function) int) {
	slices.SortStableFunc(fs, func(a, b Function) int { return order(&a, &b) })
}

func sortEdges(es []Edge, order func(a, b *Edge) int) {
	slices.SortStableFunc(es, func(a, b Edge) int { return order(&a, &b) })
}

// Writer returns the writer of a format: text (or table), markdown (or
// md) or json.
func Writer(format string) (func(io.Writer, *Report) error, bool) {
	switch strings.ToLower(format) {
	case "text", "table":
		return WriteText, true
	case "markdown", "md":
		return WriteMarkdown, true
	case "json":
		return WriteJSON, true
	}
	return nil, false
}
