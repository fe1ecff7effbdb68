package attach

import (
	"encoding/binary"

	"github.com/profile-dev/profile/attach/internal/procfs"
	"github.com/profile-dev/profile/attach/internal/ptrace"
	"github.com/profile-dev/profile/attach/internal/stub"
	"github.com/profile-dev/profile/instrument/unwind"

	"golang.org/x/sys/unix"
)

// stepOut single-steps stopped thread t until it leaves the stubs and
// trampolines: a detach never leaves a thread in code about to vanish,
// and every stub it was in finishes its event and its return address.
func (e *engine) stepOut(t *thread, is *inlineSpace) {
	e.stepOutOf(t, is.Inside, true)
}

// stepOutOf single-steps stopped thread t until its pc is not inside; a
// stub of ours it steps through may wait for room in its ring (drain:
// make some). It tells whether t left.
func (e *engine) stepOutOf(t *thread, inside func(uint64) bool, drain bool) bool {
	for i := 0; i < 100000; i++ {
		var regs unix.PtraceRegs
		if err := ptrace.GetRegs(t.tid, &regs); err != nil {
			// A thread we hold stopped always has readable registers.
			e.warn("detach: thread %d: registers unreadable after %d steps: %v (state %s)", t.tid, i, err, procfs.Status(t.tid)["State"])
			return false
		}
		if !inside(regs.Rip) {
			if i > 0 && len(t.proc.as.areas) > 0 {
				// The steps leave the trap flag set until the thread is
				// next resumed: the kernel clears it then, not when the
				// tracer dies. Killed before that, and after detach gave
				// the program its SIGTRAP disposition back, the thread's
				// next instruction killed it (TRAP_TRACE). One injected
				// getpid resumes it, in our code only.
				e.injectSyscall(t.tid, t.proc.as.areas[0].base, unix.SYS_GETPID)
			}
			return true
		}
		if drain && i > 0 && i%1000 == 0 {
			e.drainAll() // a full ring: make room
		}
		for stepped := false; !stepped; {
			if ptrace.Step(t.tid) != nil {
				return false
			}
			ws, err := ptrace.Wait(t.tid)
			switch {
			case err != nil || ws.Exited() || ws.Signaled():
				return false
			case !ws.Stopped():
			case ws.StopSignal() == unix.SIGTRAP && ptrace.Event(ws) == 0:
				stepped = true
			case ptrace.Event(ws) == 0 && !isJobStop(ws.StopSignal()):
				// A signal for the program: it gets it at the detach.
				t.pendingSig = int(ws.StopSignal())
			}
			// Another stop (a second interrupt of ours): step again. The
			// thread never runs free while its code is taken away.
		}
	}
	e.warn("thread %d did not leave the inline probes' code", t.tid)
	return false
}

// restoreReturns puts back the return addresses the stubs replaced on t's
// stack (from its shadow stack), innermost first, and empties the shadow
// stack.
func (e *engine) restoreReturns(t *thread, is *inlineSpace) {
	if slot, ok := is.TidSlot[t.tid]; ok {
		e.restoreReturnsIn(t.tid, is, slot)
	}
}

// restoreReturnsIn restores the return addresses of slot's shadow stack in
// the memory of task tid.
func (e *engine) restoreReturnsIn(tid int, is *inlineSpace, slot int) {
	e.restoreShadow(tid, is.State(slot), is.RetStub)
}

// restoreShadow puts back the return addresses listed in the shadow stack
// of the thread state at state where the return stub retstub still stands
// in for them, innermost first, and empties the shadow stack. An entry
// whose slot no longer holds retstub belongs to a frame that is gone.
func (e *engine) restoreShadow(tid int, state, retstub uint64) {
	e.restoreShadowEntries(tid, state, retstub)
	clearShadow(tid, state)
}

// clearShadow empties the shadow stack of the thread state at state.
func clearShadow(tid int, state uint64) {
	var w [8]byte
	ptrace.WriteMem(tid, state+stub.TDepth, w[:])
}

// restoreShadowEntries puts back what restoreShadow does, leaving the
// shadow stack as it is, and returns how many it put back.
func (e *engine) restoreShadowEntries(tid int, state, retstub uint64) int {
	sh := shadowAt(tid, state)
	if sh == nil {
		return 0
	}
	n := 0
	var w [8]byte
	done := map[uint64]bool{}
	for i := len(sh)/16 - 1; i >= 0; i-- {
		slotAddr := binary.LittleEndian.Uint64(sh[i*16:])
		orig := sh[i*16+8 : i*16+16]
		// A context component's mark (probe.S) is no part of the address.
		binary.LittleEndian.PutUint64(orig, binary.LittleEndian.Uint64(orig)&stub.AddrMask)
		if done[slotAddr] {
			continue
		}
		done[slotAddr] = true
		if ptrace.ReadMem(tid, slotAddr, w[:]) == nil && binary.LittleEndian.Uint64(w[:]) == retstub {
			if err := ptrace.WriteMem(tid, slotAddr, orig); err != nil {
				e.warn("thread %d: could not restore the return address at %#x: %v", tid, slotAddr, err)
			} else {
				n++
			}
		}
	}
	return n
}

// shadowOf reads slot's shadow stack in the memory of task tid; see
// shadowAt.
func shadowOf(tid int, is *inlineSpace, slot int) []byte { return shadowAt(tid, is.State(slot)) }

// shadowAt reads the shadow stack of the thread state at state in the
// memory of task tid: 16 bytes an entry (the return address's slot, the
// address with its marks), outermost first; nil if empty or unreadable.
func shadowAt(tid int, state uint64) []byte {
	var w [8]byte
	if ptrace.ReadMem(tid, state+stub.TDepth, w[:]) != nil {
		return nil
	}
	depth := binary.LittleEndian.Uint64(w[:])
	if depth == 0 || depth > stub.ShadowEntries {
		return nil
	}
	sh := make([]byte, depth*16)
	if ptrace.ReadMem(tid, state+stub.TShadow, sh) != nil {
		return nil
	}
	return sh
}

// detachInline takes the inline probes out of space as, every thread of
// it stopped: threads leave the stubs, functions get their bytes back,
// stacks their return addresses, and the data block and rings go.
func (e *engine) detachInline(tid int, as *space) {
	is := as.inl
	if is == nil {
		return
	}
	for slot := range is.Owner {
		e.drainSlot(is, slot)
	}
	var threads []*thread
	for _, t := range e.threads {
		if t.proc.as == as {
			threads = append(threads, t)
		}
	}
	for _, t := range threads {
		e.stepOut(t, is)
	}
	for slot := range is.Owner {
		e.drainSlot(is, slot)
	}
	is.ReadCounters(ptrace.Mem(tid).Read)
	e.inlineCounters(is)
	e.lastArcs(is)
	inPlace := is.InPlaceCalls()
	jumps := inPlaceJumps(as, is)
	e.unpatchInline(tid, as)
	for _, t := range threads {
		e.openFrameArgs(t, is)
		e.restoreReturns(t, is)
	}
	refs := 0
	if len(threads) > 0 {
		mods := e.unwindModules(threads[0].proc)
		for _, t := range threads {
			// With the returns back: a hijacked signal handler unwinds
			// to its signal frame only then.
			if len(inPlace) > 0 {
				e.rewindInPlace(t, inPlace, mods)
			}
			refs += e.stackRefs(t, as, mods)
		}
	}
	if refs > 0 {
		// Something on a live stack may still lead into the stubs: leave
		// them (and their data) mapped rather than pull them from under it.
		e.stats.StackRefs += refs
		e.warn("detach: %d frames would return into the inline probes' code: left mapped", refs)
		e.reaimInPlace(tid, as, jumps)
		as.keepAreas = true
		e.dropInline(is)
		as.inl = nil
		return
	}
	e.unmapInline(tid, as, is)
	e.dropInline(is)
	as.inl = nil
}

// stackRefs unwinds t's stack (return addresses, signal frames' saved
// pcs) and counts the frames that would go into the areas of as. Only
// these matter: a stale copy of an address in a dead local is never
// used.
func (e *engine) stackRefs(t *thread, as *space, mods []*unwind.Module) int {
	// Only the inline probes' code: a thread in a trap probe's
	// out-of-line slot is moved out after this (leaveArea).
	return e.framesInto(t, mods, as.inl.Inside, func(i int, f unwind.Frame) {
		e.warn("detach: thread %d frame %d: pc %s, returns to %s (return stub %#x)", t.tid, i,
			e.symbolize(as, f.PC), e.symbolize(as, f.RA), as.inl.RetStub)
	})
}

// framesInto unwinds t's stack and counts the frames whose pc or return
// address inside accepts; say, if not nil, is told of the first (of every
// one under debug).
func (e *engine) framesInto(t *thread, mods []*unwind.Module, inside func(uint64) bool, say func(int, unwind.Frame)) int {
	frames, ok := e.unwindThread(t, mods)
	if !ok {
		return 0
	}
	n := 0
	for i, f := range frames {
		if inside(f.PC) || inside(f.RA) {
			n++
			if say != nil && (debug || n == 1) {
				say(i, f)
			}
		}
	}
	return n
}

// dropInline forgets a space's rings (detached, exec'd or gone).
func (e *engine) dropInline(is *inlineSpace) {
	for i, x := range e.inl {
		if x == is {
			e.inl = append(e.inl[:i], e.inl[i+1:]...)
			break
		}
	}
	if is.Mem != nil {
		e.unmapRings(is.Mem)
		is.Mem = nil
	}
}

// inlineCounters adds a space's drop and stall counters to the stats.
func (e *engine) inlineCounters(is *inlineSpace) {
	e.stats.Rings.Unregistered += is.Unregistered
	is.Unregistered = 0
	if is.Mem == nil {
		return
	}
	for slot := range is.Owner {
		e.takeCounters(is, slot)
	}
}

// takeCounters moves a ring's drop and stall counters into the stats.
func (e *engine) takeCounters(is *inlineSpace, slot int) {
	r := is.Ring(slot)
	d, s, ticks, skipped := r.Counters()
	e.stats.Rings.Dropped += int64(d)
	e.stats.Context.OutsideCalls += int64(skipped)
	e.stats.Rings.Stalls += int64(s)
	e.stats.Rings.StallNs += int64(float64(ticks) * e.clock.NsPerTick())
	is.DropsSeen -= min(d, is.DropsSeen) // checkDrops counts the live rings' drops
	r.ResetCounters()
}
