package attach

import (
	"encoding/binary"

	"github.com/profile-dev/profile/attach/internal/procfs"
	"github.com/profile-dev/profile/attach/internal/ptrace"
	"github.com/profile-dev/profile/instrument"
)

// A stopped thread resumes at more places than its rip: its frames'
// return addresses, and the pc a signal handler still running returns
// to, which may be any instruction of the program, also one inside the
// first bytes of a function about to be patched (a handler that waits
// for a lock or a pipe while the profiler attaches). Patched there, the
// thread would resume in the middle of the entry's jump. So a pass that
// writes patches notes them first (noteResumes): a patch whose bytes hold
// one past their first is refused (patchInline, patchCallEntry, planExits;
// the function takes its probe at its call sites or a trap instead, or
// keeps its returns hijacked), and a killed profiler's
// patch undone under one moves it to the start of the file's instruction
// holding it (rewindResumes): what ran there was a call the patch kept in
// place.

// errResumesInside refuses a patch over a noted resume point.
var errResumesInside = prologueRefused{"a signal handler still running returns inside its first bytes"}

// resumePoint is a pc a stopped thread's stack resumes at beyond its rip,
// and the stack word holding it (0: none read).
type resumePoint struct{ pc, at uint64 }

// noteResumes unwinds every stopped thread of as and notes where its
// frames resume (as.resumes).
func (e *engine) noteResumes(as *space) {
	as.resumes = as.resumes[:0]
	for _, t := range e.threads {
		if t.proc.as != as {
			continue
		}
		frames, ok := e.unwindThread(t, e.unwindModules(t.proc))
		if !ok {
			continue
		}
		for i := 1; i < len(frames); i++ {
			as.resumes = append(as.resumes, resumePoint{frames[i].PC, frames[i-1].RAAt})
		}
	}
}

// resumesInside tells whether a noted resume point lies in the n bytes at
// at past the first.
func (s *space) resumesInside(at uint64, n int) bool {
	for _, r := range s.resumes {
		if r.pc > at && r.pc < at+uint64(n) {
			return true
		}
	}
	return false
}

// rewindResumes moves each noted resume point in the n bytes at addr past
// the first, a killed profiler's patch about to be undone, whose bytes
// are cur and the file's code, to the start of the file's instruction
// holding it: only where the patch holds an in-place call ending where
// that instruction ends (the same call, now that the patch is gone).
func (e *engine) rewindResumes(tid int, as *space, addr uint64, n int, cur, code []byte) {
	for i, r := range as.resumes {
		if r.pc <= addr || r.pc >= addr+uint64(n) || r.at == 0 {
			continue
		}
		off := int(r.pc - addr)
		start, k, ok := instrument.InstAt(code, off)
		if !ok || off+instrument.InPlaceLen(cur[off:]) != start+k {
			e.warn("pid %d: a signal handler returns to %#x, inside a killed profiler's patch of %s: left there",
				procfs.Tgid(tid), r.pc, e.symbolize(as, addr))
			continue
		}
		var w [8]byte
		binary.LittleEndian.PutUint64(w[:], addr+uint64(start))
		if err := ptrace.WriteMem(tid, r.at, w[:]); err != nil {
			e.warn("pid %d: could not move the pc a signal handler returns to off %#x: %v", procfs.Tgid(tid), r.pc, err)
			continue
		}
		as.resumes[i].pc = addr + uint64(start)
	}
}
