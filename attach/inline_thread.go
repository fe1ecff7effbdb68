package attach

import (
	"encoding/binary"

	"golang.org/x/sys/unix"

	"github.com/profile-dev/profile/attach/internal/ptrace"
	"github.com/profile-dev/profile/attach/internal/stub"
	"github.com/profile-dev/profile/instrument"
)

// registerInline gives stopped thread t a ring and a shadow stack before it
// runs a probed function: a state block, found by the stubs through the
// table entry of its thread pointer. A thread without one (no thread
// pointer, no free slot) runs probed functions untraced, counted.
func (e *engine) registerInline(t *thread) {
	is := t.proc.as.inl
	if is == nil {
		return
	}
	if _, ok := is.TidSlot[t.tid]; ok {
		return
	}
	var regs unix.PtraceRegs
	if ptrace.GetRegs(t.tid, &regs) != nil || regs.Fs_base == 0 {
		return
	}
	slot, ok := is.Alloc()
	if !ok {
		return
	}
	lo, hi := threadStack(t.proc.pid, regs.Rsp)
	if hi != 0 {
		e.s.SetStack(t.st, lo, hi)
	}
	state := is.State(slot)
	var hdr [stub.TShadow]byte
	binary.LittleEndian.PutUint64(hdr[stub.TRing:], is.Rings+uint64(slot)*stub.RingStride)
	binary.LittleEndian.PutUint64(hdr[stub.TStackLo:], lo)
	binary.LittleEndian.PutUint64(hdr[stub.TStackHi:], hi)
	binary.LittleEndian.PutUint64(hdr[stub.TCap:], stub.ShadowEntries)
	if is.DataLen > stub.DataSize {
		binary.LittleEndian.PutUint64(hdr[stub.TSide:], is.Data+stub.DSides+uint64(slot)*stub.SideSize)
	}
	if ptrace.WriteMem(t.tid, state, hdr[:]) != nil {
		is.Release(slot)
		return
	}
	is.Ring(slot).Reset()
	if !is.Insert(regs.Fs_base, state, ptrace.Mem(t.tid).Write) {
		is.Release(slot)
		return
	}
	is.Assign(slot, t.tid, regs.Fs_base, t)
}

// unregisterInline frees t's slot once its ring is drained: the thread is
// exiting (or gone) and runs no more user code. Its table entry keeps the
// key with state 0.
func (e *engine) unregisterInline(t *thread) {
	is := t.proc.as.inl
	if is == nil {
		return
	}
	slot, ok := is.TidSlot[t.tid]
	if !ok {
		return
	}
	e.drainSlot(is, slot)
	is.ReadCounters(ptrace.Mem(t.tid).Read)
	if _, vf := is.VForks[t.tid]; !vf {
		// A vfork child's entry is its parent's: VFORK_DONE gives it back.
		if at, ok := is.StateOf(is.TidFS[t.tid]); ok {
			var w [8]byte
			if ptrace.WriteMem(t.tid, at, w[:]) != nil {
				ptrace.WriteMem(t.proc.pid, at, w[:])
			}
		}
	}
	e.freeSlot(is, t.tid, slot)
}

// freeSlot returns a drained slot, adding up its counters.
func (e *engine) freeSlot(is *inlineSpace, tid, slot int) {
	e.takeCounters(is, slot)
	e.takeArcsOf(is, slot, is.Owner[slot])
	e.releaseCounts(is, slot)
	is.Free(tid, slot)
}

// threadStack returns the stack mapping holding sp. The main thread's
// stack grows: its low end is taken as far as the stack limit allows.
func threadStack(pid int, sp uint64) (lo, hi uint64) {
	maps, err := instrument.ReadMaps(pid)
	if err != nil {
		return 0, 0
	}
	for _, m := range maps {
		if sp >= m.Start && sp < m.End {
			lo, hi = m.Start, m.End
			if m.Path == "[stack]" {
				var rl unix.Rlimit
				lim := uint64(8 << 20)
				if unix.Prlimit(pid, unix.RLIMIT_STACK, nil, &rl) == nil && rl.Cur < 1<<40 {
					lim = rl.Cur
				}
				if hi > lim && hi-lim < lo {
					lo = hi - lim
				}
			}
			return lo, hi
		}
	}
	return 0, 0
}

// shadowDepth returns the address of stopped thread t's state block and
// its shadow stack's depth.
func shadowDepth(t *thread) (state, depth uint64, ok bool) {
	state, ok = threadState(t)
	if !ok {
		return 0, 0, false
	}
	var w [8]byte
	if ptrace.ReadMem(t.tid, state+stub.TDepth, w[:]) != nil {
		return 0, 0, false
	}
	return state, binary.LittleEndian.Uint64(w[:]), true
}

// hijackInFlight makes the frame of an inline-probed function that was
// already running at attach return through the return stub, as if its
// entry had been probed: its return address at sp goes on t's shadow
// stack (outermost frames first).
func (e *engine) hijackInFlight(t *thread, sp, ret uint64) bool {
	is := t.proc.as.inl
	state, depth, ok := shadowDepth(t)
	if !ok || depth >= stub.ShadowEntries {
		return false
	}
	var w [16]byte
	binary.LittleEndian.PutUint64(w[:], sp)
	// No call from the stubs' via made this frame: its return goes back
	// by a jump (probe.S), as the CPU's return stack buffer has no entry
	// for the return stub.
	binary.LittleEndian.PutUint64(w[8:], ret|stub.InFlightMark)
	if ptrace.WriteMem(t.tid, state+stub.TShadow+depth*16, w[:]) != nil {
		return false
	}
	binary.LittleEndian.PutUint64(w[:8], depth+1)
	if ptrace.WriteMem(t.tid, state+stub.TDepth, w[:8]) != nil {
		return false
	}
	binary.LittleEndian.PutUint64(w[:8], is.RetStub)
	return ptrace.WriteMem(t.tid, sp, w[:8]) == nil
}
