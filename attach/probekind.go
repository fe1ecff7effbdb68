package attach

import (
	"golang.org/x/sys/unix"

	"github.com/profile-dev/profile/attach/internal/ptrace"
)

// probeKind is one kind of probe as the loop and the lifecycle drive it:
// told when a process can take probes, when a thread appears, stops or
// ends, when a process forks or a space is let go, asked to take itself
// out of a space at detach and to hand in what it holds at the end. The
// engine calls every kind in the order of engine.probes: the calling
// context's gate (context.go), inline probes (inline*.go), trap probes
// (instrument.go, hit.go). A new kind is one more implementation, not an
// edit at each place the loop handles a thread.
type probeKind interface {
	// ready: process p (its thread tid stopped) can take the kind's
	// probes; its threads appear after this.
	ready(tid int, p *process)
	// appeared: thread t runs in a space that may have the kind's probes.
	appeared(t *thread)
	// stopped: thread t reported ws, before the loop handles it.
	stopped(t *thread, ws unix.WaitStatus)
	// gone: thread t runs no more user code (exiting, ended, let go).
	gone(t *thread)
	// forked: nt is the first thread of a process t forked (shared: a
	// vfork child, in t's memory).
	forked(t, nt *thread, shared bool)
	// released: no thread of ours is left in space as (exit, exec).
	released(as *space)
	// detach: every thread in space as is stopped; the kind takes out
	// what it put there.
	detach(tid int, as *space)
	// finish: the session ends.
	finish()
}

// newProbeKinds returns the kinds of engine e in the order they are told.
func newProbeKinds(e *engine) []probeKind {
	return []probeKind{contextGate{e}, inlineProbes{e}, trapProbes{e}, samplers{e}}
}

// spaceReady tells every kind that process p (thread tid stopped) can
// take probes, then that its threads appeared.
func (e *engine) spaceReady(tid int, p *process, threads ...*thread) {
	for _, k := range e.probes {
		k.ready(tid, p)
	}
	for _, t := range threads {
		e.threadAppeared(t)
	}
}

func (e *engine) threadAppeared(t *thread) {
	for _, k := range e.probes {
		k.appeared(t)
	}
}

func (e *engine) threadGone(t *thread) {
	for _, k := range e.probes {
		k.gone(t)
	}
}

// Each kind's hooks, in one place; the methods they call live with the
// kind's own code.

type contextGate struct{ e *engine }

func (contextGate) ready(int, *process)                 {}
func (contextGate) appeared(*thread)                    {}
func (contextGate) stopped(*thread, unix.WaitStatus)    {}
func (k contextGate) gone(t *thread)                    { k.e.ctxGone(t) }
func (k contextGate) forked(t, nt *thread, shared bool) { k.e.ctxForked(t, nt, shared) }
func (contextGate) released(*space)                     {}
func (contextGate) detach(int, *space)                  {}
func (contextGate) finish()                             {}

type inlineProbes struct{ e *engine }

func (k inlineProbes) ready(tid int, p *process) { k.e.setupInline(tid, p) }
func (k inlineProbes) appeared(t *thread)        { k.e.registerInline(t) }

func (k inlineProbes) stopped(t *thread, ws unix.WaitStatus) {
	if ws.Exited() || ws.Signaled() || ws.Stopped() && ptrace.Event(ws) == unix.PTRACE_EVENT_EXEC {
		k.e.s.ImageGone(t.st)
	}
	// Its ring first: its calls happened before this stop.
	k.e.drainThread(t)
	if ws.Stopped() && ptrace.Event(ws) == 0 && !k.e.detaching {
		// A thread without a thread pointer at its first stop (a static
		// program sets its own later) gets its ring at a later signal or
		// breakpoint stop; for a registered one this is a map lookup.
		k.e.registerInline(t)
	}
}

func (k inlineProbes) gone(t *thread) { k.e.unregisterInline(t) }

func (k inlineProbes) forked(t, nt *thread, shared bool) {
	if shared {
		k.e.vforkInline(t, nt)
	} else {
		k.e.forkInline(t, nt)
	}
}

func (k inlineProbes) released(as *space) {
	if as.inl != nil {
		// The image is gone, and its rings with it.
		k.e.inlineCounters(as.inl)
		k.e.dropInline(as.inl)
		as.inl = nil
	}
}

func (k inlineProbes) detach(tid int, as *space) { k.e.detachInline(tid, as) }

func (k inlineProbes) finish() {
	k.e.drainAll()
	for _, is := range append([]*inlineSpace(nil), k.e.inl...) {
		k.e.inlineCounters(is)
		k.e.dropInline(is)
	}
}

type trapProbes struct{ e *engine }

func (trapProbes) ready(int, *process)              {}
func (trapProbes) appeared(*thread)                 {}
func (trapProbes) stopped(*thread, unix.WaitStatus) {}
func (trapProbes) gone(*thread)                     {}
func (trapProbes) forked(*thread, *thread, bool)    {}
func (trapProbes) released(*space)                  {}

// detach puts every breakpoint's byte back and moves the space's threads
// that are out of line back to the original code.
func (k trapProbes) detach(tid int, as *space) {
	k.e.restoreText(tid, as)
	for _, t := range k.e.threads {
		if t.proc.as == as {
			k.e.leaveArea(t)
		}
	}
}

func (trapProbes) finish() {}

// samplers sample the threads' CPU time (sampling.go). Last: a thread's
// ring is drained (its events placed) before its samples are.
type samplers struct{ e *engine }

func (k samplers) ready(int, *process)                  {}
func (k samplers) appeared(t *thread)                   { k.e.startSampling(t) }
func (k samplers) stopped(t *thread, _ unix.WaitStatus) { k.e.flushAll(t) }
func (k samplers) gone(t *thread)                       { k.e.stopSampling(t) }
func (samplers) forked(*thread, *thread, bool)          {}
func (samplers) released(*space)                        {}

func (k samplers) detach(_ int, as *space) {
	for _, t := range k.e.threads {
		if t.proc.as == as {
			k.e.stopSampling(t)
		}
	}
}

func (k samplers) finish() {
	for _, t := range k.e.threads {
		k.e.stopSampling(t)
	}
}
