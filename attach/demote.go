package attach

import (
	"time"

	"github.com/profile-dev/profile/model"
)

// A breakpoint never sits on a hot path (docs/engine.md, Trap probes on hot
// paths). Under --probes auto a trap probe is the fallback of a function
// that cannot take an inline one, and two stops a call cost 60–140 µs: a
// function called hotCalls times within hotWindow has its probe taken out
// (its counts end there, Function.TracedUntilNs says when). A return-site
// breakpoint sits in its caller's code, which other paths may pass through
// without a probed call to return from: after strayLimit such passages it
// stays in the text only while a frame awaits it.
const (
	hotCalls   = 1000
	hotWindow  = int64(time.Second)
	strayLimit = 64
)

// demoting: each trap-probed function's calls in its current window.
type demoting struct {
	trapRates map[int]*trapRate
}

// trapRate counts one function's trap-probed calls in the current window.
type trapRate struct {
	calls int
	since int64
}

// demoteIfHot counts a call entered at entry breakpoint b by thread t and
// takes b's probe out once its function is hot. The call itself is
// counted; its return is seen as usual.
func (e *engine) demoteIfHot(t *thread, b *bp, now int64) {
	if e.opt.Probes != ProbesAuto || e.opt.Context != nil || b.Fn == model.None {
		return
	}
	if e.trapRates == nil {
		e.trapRates = map[int]*trapRate{}
	}
	r := e.trapRates[b.Fn]
	if r == nil || now-r.since > hotWindow {
		r = &trapRate{since: now}
		e.trapRates[b.Fn] = r
	}
	if r.calls++; r.calls < hotCalls {
		return
	}
	fn, as := b.Fn, t.proc.as
	b.Fn = model.None
	if !b.IsReturn && !b.Special && !b.LinkerHook {
		e.remove(t.tid, as, b)
	}
	// Its calls' return sites see no call of it any more: each leaves
	// the text once no frame awaits it.
	for _, rb := range as.bps {
		if rb.IsReturn && rb.Callee == fn {
			rb.Transient = true
		}
	}
	f := &e.s.Profile().Functions[fn]
	f.TracedUntilNs = max(f.TracedUntilNs, now)
	e.stats.Probes.Demoted++
	e.warn("%s: its trap probe stopped the program %d times in %s (no inline probe: %s): taken out at %s, where its counts end",
		e.s.Profile().FuncName(fn), r.calls, time.Duration(now-r.since).Round(time.Millisecond), f.ProbeNote, model.FormatOffset(now))
	delete(e.trapRates, fn)
}

// passed handles a stop at return-site breakpoint b that closed a frame
// (closed) or none: a site passed without a return to see often becomes
// transient, and a transient one no frame awaits any more is parked.
func (e *engine) passed(t *thread, b *bp, closed bool) {
	if b.Fn != model.None || b.Special || b.LinkerHook || e.opt.Context != nil {
		return
	}
	if !closed && !b.Transient {
		if b.Strays++; b.Strays >= strayLimit {
			b.Transient = true
		}
	}
	if b.Transient && !e.awaited(t.proc.as, b.Addr) {
		e.park(t.tid, t.proc.as, b)
	}
}

// awaited tells whether a thread in space as has an open frame that
// returns to ret.
func (e *engine) awaited(as *space, ret uint64) bool {
	for _, th := range e.threads {
		if th.proc.as == as && th.st != nil && e.s.Awaits(th.st, ret) {
			return true
		}
	}
	return false
}

// park takes return-site breakpoint b out of the text, keeping it (its
// out-of-line copy, its heal entry) for unpark.
func (e *engine) park(tid int, as *space, b *bp) {
	if e.remove(tid, as, b) == nil {
		as.parked[b.Addr] = b
	}
}

// unpark puts parked breakpoint b back in the text.
func (e *engine) unpark(tid int, as *space, b *bp) error {
	if err := as.poke(tid, b.Addr, []byte{0xcc}); err != nil {
		return err
	}
	delete(as.parked, b.Addr)
	delete(as.removed, b.Addr)
	as.bps[b.Addr] = b
	return nil
}
