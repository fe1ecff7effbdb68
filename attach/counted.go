package attach

import (
	"fmt"

	"github.com/profile-dev/profile/attach/internal/stub"
	"github.com/profile-dev/profile/model"
)

// counting: the functions that take the counting probe (--counted) and
// the calls their threads' count tables had no room for.
type counting struct {
	counted    map[int]bool
	uncounted  int64
	countTaken bool // some space has counted functions: its tables are read
}

// countedFn tells whether fn, matched by --counted, takes the counting
// probe: exact calls per call site, no time. A function the user asked to
// see in time keeps a timed probe: recorded in detail, a component of the
// calling context (comp, gated), the checkpoint, or a waiting call (its
// wall time is what the profile's blocked time is made of).
func (e *engine) countedFn(fn, comp int, gated bool, name string) bool {
	re := e.opt.Counted
	if re == nil || comp >= 0 || gated || e.s.Selected(fn) {
		return false
	}
	prof := e.s.Profile()
	if !re.MatchString(prof.Functions[fn].Name) && !re.MatchString(prof.FuncName(fn)) {
		return false
	}
	if model.IsWaitingCall(name) || model.IsCreationCall(name) || name == e.opt.Live.Checkpoint || prof.FuncName(fn) == e.opt.Live.Checkpoint {
		return false
	}
	return true
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
	if !e.countTaken || is.Mem == nil {
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
	if !e.countTaken || is.Mem == nil || t == nil || t.st == nil {
		return
	}
	as := t.proc.as
	var arcs []model.Arc
	r := is.Ring(slot)
	r.Counts(func(ret uint64, id uint32, calls uint64) {
		arcs = append(arcs, model.Arc{Caller: e.callerAt(as, ret), Callee: int(id), Calls: int64(calls)})
	})
	e.s.SetArcs(t.st, model.SortArcs(arcs))
}

// profileNow is the profile so far, tracing going on (session.Snapshot),
// the counted calls included.
func (e *engine) profileNow() *model.Profile {
	for _, is := range e.inl {
		e.takeArcs(is)
	}
	for _, t := range e.threads {
		e.flushAll(t)
	}
	e.s.Profile().Meta.CPUSamples = e.sampledMeta()
	return e.s.Snapshot(e.now(), e.counters())
}

// releaseCounts empties slot's count table for its next owner, counting
// the calls it had no room for.
func (e *engine) releaseCounts(is *inlineSpace, slot int) {
	if !e.countTaken || is.Mem == nil {
		return
	}
	e.uncounted += is.Ring(slot).ClearCounts()
}

// callerAt is the traced function whose code holds the call site that
// returns to ret, or model.None.
func (e *engine) callerAt(as *space, ret uint64) int {
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

// lastArcs reads is's count tables one last time (a detach, the end):
// the arcs, and the calls that found no room.
func (e *engine) lastArcs(is *inlineSpace) {
	if !e.countTaken || is.Mem == nil {
		return
	}
	e.takeArcs(is)
	for slot := range is.Owner {
		e.uncounted += is.Ring(slot).Uncounted()
	}
}

// countsLost says, in the profile, how many counted calls found no room.
func (e *engine) countsLost() {
	if e.uncounted > 0 {
		msg := fmt.Sprintf("--counted: %d calls found their thread's count table full (%d call sites): they are not in the counts", e.uncounted, stub.CountEntries)
		e.warn("%s", msg)
		e.s.Warn(msg)
	}
}
