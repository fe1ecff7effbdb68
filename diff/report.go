package diff

import (
	"cmp"
	"fmt"
	"io"
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
}

// Report is a Result laid out for the writers: sorted, cut to the top
// rows, with the gates' verdicts.
type Report struct {
	Format            string
	BaseName, NewName string
	Base, New         Side
	Sort              SortKey
	AllFunctions      int // functions before Top
	AllEdges          int // edges before Top
	Functions         []Function
	Edges             []Edge
	Gates             []GateResult // one per gate, in the order given
	Breaches          []Breach     // functions breaking a gate, in row order
	FullNames         bool         // the tables show Display, not Short (Options.FullNames)
}

// GateResult is one gate and the functions that break it.
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
	rep := &Report{Format: Format, BaseName: opt.BaseName, NewName: opt.NewName, Base: r.Base, New: r.New, Sort: key,
		AllFunctions: len(r.Functions), AllEdges: len(r.Edges), FullNames: opt.FullNames,
		Functions: slices.Clone(r.Functions), Edges: slices.Clone(r.Edges)}
	sortFunctions(rep.Functions, functionOrder(key))
	sortEdges(rep.Edges, edgeOrder(key))
	for _, g := range opt.Gates {
		gr := GateResult{Gate: g}
		for _, f := range rep.Functions {
			if g.Breaks(&f) {
				gr.Functions = append(gr.Functions, f)
			}
		}
		rep.Gates = append(rep.Gates, gr)
	}
	for _, f := range rep.Functions {
		var broken []*Gate
		for _, g := range opt.Gates {
			if g.Breaks(&f) {
				broken = append(broken, g)
			}
		}
		if len(broken) > 0 {
			rep.Breaches = append(rep.Breaches, Breach{Function: f, Gates: broken})
		}
	}
	if opt.Top > 0 {
		rep.Functions = rep.Functions[:min(opt.Top, len(rep.Functions))]
		rep.Edges = rep.Edges[:min(opt.Top, len(rep.Edges))]
	}
	return rep, nil
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

func functionOrder(key SortKey) func(a, b *Function) int {
	metric := map[SortKey]func(*Function) int64{
		SortSelf:  func(f *Function) int64 { return f.Self.Delta },
		SortTotal: func(f *Function) int64 { return f.Total.Delta },
		SortCalls: func(f *Function) int64 { return f.Calls.Delta },
	}[key]
	if metric == nil {
		return byName
	}
	return func(a, b *Function) int { return cmp.Or(absDesc(metric(a), metric(b)), byName(a, b)) }
}

func edgeOrder(key SortKey) func(a, b *Edge) int {
	switch key {
	case SortSelf, SortTotal:
		return func(a, b *Edge) int { return cmp.Or(absDesc(a.Total.Delta, b.Total.Delta), edgeByName(a, b)) }
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
