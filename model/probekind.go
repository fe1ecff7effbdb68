package model

import (
	"cmp"
	"slices"
)

// ProbeRow is one function the tracer could not give an inline probe,
// for --stats and info: its probe, why, its calls and until when it was
// traced.
type ProbeRow struct {
	Func  int
	Probe ProbeKind
	Note  string
	Calls int64
	// UntilNs is Function.TracedUntilNs: its probe was taken out then.
	UntilNs int64
}

// NotInline lists the functions the tracer could not give an inline
// probe: those with no probe, and those with a trap probe and a reason
// (a trap asked for, record --probes trap, has none), the most called
// first, then by name. A counting probe (ProbeCounted) was asked for: no
// refusal, never listed.
func (p *Profile) NotInline() []ProbeRow {
	var calls []int64
	var rows []ProbeRow
	for f, fn := range p.Functions {
		if fn.Probe != ProbeNone && (fn.Probe != ProbeTrap || fn.ProbeNote == "") {
			continue
		}
		if calls == nil {
			calls = p.funcCalls()
		}
		rows = append(rows, ProbeRow{Func: f, Probe: fn.Probe, Note: fn.ProbeNote, Calls: calls[f], UntilNs: fn.TracedUntilNs})
	}
	slices.SortFunc(rows, func(a, b ProbeRow) int {
		return cmp.Or(cmp.Compare(b.Calls, a.Calls), cmp.Compare(p.FuncName(a.Func), p.FuncName(b.Func)))
	})
	return rows
}

// funcCalls sums each function's calls over every thread's contexts.
func (p *Profile) funcCalls() []int64 {
	out := make([]int64, len(p.Functions))
	for _, t := range p.Threads {
		for _, n := range t.Nodes {
			if n.Func >= 0 && n.Func < len(out) {
				out[n.Func] += n.Calls
			}
		}
	}
	return out
}
