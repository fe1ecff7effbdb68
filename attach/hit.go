package attach

import (
	"encoding/binary"

	"golang.org/x/sys/unix"

	"github.com/profile-dev/profile/attach/internal/procfs"
	"github.com/profile-dev/profile/attach/internal/ptrace"
	"github.com/profile-dev/profile/attach/internal/trap"
	"github.com/profile-dev/profile/model"
)

// hit handles a stop at breakpoint b: close the frames the stack pointer
// has passed, open a frame at a function entry, then execute the displaced
// instruction out of line (or emulate it) and resume. Two stops per call:
// this one at entry, one at the return site.
func (e *engine) hit(t *thread, b *bp, regs *unix.PtraceRegs) {
	now := e.now()
	regs.Rip = b.Addr
	if b.Special {
		e.programEntry(t, b, regs)
		return
	}
	// A stop costs the thread the kernel's work and its wake-ups (before
	// the tracer saw the stop: stopCost; after it let the thread go: half
	// the calibrated stopWake, the rest read at the next stop) and the
	// tracer's. What came before the event is held in the frame open
	// until now, the rest in the one open from now: a trap-probed call's
	// entry stop lands half in its caller and half in it, its return stop
	// the same way.
	charged := e.opt.Compensate && e.stopWake > 0 && !b.LinkerHook
	if charged {
		d, ok := t.sched.Since(t.proc.pid, t.tid)
		wall := int64(-1)
		if t.resumedAt > 0 {
			wall = e.stopAt - t.resumedAt
		}
		e.s.Stopped(t.st, e.stopAt-stopCost(wall, d, ok, e.stopWake, e.stopKernel), now)
	}
	if b.LinkerHook {
		e.linkMapChanged(t) // holds what it takes itself
	}
	if t.ctx != nil {
		e.ctxPassed(t, regs.Rsp)
	}
	var last uint64
	if b.IsReturn {
		last = e.s.Return(t.st, regs.Rsp, regs.Rax, now)
		e.checkpointed(now)
		e.passed(t, b, last != 0)
	}
	// An address that is both a return site and a function entry (a call
	// to a noreturn function just before the next function) is an entry
	// only when not reached by a return.
	if b.Fn != model.None && last != b.Addr {
		if e.gated(b.Fn) && !e.inContext(t) {
			e.stats.Context.OutsideStops++
		} else {
			e.enter(t, b, regs, now)
		}
	}
	e.step(t, b, regs)
	if charged && t.resumedAt >= now {
		e.s.Stopped(t.st, now, t.resumedAt+e.stopWake/2)
		e.s.StopsTaken()
	}
}

// enter opens an activation of b's function.
func (e *engine) enter(t *thread, b *bp, regs *unix.PtraceRegs, now int64) {
	var buf [8]byte
	if err := ptrace.ReadMem(t.tid, regs.Rsp, buf[:]); err != nil {
		return
	}
	ret := binary.LittleEndian.Uint64(buf[:])
	kind := model.KindUnknown
	rb, ok := t.proc.as.bps[ret]
	fresh := false
	if is := t.proc.as.inl; is != nil && ret == is.RetStub {
		// Tail-called from an inline-probed function, whose return
		// address the stub swapped: the stub's exit event closes this
		// frame too. A breakpoint there would stop every inline-probed
		// return of the process.
		rb, ok = nil, true
	} else if !ok || !rb.IsReturn {
		var err error
		if rb, err = e.insertReturn(t.tid, t.proc.as, ret); err != nil {
			rb = nil
		}
		fresh = !ok
	}
	if rb != nil {
		kind = rb.Kind
		rb.Callee = b.Fn
		if e.opt.Context != nil {
			e.gateReturn(t.proc.as, rb, e.gated(b.Fn), fresh)
		}
	}
	e.s.EnterVia(t.st, e.via(t, e.entrySite(t, regs.Rsp, ret).caller), b.Fn, kind, regs.Rsp, ret, now)
	e.ctxEnter(t, b.Fn, regs.Rsp, false)
	if e.s.Selected(b.Fn) {
		e.s.Args(t.st, b.Fn, &[6]uint64{regs.Rdi, regs.Rsi, regs.Rdx, regs.Rcx, regs.R8, regs.R9})
	}
	e.demoteIfHot(t, b, now)
}

// step executes the instruction displaced by b and resumes the thread.
func (e *engine) step(t *thread, b *bp, regs *unix.PtraceRegs) {
	if err := trap.GoOn(b, regs, ptrace.Mem(t.tid)); err != nil {
		// Leave the thread at the breakpoint's address with the
		// original byte back: it runs the instruction itself.
		e.remove(t.tid, t.proc.as, b)
	}
	e.moveTo(t, regs)
	e.resume(t, 0)
	if e.detaching {
		e.stopForDetach(t) // stop again, now past the breakpoint
	}
}

// programEntry runs once the dynamic linker has mapped the libraries and
// is about to jump to the program: map the out-of-line area, instrument
// every module, take the entry breakpoint out and go on.
func (e *engine) programEntry(t *thread, b *bp, regs *unix.PtraceRegs) {
	from := e.now()
	as := t.proc.as
	e.remove(t.tid, as, b)
	delete(as.removed, b.Addr)
	// Marked before it is rewound: should profile die in between, the
	// heal handler finds the thread past the entry's byte, or at the mark.
	healed := as.heal != nil
	e.markRip(t, regs.Rip)
	ptrace.SetRegs(t.tid, regs)
	if e.armFresh(t) {
		if !healed {
			e.markRip(t, regs.Rip) // at the entry: resumable from here on
		}
		if e.s.Profile().Meta.StopOverheadNs == 0 {
			e.measureStop(t.tid, as)
		}
		e.spaceReady(t.tid, t.proc, t)
	}
	if len(as.areas) == 0 {
		e.resume(t, 0)
		return
	}
	// A launched program's first image has not begun: it may wait for
	// debuginfod (debugSearch).
	e.debugNet = e.launched && t.proc.pid == e.rootPid && !e.rootScanned
	e.rootScanned = true
	// A fresh image: its memory new (an exec's, a launch's), its thread
	// stopped here; unless a preloaded library's constructor started
	// another before the entry, no other runs in it.
	as.sole = e.soleTask(t)
	n, err := e.scan(t.tid, t.proc)
	as.sole = false
	e.debugNet = false
	if err != nil || n == 0 {
		if err == nil {
			err = e.nothingToTrace(t.proc)
		}
		e.failStart(t, err)
		return
	}
	e.moveTo(t, regs)
	e.held(t, from)
	e.resume(t, 0)
}

// stopCost is what a thread paid for its trap stops between the tracer
// letting it go and seeing it stop again (less wake/2, taken when it was
// let go): wall ns, d its scheduler counters' change meanwhile (ok: read).
// Put on a CPU once (slices 1), it was off one, not waiting for one, only
// while being woken and while its stop woke the tracer: that time, its
// waits for a CPU and the kernel's CPU time a stop takes (calibrated:
// kernel) were the stops'. On a virtual
// machine those wake-ups alone are 10-50 us, several times the calibrated
// round's. A thread that ran more than once may have blocked (in a
// system call: its own time), so it gets the calibrated wake.
func stopCost(wall int64, d procfs.SchedDelta, ok bool, wake, kernel int64) int64 {
	if !ok {
		return wake / 2
	}
	if d.Slices != 1 || wall < 0 {
		return wake/2 + d.Queued
	}
	off := max(wall-d.Ran-d.Queued, 0)
	return max(off+d.Queued+min(kernel, d.Ran)-wake/2, 0)
}
