package attach

import (
	"encoding/binary"
	"math"

	"github.com/profile-dev/profile/attach/internal/procfs"
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
// there: one a killed profiler left, which a thread inside its stubs may
// still reach after a later profiler gave the function its bytes back, is
// re-aimed at the original call first (reaimOldJumps).

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

// undoInPlace is called before a killed profiler's patch at addr comes
// back to its file's bytes (file; cur as it is, n bytes differing): if
// it ends in a call kept in place, the jumps of that profiler's code to it
// go to the original call instead.
func (e *engine) undoInPlace(tid int, as *space, addr uint64, cur, file []byte, n int) {
	for _, k := range []int{3, 4} {
		if n >= k+5 && instrument.InPlaceLen(cur[n-k:n]) == k && file[n-5] == 0xe8 {
			e.reaimOldJumps(tid, as, addr+uint64(n-k), addr+uint64(n-5))
			return
		}
	}
}

// reaimOldJumps re-aims every jmp rel32 in the executable memory of no
// file that is not ours (a killed profiler's trampolines and fast paths)
// from from to to. The jumps are found in one scan per pass undoing its patches.
func (e *engine) reaimOldJumps(tid int, as *space, from, to uint64) {
	if as.oldJumps == nil {
		as.oldJumps = map[uint64][]uint64{}
		maps, err := instrument.ReadMaps(procfs.Tgid(tid))
		if err != nil {
			return
		}
		for _, m := range maps {
			if !m.Exec() || m.Path != "" {
				continue
			}
			for _, part := range as.foreignParts(m.Start, m.End) {
				b := make([]byte, part[1]-part[0])
				if ptrace.ReadMem(tid, part[0], b) != nil {
					continue
				}
				for i := 0; i+5 <= len(b); i++ {
					if b[i] == 0xe9 {
						at := part[0] + uint64(i)
						target := at + 5 + uint64(int64(int32(binary.LittleEndian.Uint32(b[i+1:]))))
						as.oldJumps[target] = append(as.oldJumps[target], at+1)
					}
				}
			}
		}
	}
	for _, at := range as.oldJumps[from] {
		d := int64(to) - int64(at+4)
		if d < math.MinInt32 || d > math.MaxInt32 {
			continue
		}
		var w [4]byte
		binary.LittleEndian.PutUint32(w[:], uint32(int32(d)))
		if err := ptrace.WriteMem(tid, at, w[:]); err != nil {
			e.warn("a killed profiler's jump at %#x to a call kept in place: %v", at-1, err)
		}
	}
	delete(as.oldJumps, from)
}
