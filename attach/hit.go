package attach

import (
	"encoding/binary"

	"golang.org/x/sys/unix"

	"github.com/profile-dev/profile/instrument"
	"github.com/profile-dev/profile/model"
)

// hit handles a stop at breakpoint b: close the frames the stack pointer
// has passed, open a frame at a function entry, then execute the displaced
// instruction out of line (or emulate it) and resume. Two stops per call:
// this one at entry, one at the return site.
func (e *engine) hit(t *thread, b *bp, regs *unix.PtraceRegs) {
	now := e.now()
	regs.Rip = b.addr
	if b.special {
		e.programEntry(t, b, regs)
		return
	}
	if b.linkerHook {
		e.linkMapChanged(t)
	}
	var last uint64
	if b.isReturn {
		last = e.popFrames(t, regs.Rsp, now, false)
	}
	// An address that is both a return site and a function entry (a call
	// to a noreturn function just before the next function) is an entry
	// only when not reached by a return.
	if b.fn != model.None && last != b.addr {
		e.enter(t, b, regs, now)
	}
	e.step(t, b, regs)
}

// popFrames closes every open frame whose entry stack pointer lies below
// sp: returns, and frames abandoned by longjmp or exceptions, close here.
// At an entry, a frame at exactly sp was abandoned too (tail call). Frames
// on another stack (a signal handler's sigaltstack) are compared only
// when a frame below them on this stack closes: then they were abandoned
// too (siglongjmp out of the handler). It returns the return address of
// the outermost frame it closed, 0 if none.
func (e *engine) popFrames(t *thread, sp uint64, now int64, atEntry bool) uint64 {
	if len(t.frames) == 0 {
		return 0
	}
	stack := e.stackOf(t, sp)
	cut := len(t.frames)
	for i := len(t.frames) - 1; i >= 0; i-- {
		f := t.frames[i]
		if f.stack != stack {
			continue
		}
		if f.sp > sp || (f.sp == sp && !atEntry) {
			break
		}
		cut = i
	}
	var last uint64
	for len(t.frames) > cut {
		last = t.frames[len(t.frames)-1].ret
		t.frames = t.frames[:len(t.frames)-1]
		t.rec.Exit(now)
	}
	return last
}

// stackOf identifies the stack sp is on by the end of its mapping (a
// stack grows down, so its end stays put). The thread caches its current
// stack; /proc is read only when sp leaves it.
func (e *engine) stackOf(t *thread, sp uint64) uint64 {
	if sp >= t.stackLo && sp < t.stackHi {
		return t.stackHi
	}
	maps, err := instrument.ReadMaps(t.proc.pid)
	if err == nil {
		for _, m := range maps {
			if sp >= m.Start && sp < m.End {
				t.stackLo, t.stackHi = m.Start, m.End
				return m.End
			}
		}
	}
	return 0
}

// enter opens an activation of b's function.
func (e *engine) enter(t *thread, b *bp, regs *unix.PtraceRegs, now int64) {
	var buf [8]byte
	if err := readMem(t.tid, regs.Rsp, buf[:]); err != nil {
		return
	}
	ret := binary.LittleEndian.Uint64(buf[:])
	e.popFrames(t, regs.Rsp, now, true)
	kind := model.KindUnknown
	if rb, ok := t.proc.as.bps[ret]; ok && rb.isReturn {
		kind = rb.kind
	} else if rb, err := e.insertReturn(t.tid, t.proc.as, ret); err == nil {
		kind = rb.kind
	}
	t.frames = append(t.frames, frame{sp: regs.Rsp, ret: ret, stack: e.stackOf(t, regs.Rsp)})
	t.rec.Enter(b.fn, now, kind)
	e.stats.TracedCalls++
}

// step executes the instruction displaced by b and resumes the thread.
func (e *engine) step(t *thread, b *bp, regs *unix.PtraceRegs) {
	p := &b.plan
	switch p.Emulate {
	case instrument.EmuNone:
		regs.Rip = b.slot
	case instrument.EmuNop:
		regs.Rip = p.Next()
	case instrument.EmuJmp:
		regs.Rip = p.Target
	case instrument.EmuCall, instrument.EmuCallIndirect:
		target := p.Target
		if p.Emulate == instrument.EmuCallIndirect {
			var err error
			target, err = p.IndirectTarget(*regs, func(a uint64) (uint64, error) {
				var w [8]byte
				err := readMem(t.tid, a, w[:])
				return binary.LittleEndian.Uint64(w[:]), err
			})
			if err != nil {
				// Leave the thread at the breakpoint's address with the
				// original byte back: it runs the call itself.
				e.remove(t.tid, t.proc.as, b)
				break
			}
		}
		var w [8]byte
		binary.LittleEndian.PutUint64(w[:], p.Next())
		if err := writeMem(t.tid, regs.Rsp-8, w[:]); err != nil {
			e.remove(t.tid, t.proc.as, b)
			break
		}
		regs.Rsp -= 8
		regs.Rip = target
	}
	e.moveTo(t, regs)
	e.resume(t, 0)
	if e.detaching {
		interrupt(t.tid) // stop again, now past the breakpoint
	}
}

// programEntry runs once the dynamic linker has mapped the libraries and
// is about to jump to the program: map the out-of-line area, instrument
// every module, take the entry breakpoint out and go on.
func (e *engine) programEntry(t *thread, b *bp, regs *unix.PtraceRegs) {
	as := t.proc.as
	e.remove(t.tid, as, b)
	delete(as.removed, b.addr)
	setRegs(t.tid, regs)
	if _, err := e.mapArea(t.tid, as, as.entry, as.entry); err != nil {
		e.warn("pid %d: %v", t.proc.pid, err)
	} else {
		if err := e.installHeal(t.tid, as); err != nil {
			e.warn("pid %d: %v (the target is not protected should profile be killed)", t.proc.pid, err)
		}
		e.markRip(t, regs.Rip) // at the entry: resumable from here on
		if e.prof.Meta.StopOverheadNs == 0 {
			e.measureStop(t.tid, as)
		}
	}
	if len(as.areas) == 0 {
		e.resume(t, 0)
		return
	}
	if n, err := e.scan(t.tid, t.proc); err != nil || n == 0 {
		if err == nil {
			err = e.nothingToTrace(t.proc)
		}
		e.failStart(t, err)
		return
	}
	e.moveTo(t, regs)
	e.resume(t, 0)
}
