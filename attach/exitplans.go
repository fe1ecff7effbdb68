package attach

import (
	"bytes"
	"slices"
	"sync"

	"github.com/profile-dev/profile/instrument"
)

// exitPlans keeps each function's exit probes as planned from its file's
// bytes, by module and link-time address: reading every instruction of a
// function to find its returns was half of each command's scan (perf, a
// bash loop), and every command of a shell script maps the same C
// library. A plan is the same in every process but for where the module
// lies (a tail jump's target: kept at its link-time address).
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
	plan, err := planExitsOf(l.mod, l.bias, sym, code[:len(code)-len(pad)], pad, addr, l.coldRange, nil)
	if asFile {
		e.exitPlans.keep(l.mod, sym.Value, plannedExits{rebased(plan, l.bias, false), err})
	}
	return plan, err
}

// keep records the plan of the function at link-time address at of mod.
func (x *exitPlans) keep(mod *instrument.Module, at uint64, p plannedExits) {
	if *x == nil {
		*x = exitPlans{}
	}
	if (*x)[mod] == nil {
		(*x)[mod] = map[uint64]plannedExits{}
	}
	(*x)[mod][at] = p
}

// planExitsOf plans the exit probes of function sym of mod (at bias),
// whose code and padding lie at addr; cfi finds the call-frame
// information's range around a link-time address (a part split off it);
// swept, if set, gets the function's entry branches (ExitFunc.Swept).
func planExitsOf(mod *instrument.Module, bias uint64, sym instrument.Symbol, code, pad []byte, addr uint64,
	cfi func(uint64) (lo, hi uint64, ok bool), swept func([]instrument.EntryBranch)) (instrument.ExitPlan, error) {
	isEntry := func(to uint64) bool {
		f := to - bias
		if mod.IsPLT(f) {
			return true
		}
		sym, ok := mod.Lookup(f)
		return ok && sym.Value == f && !instrument.IsColdPart(sym.Name)
	}
	cold := func(to uint64) (instrument.ColdPart, bool) {
		p, ok := mod.ColdPart(sym, to-bias, cfi)
		p.Addr += bias
		return p, ok
	}
	return instrument.PlanExits(instrument.ExitFunc{Code: code, Pad: pad,
		EntryEnd: instrument.EntryEnd(code), Addr: addr, IsEntry: isEntry, Cold: cold, Swept: swept})
}

// prePlan plans the exit probes of the functions of mod that want
// accepts from its file's bytes, on workers goroutines, for the first
// scan of the process about to be attached (preopen): done while the
// process runs, it does not hold the process stopped. Each walk of a
// whole function keeps its entry branches for the module's sweep, which
// then reads only the others: the two walks decoded every instruction
// twice (half of planning gcc's cc1, some 26,000 functions).
func (e *engine) prePlan(mod *instrument.Module, workers int, want func(instrument.Symbol) bool) {
	l := &loaded{mod: mod}
	var mu sync.Mutex // l loads its call-frame information when first asked
	cfi := func(pc uint64) (lo, hi uint64, ok bool) {
		mu.Lock()
		defer mu.Unlock()
		return l.coldRange(pc)
	}
	workers = max(workers, 1)
	out := make([]*plannedExits, len(mod.Symbols))
	swept := make([]*[]instrument.EntryBranch, len(mod.Symbols))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(mod.Symbols); i += workers {
				sym := mod.Symbols[i]
				if sym.Size == 0 || !want(sym) {
					continue
				}
				code, err := mod.ReadAt(sym.Value, int(sym.Size)+padLen(mod, sym))
				if err != nil {
					if code, err = mod.ReadAt(sym.Value, int(sym.Size)); err != nil {
						continue
					}
				}
				plan, err := planExitsOf(mod, 0, sym, code[:sym.Size], code[sym.Size:], sym.Value, cfi,
					func(b []instrument.EntryBranch) { swept[i] = &b })
				out[i] = &plannedExits{plan, err}
			}
		})
	}
	wg.Wait()
	for i, p := range out {
		if p != nil {
			e.exitPlans.keep(mod, mod.Symbols[i].Value, *p)
		}
		if b := swept[i]; b != nil {
			mod.KeepSwept(mod.Symbols[i].Value, *b, nil)
		}
	}
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
