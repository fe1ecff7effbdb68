package attach

import (
	"bytes"
	"slices"

	"github.com/profile-dev/profile/instrument"
)

// exitPlans keeps each function's exit probes as planned from its file's
// bytes, by module and link-time address: reading every instruction of a
// function to find its returns was half of a process's set-up, and every
// command of a shell script maps the same C library. A plan is the same
// in every process but for where the module lies (a tail jump's target:
// kept at its link-time address).
type exitPlans map[*instrument.Module]map[uint64]plannedExits

type plannedExits struct {
	plan instrument.ExitPlan
	err  error
}

// exitPlanOf is instrument.PlanExits of function sym of l at addr, whose
// bytes and padding the text holds as code (file: as its file holds
// them): kept for the next process when they are the same.
func (e *engine) exitPlanOf(l *loaded, sym instrument.Symbol, code, pad, file []byte, addr uint64) (instrument.ExitPlan, error) {
	asFile := bytes.Equal(code, file)
	if c, ok := e.exitPlans[l.mod][sym.Value]; ok && asFile {
		return rebased(c.plan, l.bias, true), c.err
	}
	body := code[:len(code)-len(pad)]
	isEntry := func(to uint64) bool {
		f := to - l.bias
		if l.mod.IsPLT(f) {
			return true
		}
		sym, ok := l.mod.Lookup(f)
		return ok && sym.Value == f && !instrument.IsColdPart(sym.Name)
	}
	cold := func(to uint64) (instrument.ColdPart, bool) {
		p, ok := l.mod.ColdPart(sym, to-l.bias, l.coldRange)
		p.Addr += l.bias
		return p, ok
	}
	plan, err := instrument.PlanExits(instrument.ExitFunc{Code: body, Pad: pad,
		EntryEnd: instrument.EntryEnd(body), Addr: addr, IsEntry: isEntry, Cold: cold})
	if asFile {
		if e.exitPlans == nil {
			e.exitPlans = exitPlans{}
		}
		if e.exitPlans[l.mod] == nil {
			e.exitPlans[l.mod] = map[uint64]plannedExits{}
		}
		e.exitPlans[l.mod][sym.Value] = plannedExits{rebased(plan, l.bias, false), err}
	}
	return plan, err
}

// rebased is a copy of plan with its tail jumps' targets moved by bias:
// to where the module lies (up), or back to its link-time addresses.
func rebased(plan instrument.ExitPlan, bias uint64, up bool) instrument.ExitPlan {
	out := instrument.ExitPlan{Regions: slices.Clone(plan.Regions), Tails: slices.Clone(plan.Tails)}
	for i := range out.Tails {
		if up {
			out.Tails[i].To += bias
		} else {
			out.Tails[i].To -= bias
		}
	}
	return out
}
