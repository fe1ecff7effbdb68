package attach

import (
	"cmp"
	"slices"

	"golang.org/x/sys/unix"

	"github.com/profile-dev/profile/attach/internal/heal"
	"github.com/profile-dev/profile/attach/internal/procfs"
	"github.com/profile-dev/profile/attach/internal/ptrace"
	"github.com/profile-dev/profile/instrument"
)

// What a profiler killed while attached leaves in its target, and a later
// attach puts right before it writes anything of its own: its inline
// patches (undoLeftover), the int3s its heal table lists, its heal handler
// as the process's SIGTRAP disposition, and its injection chain in text
// slack. Its areas go once nothing reaches them (reclaim.go).

// healLeftover looks at act, the process's SIGTRAP disposition: while it
// is the heal handler of a killed profiler (its area starts with our
// code), the int3s its table lists that are still in place get their old
// bytes back (undoHealTable), and the disposition that handler kept is the
// next to look at. It returns the
// program's own, which ours then chains to and detach restores.
func (e *engine) healLeftover(tid int, as *space, act heal.SigAction) heal.SigAction {
	maps, err := instrument.ReadMaps(procfs.Tgid(tid))
	if err != nil {
		return act
	}
	for range 8 {
		base := act.Handler
		if !heal.At(tid, base) {
			return act
		}
		e.undoHealTable(tid, as, maps, base)
		old, ok := heal.OldOf(tid, base)
		if !ok {
			return act
		}
		act = old
		e.stats.Leftover.Handlers++
		as.oldHeals = append(as.oldHeals, base)
	}
	return act
}

// undoHealTable takes out the int3s the heal table at base lists that are
// still in place. Only code mapped from a file is written.
func (e *engine) undoHealTable(tid int, as *space, maps []instrument.Mapping, base uint64) {
	byteAt := func(addr uint64) (byte, bool) {
		if !inFileCode(maps, addr) {
			return 0, false
		}
		if _, ours := as.bps[addr]; ours {
			return 0, false
		}
		var cur [1]byte
		return cur[0], as.readText(tid, addr, cur[:]) == nil
	}
	for _, block := range healUndo(heal.Entries(tid, base), byteAt) {
		for _, ent := range block {
			as.pokeText(tid, ent.Addr, []byte{ent.Orig})
		}
		e.stats.Leftover.Int3s++
	}
}

// healUndo lists what a later attach puts back of a killed profiler's heal
// table, each block in write order. An entry is a breakpoint's byte, or
// the first byte of a rewrite of a function's first bytes (an inline patch
// put in or taken out) the profiler was killed in, guarded by an int3 on
// that byte, with the rewrite's other bytes (Tail) listed last first just
// before it: they get their old bytes back before the guard does (the
// function then has a whole state, which the scan takes out if it is a
// patch). A guard or breakpoint whose byte is no longer an int3 was healed
// or finished, and may have been patched since: it is left alone, its
// tail with it, whatever bytes that holds (an immediate's 0xcc is no
// guard). byteAt reads a byte the attach may write.
func healUndo(table []heal.Entry, byteAt func(uint64) (byte, bool)) [][]heal.Entry {
	var out [][]heal.Entry
	for i, ent := range table {
		if !ent.Live || ent.Tail {
			continue
		}
		if cur, ok := byteAt(ent.Addr); !ok || cur != 0xcc {
			continue
		}
		var block []heal.Entry
		for j, k := i-1, uint64(1); j >= 0; j, k = j-1, k+1 {
			o := table[j]
			if !o.Tail || o.Addr != ent.Addr+k || !o.Live {
				break
			}
			block = append(block, o)
		}
		out = append(out, append(block, ent))
	}
	return out
}

// inFileCode tells whether addr lies in an executable mapping of a file.
func inFileCode(maps []instrument.Mapping, addr uint64) bool {
	for _, m := range maps {
		if addr >= m.Start && addr < m.End {
			return m.Exec() && m.FileBacked()
		}
	}
	return false
}

// foreignCode tells whether maps hold anonymous executable memory that is
// none of ours (our areas, the heal area): where a killed profiler's
// trampolines and stubs would be, or a JIT's code.
func (s *space) foreignCode(maps []instrument.Mapping) bool {
	for _, m := range maps {
		if m.Exec() && m.Path == "" && len(s.foreignParts(m.Start, m.End)) > 0 {
			return true
		}
	}
	return false
}

// stepOutOfLeftovers single-steps every stopped thread of as that stands
// in a killed profiler's code (findLeftovers) out of it, before any of its
// patches is undone: its trampolines end in jumps back into the
// functions' first bytes (past its patch, or to a call it kept in place
// there), which are about to become the file's again, or this profiler's
// patch. A thread stepped to such a call stands in the patch's bytes:
// clearOf steps it through the call before they change. Its return stub
// leaves by the real return address; a stub waiting on a full ring is
// told first that its tracer is gone (stepped through the wait, a thread
// stood in it until the stall limit, seconds, and the attach with it).
func (e *engine) stepOutOfLeftovers(tid int, as *space, maps []instrument.Mapping) {
	l := e.findLeftovers(tid, as, maps)
	l.silence(tid)
	old := l.code
	in := func(pc uint64) bool {
		return slices.ContainsFunc(old, func(r [2]uint64) bool { return pc >= r[0] && pc < r[1] })
	}
	for _, t := range e.threads {
		var regs unix.PtraceRegs
		if t.proc.as != as || ptrace.GetRegs(t.tid, &regs) != nil || !in(regs.Rip) {
			continue
		}
		e.stepOutOf(t, in, false) // it warns if the thread stays
	}
}

// foreignParts returns the parts of lo..hi that are none of our code
// areas: a mapping of ours the kernel merged with a neighbour of the same
// kind (a killed profiler's heal area beside ours) is one line in the
// maps.
func (s *space) foreignParts(lo, hi uint64) [][2]uint64 {
	ours := s.ourCode()
	slices.SortFunc(ours, func(a, b [2]uint64) int { return cmp.Compare(a[0], b[0]) })
	var parts [][2]uint64
	for _, o := range ours {
		if o[1] <= lo || o[0] >= hi {
			continue
		}
		if o[0] > lo {
			parts = append(parts, [2]uint64{lo, o[0]})
		}
		lo = max(lo, o[1])
	}
	if lo < hi {
		parts = append(parts, [2]uint64{lo, hi})
	}
	return parts
}
