package attach

import (
	"regexp"

	"github.com/profile-dev/profile/attach/internal/stub"
	"github.com/profile-dev/profile/model"
)

// counting: the functions that take the counting probe (--counted, or
// moved there: adapt.go). Without counted functions no table is read.
type counting struct {
	counted map[int]bool
}

// countedFn tells whether fn, matched by --counted, takes the counting
// probe: exact calls per call site, no time, unless the user asked to see
// it in time (keepsTime).
func (e *engine) countedFn(fn int) bool {
	return e.opt.Counted != nil && e.named(fn, e.opt.Counted) && !e.keepsTime(fn)
}

// keepsTime tells whether fn keeps a timed probe whatever its calls cost
// (--counted and adaptive probes alike): its time asked for (timeAsked),
// or a waiting or creating call (its wall time is the profile's blocked
// time; its spawns are the threads' parents).
func (e *engine) keepsTime(fn int) bool {
	f := e.s.Profile().Functions[fn]
	return e.timeAsked(fn) || model.IsWaitingCall(f.Name) || model.IsCreationCall(f.Name)
}

// timeAsked tells whether the user asked to see fn in time: --timed,
// recorded in detail, a component of the calling context, the
// checkpoint.
func (e *engine) timeAsked(fn int) bool {
	p := e.s.Profile()
	f := p.Functions[fn]
	if e.s.Selected(fn) || (e.opt.Timed != nil && e.named(fn, e.opt.Timed)) ||
		f.Name == e.opt.Live.Checkpoint || p.FuncName(fn) == e.opt.Live.Checkpoint {
		return true
	}
	if e.opt.Context != nil {
		comp, gated := e.opt.Context.Role(p.Modules[f.Module].Path, f.Name)
		return comp >= 0 || gated
	}
	return false
}

// named tells whether re matches fn's name or module:name.
func (e *engine) named(fn int, re *regexp.Regexp) bool {
	p := e.s.Profile()
	f := p.Functions[fn]
	if re.MatchString(f.Name) || re.MatchString(p.FuncName(fn)) {
		return true
	}
	// module:name for the executable's functions too, which FuncName
	// names alone.
	return f.Module > 0 && f.Module < len(p.Modules) && re.MatchString(model.FuncKey(p.Modules[f.Module].Path, f.Name))
}

// stubFor is the stub a trampoline with id calls, given the copy at
// stubAt: the counting one for a counted function, else the entry stub.
func (e *engine) stubFor(stubAt uint64, id uint32) uint64 {
	if id&stub.FlagRestore == 0 && e.counted[int(id&stub.FnMask)] {
		return stubAt + stub.Count
	}
	return stubAt + stub.Entry
}

// takeArcs reads the count tables of every ring of is into the session:
// each thread's arcs as they stand (a table only grows while its thread
// owns the ring).
func (e *engine) takeArcs(is *inlineSpace) {
	if len(e.counted) == 0 || is.Mem == nil {
		return
	}
	for slot, t := range is.Owner {
		e.takeArcsOf(is, slot, t)
	}
}

// takeArcsOf reads slot's count table as thread t's arcs: each entry is a
// call site (its return address, in the traced function holding it or in
// no function of the profile) and the counted function it called.
func (e *engine) takeArcsOf(is *inlineSpace, slot int, t *thread) {
	if len(e.counted) == 0 || is.Mem == nil || t == nil || t.st == nil {
		return
	}
	as := t.proc.as
	var arcs []model.Arc
	r := is.Ring(slot)
	r.Counts(func(ret uint64, id uint32, calls uint64) {
		arcs = append(arcs, model.Arc{Caller: e.callerAt(as, ret), Callee: int(id), Calls: int64(calls)})
	})
	arcs = append(arcs, e.fastArcs(as, t)...)
	for k, calls := range t.spilled {
		arcs = append(arcs, model.Arc{Caller: e.callerAt(as, k.ret), Callee: k.fn, Calls: calls})
	}
	e.s.SetArcs(t.st, model.SortArcs(arcs))
}

// profileNow is the profile so far, tracing going on (session.Snapshot),
// with the counted calls. It does not drain: a checkpoint's snapshot is
// taken in the middle of a drain. The samples in it are those the drains
// placed among the events (a sample read but not placed waits for the
// event after it).
func (e *engine) profileNow() *model.Profile {
	for _, is := range e.inl {
		e.takeArcs(is)
	}
	e.s.Profile().Meta.CPUSamples = e.sampledMeta()
	p := e.s.Snapshot(e.now(), e.counters())
	measuredIfFew(p)
	return p
}

// releaseCounts empties slot's count table for its next owner.
func (e *engine) releaseCounts(is *inlineSpace, slot int) {
	if len(e.counted) == 0 || is.Mem == nil {
		return
	}
	is.Ring(slot).ClearCounts()
}

// spill counts a call of counted function fn, returning to ret, that its
// thread's count table had no room for: the stub sent it as an event.
func (e *engine) spill(t *thread, ret uint64, fn int) {
	if t.spilled == nil {
		t.spilled = map[fastKey]int64{}
	}
	t.spilled[fastKey{ret, fn}]++
	e.stats.Probes.Spilled++
}

// callerAt is the traced function whose code holds the call site that
// returns to ret, or model.None.
func (e *engine) callerAt(as *space, ret uint64) int {
	ret &^= stub.TailMark
	if fn, ok := as.callers[ret]; ok {
		return fn
	}
	fn, _ := e.tracedAt(as, ret-1)
	if as.callers == nil {
		as.callers = map[uint64]int{}
	}
	as.callers[ret] = fn
	return fn
}

// lastArcs reads is's count tables one last time (a detach, the end).
func (e *engine) lastArcs(is *inlineSpace) {
	if len(e.counted) == 0 || is.Mem == nil {
		return
	}
	e.takeArcs(is)
}
