package attach

import (
	"encoding/binary"

	"github.com/profile-dev/profile/attach/internal/ptrace"
	"github.com/profile-dev/profile/instrument"
	"github.com/profile-dev/profile/instrument/unwind"
)

// An entry patch may keep the call among a function's first bytes in
// place (instrument.Patch.InPlace): an indirect call in the patch's last
// bytes, run by the thread the trampoline sends there. Unlike the rest of
// a patch, those bytes run, so a thread may stand at them: stopped there
// (stepped through by a detach, whose Inside covers them, and before any
// other rewrite of the bytes: clearOf), or interrupted there by a
// signal whose handler still runs (its saved pc goes back to the original
// call once the returns are back: rewindInPlace). And a trampoline jumps
// there: a killed profiler's, which a thread inside its stubs would still
// reach after a later profiler gave the function its bytes back (or its
// own patch, other bytes there), so that thread is stepped out of the
// killed profiler's code first (stepOutOfLeftovers).

// rewindInPlace gives the signal frames on stopped thread t's stack that
// would resume at a call an entry patch kept in place (calls, from
// Space.InPlaceCalls: its bytes, and the original call's start) the
// original call's address instead: the same call, now that the patch is
// gone.
func (e *engine) rewindInPlace(t *thread, calls [][3]uint64, mods []*unwind.Module) {
	frames, ok := e.unwindThread(t, mods)
	if !ok {
		return
	}
	for i := 1; i < len(frames); i++ {
		pc := frames[i].PC
		for _, c := range calls {
			if pc < c[0] || pc >= c[1] || frames[i-1].RAAt == 0 {
				continue
			}
			var w [8]byte
			binary.LittleEndian.PutUint64(w[:], c[2])
			if err := ptrace.WriteMem(t.tid, frames[i-1].RAAt, w[:]); err != nil {
				e.warn("detach: thread %d: could not move the pc its signal handler returns to off %#x: %v", t.tid, pc, err)
			}
		}
	}
}

// inPlaceJump is code of ours that ends in a jump to a call an entry
// patch keeps in place: a trampoline or a fast path, [lo, hi), and the
// call (as Space.InPlaceCalls lists it).
type inPlaceJump struct {
	lo, hi uint64
	call   [3]uint64
}

// inPlaceJumps lists the trampolines and fast paths of is's entry patches
// that keep a call in place (before the patches go).
func inPlaceJumps(as *space, is *inlineSpace) []inPlaceJump {
	var out []inPlaceJump
	for _, p := range is.Patches {
		c, ok := p.InPlaceCall()
		if !ok {
			continue
		}
		out = append(out, inPlaceJump{p.TrampAt, p.TrampAt + uint64(len(p.Patch.Tramp)), c})
		if as.fast != nil && as.fast.fns[p.Fn] != nil {
			for _, b := range as.fast.fns[p.Fn].bodies {
				out = append(out, inPlaceJump{b[0], b[1], c})
			}
		}
	}
	return out
}

// reaimInPlace aims jumps (inPlaceJumps) at the original calls instead:
// the detach leaves our code mapped for a thread a signal handler holds
// in it (stackRefs), which will come out of it after the functions got
// their bytes back, where a jump to the kept call lands in the middle of
// the original one.
func (e *engine) reaimInPlace(tid int, as *space, jumps []inPlaceJump) {
	for _, j := range jumps {
		b := make([]byte, j.hi-j.lo)
		if ptrace.ReadMem(tid, j.lo, b) != nil {
			continue
		}
		if jump, ok := instrument.ReaimLastJump(b, j.lo, j.call[0], j.call[2]); ok {
			if err := ptrace.WriteMem(tid, j.hi-uint64(len(jump)), jump); err != nil {
				e.warn("detach: could not aim our code at %s's original call: %v", e.symbolize(as, j.call[2]), err)
			}
		}
	}
}
