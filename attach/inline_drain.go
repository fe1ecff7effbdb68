package attach

import (
	"fmt"
	"math"
	"time"

	"github.com/profile-dev/profile/attach/internal/inline"
	"github.com/profile-dev/profile/attach/internal/perfsample"
	"github.com/profile-dev/profile/attach/internal/ptrace"
	"github.com/profile-dev/profile/attach/internal/stub"
	"github.com/profile-dev/profile/model"
)

// drainSlot feeds the committed events of one ring to the session, as
// the thread that owns the ring. The caller holds e.mu.
func (e *engine) drainSlot(is *inlineSpace, slot int) int {
	t := is.Owner[slot]
	if t == nil || is.Mem == nil {
		return 0
	}
	e.readSamples(t)
	r := is.Ring(slot)
	n := r.Drain(func(ev *inline.Event) { e.inlineEvent(t, ev) })
	if r.Drained() {
		// Every sample read so far was taken after every event drained.
		// Otherwise one read during the drain (samplesBefore) may precede
		// an event not drained yet (past the drain's look at the head, or
		// not committed: its stub preempted): it waits for the next drain.
		e.flushSamples(t, math.MaxInt64)
	}
	e.stats.Rings.Events += int64(n)
	return n
}

// inlineEvent is one event of a ring: an entry opens a frame (closing
// those it passed: longjmp, exceptions, tail calls), an exit closes every
// frame up to the returning one, exactly as the trap probe's stops do.
func (e *engine) inlineEvent(t *thread, ev *inline.Event) {
	if ev.ID == stub.ArgsForID {
		// A frame's arguments, sent as it ends meeting the rule (--slow,
		// --detail-if): before the event that closes it.
		if ev.Args != nil {
			e.s.ArgsAt(t.st, ev.Slot(), ev.Args)
		}
		return
	}
	if ev.ID == stub.CountedID {
		e.spill(t, ev.Ret, int(ev.Counted()&stub.FnMask))
		return
	}
	now := e.clock.Ns(ev.Tick)
	if now < t.lastNs {
		now = t.lastNs // a signal between a stub's rdtsc and its reservation
	}
	// The samples taken before it, in the context it changes.
	e.samplesBefore(t, ev.Tick)
	e.flushBefore(t, now, ev)
	if ev.ID == stub.StallID {
		// The thread waited for room in its ring from now to its end:
		// the tracer's doing, taken out like a hold.
		if end := e.clock.Ns(ev.StallEnd()); end > now && e.opt.Compensate {
			e.s.Held(t.st, now, end)
		}
		return
	}
	t.lastNs = now
	if ev.ID == stub.ExitID {
		e.s.Return(t.st, ev.SP+8, ev.Ret, now)
		e.checkpointed(now)
		return
	}
	site := e.entrySite(t, ev.SP, ev.Ret)
	e.s.EnterVia(t.st, e.via(t, site.caller), int(ev.ID), site.kind, ev.SP, ev.Ret, now)
	if ev.Args != nil {
		e.s.Args(t.st, int(ev.ID), ev.Args)
	}
}

// via is the counted function a timed call is entered below
// (Session.EnterVia), given the traced function holding its call site:
// that function if it is counted and not the innermost open frame, else
// model.None. A caller that only counts has no frame: without it the
// callee's calls would read as its timed grandcaller's. A call from code
// no traced function holds is noted (hideCall).
func (e *engine) via(t *thread, caller int) int {
	top, _ := e.s.Top(t.st)
	if caller == model.None {
		e.hideCall(top)
		return model.None
	}
	if top != caller && e.counted[caller] {
		return caller
	}
	return model.None
}

// entrySite is the call site of a call entered at sp with return
// address ret (callSiteOf). A tail call from a function with exit probes
// (its tail site) or a hijacked return arrives with its slot aimed at the
// return stub: no call instruction made it (its kind is unknown, as a
// trap probe's entry says), and it was made where the tail-calling
// frame's own return goes (beforeSleep's call of redis's
// handleClientsWithPendingWritesUsingThreads, which tail-jumps to
// handleClientsWithPendingWrites), not in code no traced function holds
// (hideCall). Classified as a site, the stub's address read as the
// indirect call before it.
func (e *engine) entrySite(t *thread, sp, ret uint64) callSite {
	if is := t.proc.as.inl; is == nil || is.RetStub == 0 || ret != is.RetStub {
		return e.callSiteOf(t, ret)
	}
	s := callSite{kind: model.KindUnknown, caller: model.None}
	if orig, ok := e.s.RetAt(t.st, sp); ok && orig != ret {
		s.caller = e.callSiteOf(t, orig).caller
	}
	return s
}

// callSiteOf classifies the call that made a probed call from its return
// address, and finds its traced caller, once per call site.
func (e *engine) callSiteOf(t *thread, ret uint64) callSite {
	as := t.proc.as
	hot := &as.kindHot[(ret*0x9e3779b97f4a7c15)>>56]
	if hot.ret == ret && ret != 0 {
		return hot.site
	}
	s, ok := as.kinds[ret]
	if !ok {
		s = callSite{kind: e.callKind(t.tid, as, ret), caller: model.None}
		if ret != 0 {
			if fn, in := e.sampledAt(as, ret-1); !in {
				s.caller = fn
			}
		}
		as.kinds[ret] = s
	}
	*hot = kindEntry{ret, s}
	return s
}

// drainThread drains the ring t writes, if any.
func (e *engine) drainThread(t *thread) {
	if is := t.proc.as.inl; is != nil {
		if slot, ok := is.TidSlot[t.tid]; ok {
			e.drainSlot(is, slot)
		}
	}
}

// drainAll drains every ring of every space, and beats in each.
func (e *engine) drainAll() int {
	n, _ := e.drainPass()
	return n
}

// drainPass drains every ring once: the events taken, and the most taken
// from one ring.
func (e *engine) drainPass() (n, most int) {
	for _, is := range e.inl {
		for slot := range is.Owner {
			k := e.drainSlot(is, slot)
			n, most = n+k, max(most, k)
			is.Ring(slot).Beat()
		}
		e.checkDrops(is)
	}
	return n, most
}

// checkDrops notices a process whose stubs gave up on the tracer (it did
// not beat for stallLimitNs): counts are incomplete from then on. It says
// so, marks the profile partial and lets the stubs record again.
func (e *engine) checkDrops(is *inlineSpace) {
	var dropped uint64
	for slot := range is.Owner {
		d, _, _, _ := is.Ring(slot).Counters()
		dropped += d
	}
	if dropped <= is.DropsSeen {
		return
	}
	is.DropsSeen = dropped
	for _, t := range is.Owner {
		var w [8]byte
		ptrace.WriteMem(t.proc.pid, is.Data+stub.DDropping, w[:])
		msg := fmt.Sprintf("pid %d: the probes dropped calls while profile could not keep up: counts are incomplete", t.proc.pid)
		if !e.dropWarned {
			e.dropWarned = true
			e.warn("%s", msg)
			e.s.Warn(msg)
			prof := e.s.Profile()
			prof.Meta.Partial = true
			if prof.Meta.PartialReason == "" {
				prof.Meta.PartialReason = "calls dropped"
			}
		}
		break
	}
}

// drainPause is the shortest pause between drain passes that found the
// rings filling slowly (a quarter of a ring or less since the last
// pass). A ring (32,768 events) fills within one pause only above 65
// million events a second, a call every 30 ns: empty functions called
// back to back come close (the stubs cost 20-26 ns a call in the
// calibration on our VM), and a stub then waits (--stats: ring stalls).
// 250 us was tried and stalled no less on `overhead busy`.
const drainPause = 500 * time.Microsecond

// drainPauseMax is the longest: the pause grows as the busiest ring
// fills more slowly, to about an eighth of a ring a pass (drainFill),
// since every pass is a sleep and a wake-up of ours, on a CPU the target
// may need (beside redis under load, 2,000 passes a second of a few
// hundred events each cost the profiler's CPU more in the scheduler
// than in the events). Each pass also reads the threads' CPU samples:
// with them, the longest pause is a quarter of what a busy thread's
// sample ring holds (pauseCap: 60 samples, 3.75 ms at 250 us).
const (
	drainPauseMax = 4 * time.Millisecond
	drainFill     = stub.RingEvents / 8
)

// pauseCap is the longest pause between drain passes for a session
// sampling every period (0: not sampling).
func pauseCap(period time.Duration) time.Duration {
	if period <= 0 {
		return drainPauseMax
	}
	holds := perfsample.Holds(int64(period), sampleStack)
	return min(max(period*time.Duration(holds)/4, drainPause), drainPauseMax)
}

// nextPause is the pause after a pass that took most events from its
// busiest ring, since after the last pass: drainFill events at the
// rate it brought them, within drainPause and longest.
func nextPause(most int, since, longest time.Duration) time.Duration {
	if most <= 0 {
		return longest
	}
	return min(max(since*time.Duration(drainFill)/time.Duration(most), drainPause), longest)
}

// drainLoop drains the rings while the session runs: a full ring makes a
// stub wait, so the drain keeps up by polling, backing off when idle. It
// also pauses between passes that found every ring less than a quarter
// full: draining without a pause keeps a CPU busy beside the target's and
// slows it (on our VM, a traced 80-step multiply chain took 86-93 ms of
// self time for 500,000 calls, 55-62 ms with the pause).
func (e *engine) drainLoop() {
	idle := 0
	refined := time.Now()
	every := e.opt.refineEvery
	if every <= 0 {
		every = time.Second
	}
	last, longest := time.Now(), pauseCap(e.opt.SamplePeriod)
	for {
		e.mu.Lock()
		if e.drainDone {
			e.mu.Unlock()
			return
		}
		now := time.Now()
		n, most := e.drainPass()
		if time.Since(refined) > every {
			e.clock.Refine()
			refined = time.Now()
		}
		e.mu.Unlock()
		since := now.Sub(last)
		last = now
		if n > 0 {
			idle = 0
			if most < stub.RingEvents/4 {
				time.Sleep(nextPause(most, since, longest))
			}
			continue
		}
		if idle < 6 {
			idle++
		}
		time.Sleep(time.Duration(25<<idle) * time.Microsecond)
	}
}
