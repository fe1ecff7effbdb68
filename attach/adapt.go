package attach

import (
	"encoding/binary"
	"fmt"
	"github.com/profile-dev/profile/attach/internal/inline"
	"sync/atomic"
	"time"

	"github.com/profile-dev/profile/attach/internal/ptrace"
	"github.com/profile-dev/profile/attach/internal/stub"
	"github.com/profile-dev/profile/model"
)

// Adaptive probes: with sampled times (Options.SamplePeriod) every
// function starts timed, and one whose calls are too short for a timed
// probe to measure moves to the counting probe, live: its calls stay
// exact, its time comes from the samples either way, and the probe no
// longer costs more than the call (docs/design.md, Adaptive probes).
const (
	adaptFirst    = 20 * time.Millisecond // the first look; each next one twice as late,
	adaptEvery    = 2 * time.Second       // up to this: a look takes a snapshot
	adaptMinCalls = 2000                  // calls seen before a function is judged
	adaptBelow    = time.Microsecond      // a timed call shorter than this on average moves
	// A function called this often whose calls average under
	// adaptManyBelow moves too, as TAU throttles one called over 100,000
	// times at under 10 µs a call: each timed call is two ring events for
	// the tracer to process, on the program's CPU when they share one
	// (Lua's luaD_rawrunprotected: 1.7M calls of 1.3 µs, a quarter of
	// the run's 14.6M events).
	adaptMany      = 100_000
	adaptManyBelow = 2 * time.Microsecond
	// A look is due early, adaptFirst after the last, once the rings have
	// brought this many events since it: a server attached idle gets its
	// load later, by which time the looks are seconds apart, and its short
	// functions would stay timed that long (redis under redis-benchmark: 2
	// s of a 5 s run). Twice as many each time a look so brought moves
	// none, up to adaptEventsMax.
	adaptEvents    = 200_000
	adaptEventsMax = 20_000_000
)

// adapting: the tick, and when the tracer looks next.
type adapting struct {
	adaptDue atomic.Bool
	lookGap  time.Duration // from one look to the next
	nextLook time.Time
	lastLook time.Time
	// eventGap: the ring events that make a look due early;
	// eventsAtLook, the events drained at the last look.
	eventGap, eventsAtLook int64
	// hidden counts, by the innermost open function, the timed calls
	// made from code no traced function holds since the last look
	// (hideCall).
	hidden []int64
}

// hideCall notes a timed call made from code no traced function holds
// while fn was the innermost open function: from a static function a
// stripped binary does not name (redis's connSocketRead, which calls
// read for readQueryFromClient), or from a library (qsort calling a
// comparator). Were fn counted, such a callee's frames could not go below
// it (EnterVia needs the caller from the call site) and would read as
// fn's caller's calls, with their time: fn stays timed (movable).
func (e *engine) hideCall(fn int) {
	if fn <= model.StartFunc {
		return
	}
	if fn >= len(e.hidden) {
		e.hidden = append(e.hidden, make([]int64, fn+1-len(e.hidden))...)
	}
	e.hidden[fn]++
}

// adaptive tells whether the session moves short functions to counting:
// only while their time comes from samples. Where sampling was refused
// (perf_event_paranoid, seccomp), the times are measured and every
// function stays timed.
func (e *engine) adaptive() bool {
	return e.opt.SamplePeriod > 0 && e.clock != nil && e.notSampled == ""
}

// adaptLoop checks every adaptFirst, until stop is closed, whether a
// look at the timed functions is due, and then wakes the tracer to look
// (adapt). It wakes it only then: a wake-up is a short-lived process of
// ours, and one every tick (50 a second) took a fifth of a CPU beside
// redis under load, where the looks are seconds apart.
func (e *engine) adaptLoop(stop <-chan struct{}) {
	t := time.NewTicker(adaptFirst)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			// The tracer's state is ours while it waits for a stop.
			e.mu.Lock()
			due := !e.drainDone && e.lookDue()
			e.mu.Unlock()
			if due {
				e.adaptDue.Store(true)
				e.wake()
			}
		}
	}
}

// lookDue tells whether the tracer looks at the timed functions now: soon
// after the start (a short call costs most while it is timed), then less
// and less often, twice as late each time, up to adaptEvery; but again
// soon after a look that moved some, as a program's next phase (a sort
// after a parse) brings short functions of its own; and early once the
// rings have brought eventGap events since the last look (a load that
// starts after a quiet while).
func (e *engine) lookDue() bool {
	now := time.Now()
	if e.nextLook.IsZero() {
		e.lookGap, e.nextLook, e.eventGap = adaptFirst, now, adaptEvents
	}
	return !now.Before(e.nextLook) ||
		e.stats.Rings.Events-e.eventsAtLook >= e.eventGap && now.Sub(e.lastLook) >= adaptFirst
}

// looked schedules the next look after one that moved some functions or
// none.
func (e *engine) looked(moved bool) {
	now := time.Now()
	if moved {
		e.lookGap, e.eventGap = adaptFirst, adaptEvents
	} else {
		e.lookGap = min(2*e.lookGap, adaptEvery)
		if e.stats.Rings.Events-e.eventsAtLook >= e.eventGap {
			e.eventGap = min(2*e.eventGap, adaptEventsMax)
		}
	}
	e.nextLook, e.lastLook, e.eventsAtLook = now.Add(e.lookGap), now, e.stats.Rings.Events
}

// shortCall is a function's calls so far and their mean time: its
// recursion-aware total over all its calls, so that a recursive
// function's many short inner calls count as what they cost.
type shortCall struct {
	calls int64
	mean  time.Duration
}

// tooShort tells whether calls so many and so short are better counted
// than timed.
func (c shortCall) tooShort() bool {
	return c.calls >= adaptMinCalls && (c.mean < adaptBelow || c.calls >= adaptMany && c.mean < adaptManyBelow)
}

// shortCalls are the inline-timed functions whose calls so far are too
// short to time.
func (e *engine) shortCalls(p *model.Profile) map[int]shortCall {
	type acc struct{ calls, total int64 }
	by := map[int]*acc{}
	for _, th := range p.Threads {
		for _, n := range th.Nodes {
			if n.Calls == 0 {
				continue
			}
			a := by[n.Func]
			if a == nil {
				a = &acc{}
				by[n.Func] = a
			}
			a.calls += n.Calls
			a.total += n.TotalNs
		}
	}
	out := map[int]shortCall{}
	for fn, a := range by {
		if a.calls < adaptMinCalls || !e.movable(fn, p) {
			continue
		}
		if c := (shortCall{a.calls, time.Duration(a.total / a.calls)}); c.tooShort() {
			out[fn] = c
		}
	}
	return out
}

// movable tells whether fn, timed by an inline probe, may move to
// counting: not what the user asked to see in time (keepsTime), nor a
// function whose timed callees are called from code no traced function
// holds (hideCall).
func (e *engine) movable(fn int, p *model.Profile) bool {
	hides := fn < len(e.hidden) && e.hidden[fn] > 0
	return p.Functions[fn].Probe == model.ProbeInline && !e.counted[fn] && !e.keepsTime(fn) && !hides
}

// adapt moves the functions whose timed calls are too short to the
// counting probe: every thread stopped, each trampoline's call of the
// entry stub re-aimed at the counting stub of the same copy. A frame of
// such a function already open still returns through the return stub.
func (e *engine) adapt() {
	if e.detaching || len(e.threads) == 0 || !e.adaptive() || !e.lookDue() {
		return
	}
	e.drainAll()
	snap := e.profileNow()
	short := e.shortCalls(snap)
	// Calls hidden since this look: a callee that moves now no longer
	// keeps its hider timed at the next one.
	clear(e.hidden)
	arm := e.fastPlans()
	if len(short) == 0 && len(arm) == 0 {
		e.looked(false)
		return
	}
	from, ok := e.pauseAll()
	if !ok {
		return // a vfork in progress: the next tick tries again
	}
	// Functions moved now take fast paths at the next look, soon.
	e.looked(len(short) > 0)
	for as, plan := range arm {
		if t := e.fastOwner(as); t != nil && t == plan.t && t.stopped {
			e.armFast(as, t, plan.sites)
		}
	}
	moved := map[int]bool{}
	done := map[*space]bool{}
	for _, t := range e.threads {
		as := t.proc.as
		if done[as] || !t.stopped || as.inl == nil {
			continue
		}
		done[as] = true
		for _, p := range as.inl.Patches {
			if _, ok := short[p.Fn]; ok && e.toCounting(t.tid, as.inl, p.TrampAt) {
				moved[p.Fn] = true
				e.dropExits(t.tid, as, p)
			}
		}
	}
	now := e.now()
	e.resumeAll(from)
	prof := e.s.Profile()
	for fn := range moved {
		if e.counted == nil {
			e.counted = map[int]bool{}
		}
		e.counted[fn] = true
		e.stats.Probes.Inline--
		e.stats.Probes.Counted++
		e.stats.Probes.Moved++
		f := &prof.Functions[fn]
		f.Probe = model.ProbeCounted
		why := "too short to time"
		if short[fn].mean >= adaptBelow {
			why = "too many to time"
		}
		f.ProbeNote = fmt.Sprintf("counted from %s: %d calls of %s each, %s", model.FormatOffset(now),
			short[fn].calls, short[fn].mean, why)
	}
}

// toCounting re-aims the trampoline at tramp (push id; call entry) at its
// stub copy's counting stub, if it calls an entry stub of is: every thread
// of the space stopped, as a 4-byte write into an instruction must be.
func (e *engine) toCounting(tid int, is *inlineSpace, tramp uint64) bool {
	var b [10]byte
	if ptrace.ReadMem(tid, tramp, b[:]) != nil || b[0] != 0x68 || b[5] != 0xe8 {
		return false
	}
	target := tramp + 10 + uint64(int64(int32(binary.LittleEndian.Uint32(b[6:]))))
	copyAt := target - stub.Entry
	known := false
	for _, s := range is.Stubs {
		known = known || s == copyAt
	}
	if !known {
		return false
	}
	var rel [4]byte
	binary.LittleEndian.PutUint32(rel[:], uint32(int32(int64(copyAt+stub.Count)-int64(tramp+10))))
	return ptrace.WriteMem(tid, tramp+6, rel[:]) == nil
}

// dropExits puts back the returns of p's function, moved to the counting
// probe.
func (e *engine) dropExits(tid int, as *space, p *inline.Patch) {
	e.dropSites(tid, as, p.Exits)
	if p.Exits != nil {
		e.exitedFn(p.Fn, false)
	}
	p.Exits = nil
}
