package attach

import (
	"encoding/binary"

	"github.com/profile-dev/profile/attach/internal/ptrace"
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
