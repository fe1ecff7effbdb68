package attach

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/profile-dev/profile/attach/internal/heal"
	"github.com/profile-dev/profile/attach/internal/inject"
	"github.com/profile-dev/profile/attach/internal/procfs"
	"github.com/profile-dev/profile/attach/internal/ptrace"
	"github.com/profile-dev/profile/attach/internal/stub"
	"github.com/profile-dev/profile/instrument"

	"golang.org/x/sys/unix"
)

// What a killed profiler left mapped in its target: its heal areas, its
// out-of-line areas (inject site, stubs, trampolines, out-of-line slots),
// its inline data blocks and memfds of rings. A later attach unmaps them,
// after undoing the patches that led into them, once nothing can reach
// them: no jump or call left in the program's code into them, no thread in
// their code (one inside leaves by itself), no return address on a live
// stack into them (a stub's replaced return addresses go back first, from
// each thread's shadow stack, found as the stub finds it: by the thread
// pointer in the block's table). Whatever still reaches them keeps them
// all mapped, for a later attach to try again.

// leftovers is what one scan found of killed profilers' memory.
type leftovers struct {
	code   [][2]uint64 // heal areas and out-of-line areas
	heals  map[uint64]bool
	blocks []oldBlock
	rings  [][2]uint64
}

// oldBlock is a killed profiler's inline data block.
type oldBlock struct {
	base, size, retstub uint64
}

func (l *leftovers) inCode(pc uint64) bool {
	for _, r := range l.code {
		if pc >= r[0] && pc < r[1] {
			return true
		}
	}
	return false
}

func (l *leftovers) areas() int { return len(l.code) + len(l.blocks) + len(l.rings) }

// silence tells the stubs of every block in l that their tracer is gone:
// they record nothing from then on, and a thread waiting in one for room
// in a full ring (nobody drains a killed tracer's rings) leaves it at its
// next look instead of after the stall limit's seconds.
func (l *leftovers) silence(tid int) {
	var one [8]byte
	binary.LittleEndian.PutUint64(one[:], 1)
	for _, b := range l.blocks {
		ptrace.WriteMem(tid, b.base+stub.DDropping, one[:])
	}
}

// quietHeals tells the addresses in heal areas no thread is inside
// (heal.InUse 0): a stack's copy of one (the handler's restorer, heal's
// return address) was left by a handler run that is over, in a slot the
// program has not written since, and returns nowhere. Every later deeper
// call chain may keep such a slot; taken for live, it kept the areas of
// every profiler killed after it mapped (make stress: 504 after 200
// kills). A heal area of other code (no such count) is never quiet.
func (l *leftovers) quietHeals(tid int) func(uint64) bool {
	var quiet [][2]uint64
	for base := range l.heals {
		var w [8]byte
		if heal.At(tid, base) && ptrace.ReadMem(tid, heal.InUse(base), w[:]) == nil && binary.LittleEndian.Uint64(w[:]) == 0 {
			quiet = append(quiet, [2]uint64{base, base + heal.Size})
		}
	}
	return func(v uint64) bool {
		return slices.ContainsFunc(quiet, func(r [2]uint64) bool { return v >= r[0] && v < r[1] })
	}
}

// atTrampBody tells whether v, in a killed profiler's code, is where one of
// its trampolines goes on behind `je via` (instrument.PlanPatch): the
// entry stub leaves that address in the red zone for via's call, and the
// program's frames may later hold the word unwritten. No return address
// is one (a je comes before it, not a call), and a thread jumping there
// runs in the code, which keeps it anyway.
func atTrampBody(tid int, v uint64) bool {
	var je [6]byte
	if v < 6 || ptrace.ReadMem(tid, v-6, je[:]) != nil || je[0] != 0x0f || je[1] != 0x84 {
		return false
	}
	var via [2]byte
	to := v + uint64(int64(int32(binary.LittleEndian.Uint32(je[2:]))))
	return ptrace.ReadMem(tid, to, via[:]) == nil && via == [2]byte{0xff, 0x25}
}

// atExitTramp tells whether v is where an exit trampoline's call of its
// stub returns (a call of exitsite before it, a ret after it; or of
// tailsite, a jmp after it): a stale slot of a frame long gone, as for
// atTrampBody.
func atExitTramp(tid int, v uint64) bool {
	var b [6]byte
	if v < 5 || ptrace.ReadMem(tid, v-5, b[:]) != nil || b[0] != 0xe8 || b[5] != 0xc3 && b[5] != 0xe9 {
		return false
	}
	to := v + uint64(int64(int32(binary.LittleEndian.Uint32(b[1:5]))))
	var head [16]byte
	return ptrace.ReadMem(tid, to, head[:]) == nil && stub.IsExitStub(head[:])
}

// maxLeftoverArea bounds what a heal table's area entry may span: ours are
// areaSize, an entry beyond this is not one of them.
const maxLeftoverArea = 64 << 20

// findLeftovers lists the killed profilers' areas in the space of stopped
// thread tid. Code: the heal areas healLeftover met in the SIGTRAP chain,
// and any executable anonymous mapping not ours that starts with our heal
// code (one a later profiler, killed too, dropped from the chain) or our
// inject site, or holds a copy of our entry stub, and the areas a heal
// area lists. Data: the blocks the stubs point to or that hold the rings'
// name where we write it, and every memfd of rings not ours.
func (e *engine) findLeftovers(tid int, as *space, maps []instrument.Mapping) *leftovers {
	l := &leftovers{heals: map[uint64]bool{}}
	add := func(lo, hi uint64) bool {
		if hi > lo && hi-lo <= maxLeftoverArea && !as.ours(lo, hi) && anonExec(maps, lo, hi) &&
			!slices.ContainsFunc(l.code, func(r [2]uint64) bool { return r[0] < hi && lo < r[1] }) {
			l.code = append(l.code, [2]uint64{lo, hi})
			return true
		}
		return false
	}
	for _, h := range as.oldHeals {
		if add(h, h+heal.Size) {
			l.heals[h] = true
		}
	}
	head := make([]byte, heal.HeadSize)
	for _, m := range maps {
		if !m.Exec() || m.Path != "" {
			continue
		}
		for _, r := range as.foreignParts(m.Start, m.End) {
			heals, lo := healsIn(ptrace.Mem(tid), r[0], r[1])
			hi := r[1]
			for _, h := range heals {
				if add(h, h+heal.Size) {
					l.heals[h] = true
				}
			}
			if lo == hi || hi-lo > maxLeftoverArea || ptrace.ReadMem(tid, lo, head) != nil {
				continue
			}
			switch {
			case hi-lo == areaSize && bytes.HasPrefix(head, inject.SyscallTrap):
				add(lo, hi)
			default:
				if e.findBlocks(tid, as, maps, l, lo, hi) {
					add(lo, hi)
				}
			}
		}
	}
	// The areas the heal areas list.
	for _, r := range slices.Clone(l.code) {
		if !l.heals[r[0]] {
			continue
		}
		for _, a := range heal.Listed(tid, r[0]) {
			add(a[0], a[1])
		}
	}
	for _, r := range l.code {
		if !l.heals[r[0]] {
			e.findBlocks(tid, as, maps, l, r[0], r[1])
		}
	}
	// Blocks whose stubs were never written, and rings of no block found.
	name := make([]byte, len(stub.RingsName))
	for _, m := range maps {
		if m.Path == ringsMapping && !as.ours(m.Start, m.End) && !slices.Contains(l.rings, [2]uint64{m.Start, m.End}) {
			l.rings = append(l.rings, [2]uint64{m.Start, m.End})
		}
		size := m.End - m.Start
		if m.Path != "" || m.Exec() || size != stub.DataSize && size != stub.DataSize+stub.SidesSize || as.ours(m.Start, m.End) ||
			slices.ContainsFunc(l.blocks, func(b oldBlock) bool { return b.base == m.Start }) {
			continue
		}
		var w [8]byte
		if ptrace.ReadMem(tid, m.Start+stub.DName, name) == nil && string(name) == stub.RingsName && ptrace.ReadMem(tid, m.Start+stub.DRetstub, w[:]) == nil {
			b := oldBlock{base: m.Start, size: size, retstub: binary.LittleEndian.Uint64(w[:])}
			l.blocks = append(l.blocks, b)
			e.findRings(tid, as, maps, l, b)
		}
	}
	return l
}

// findBlocks looks for entry stubs in lo..hi (copies of our probe code at
// 64-byte boundaries, each holding its data block's address), adds their
// data blocks and rings to l, and tells whether there was one.
func (e *engine) findBlocks(tid int, as *space, maps []instrument.Mapping, l *leftovers, lo, hi uint64) bool {
	mem := make([]byte, hi-lo)
	if ptrace.ReadMem(tid, lo, mem) != nil {
		return false
	}
	found := false
	for off := 0; off+stub.Len() <= len(mem); off += 64 {
		if !stub.IsCopy(mem[off:]) {
			continue
		}
		found = true
		data := binary.LittleEndian.Uint64(mem[off+stub.DataPtr:])
		if slices.ContainsFunc(l.blocks, func(b oldBlock) bool { return b.base == data }) {
			continue
		}
		var hdr [stub.DDefer + 8]byte
		name := make([]byte, len(stub.RingsName))
		if ptrace.ReadMem(tid, data, hdr[:]) != nil || ptrace.ReadMem(tid, data+stub.DName, name) != nil || string(name) != stub.RingsName {
			continue
		}
		b := oldBlock{base: data, size: stub.DataSize, retstub: binary.LittleEndian.Uint64(hdr[stub.DRetstub:])}
		if binary.LittleEndian.Uint64(hdr[stub.DDefer:]) != 0 {
			b.size += stub.SidesSize
		}
		if as.ours(b.base, b.base+b.size) || !anonymous(maps, b.base, b.base+b.size) {
			continue
		}
		l.blocks = append(l.blocks, b)
		e.findRings(tid, as, maps, l, b)
	}
	return found
}

// findRings adds the memfds of rings the threads of block b wrote: each
// slot's state names its ring. A ring a killed detach unmapped leaves its
// address in the state, where our own rings may now be mapped (make
// stress lost servers to that: our stubs' rings unmapped under them).
func (e *engine) findRings(tid int, as *space, maps []instrument.Mapping, l *leftovers, b oldBlock) {
	var w [8]byte
	for slot := range stub.MaxSlots {
		if ptrace.ReadMem(tid, b.base+stub.DStates+uint64(slot)*stub.StateSize+stub.TRing, w[:]) != nil {
			return
		}
		r := binary.LittleEndian.Uint64(w[:])
		if r == 0 {
			continue
		}
		for _, m := range maps {
			if r >= m.Start && r < m.End && m.Path == ringsMapping && !as.ours(m.Start, m.End) {
				if !slices.Contains(l.rings, [2]uint64{m.Start, m.End}) {
					l.rings = append(l.rings, [2]uint64{m.Start, m.End})
				}
				break
			}
		}
	}
}

// ringsMapping is how /proc/PID/maps names the memfd of rings.
const ringsMapping = "/memfd:profile-rings (deleted)"

// anonymous tells whether every mapping overlapping lo..hi is anonymous:
// a range that held our area and now holds a file is not ours to unmap.
func anonymous(maps []instrument.Mapping, lo, hi uint64) bool {
	found := false
	for _, m := range maps {
		if m.Start < hi && lo < m.End {
			if m.Path != "" {
				return false
			}
			found = true
		}
	}
	return found
}

// anonExec tells whether lo..hi is wholly mapped, anonymous and
// executable, as our code areas are: a heal area's list may name a range
// whose area a detach unmapped and the program's own data took since.
func anonExec(maps []instrument.Mapping, lo, hi uint64) bool {
	at := lo
	for _, m := range maps {
		if m.End <= at || m.Start >= hi {
			continue
		}
		if m.Start > at || m.Path != "" || !m.Exec() {
			return false
		}
		at = m.End
		if at >= hi {
			return true
		}
	}
	return false
}

// ours tells whether lo..hi overlaps one of our areas, our heal area or
// our inline data and rings.
func (s *space) ours(lo, hi uint64) bool {
	mapped := s.ourCode()
	if s.inl != nil {
		mapped = append(mapped, [2]uint64{s.inl.Data, s.inl.Data + s.inl.DataLen}, [2]uint64{s.inl.Rings, s.inl.Rings + stub.RingsSize})
	}
	return slices.ContainsFunc(mapped, func(r [2]uint64) bool { return r[1] > r[0] && lo < r[1] && r[0] < hi })
}

// ourCode is our executable areas in s: the out-of-line areas and the
// heal area.
func (s *space) ourCode() [][2]uint64 {
	var out [][2]uint64
	for _, a := range s.areas {
		out = append(out, [2]uint64{a.base, a.base + a.size})
	}
	if s.heal != nil {
		out = append(out, [2]uint64{s.heal.Base, s.heal.Base + heal.Size})
	}
	return out
}

// reclaimLeftovers unmaps what killed profilers left in process p (every
// thread of it stopped), once the leftover patches are undone and nothing
// reaches it; it says why when something still does.
func (e *engine) reclaimLeftovers(tid int, p *process, maps []instrument.Mapping) {
	as := p.as
	l := e.findLeftovers(tid, as, maps)
	if l.areas() == 0 {
		return
	}
	var threads []*thread
	for _, t := range e.threads {
		if t.proc == p {
			threads = append(threads, t)
		}
	}
	keep := func(why string) {
		e.stats.Leftover.Kept = l.areas()
		e.stats.Leftover.Why = why
		as.leftoverKept = true
	}
	if at, ok := jumpInto(tid, as, maps, l); !ok {
		keep(fmt.Sprintf("the code at %#x (%s) still jumps into them", at, fileOffset(maps, at)))
		return
	}
	l.silence(tid)
	for _, t := range threads {
		var regs unix.PtraceRegs
		if ptrace.GetRegs(t.tid, &regs) != nil {
			keep(fmt.Sprintf("thread %d's registers are unreadable", t.tid))
			return
		}
		// A thread in them is left to leave by itself: stepped out, a
		// thread in a killed profiler's heal handler (SIGTRAP blocked)
		// had the step's trap forced on it, which reset the process's
		// SIGTRAP disposition to SIG_DFL, and stepping that handler
		// through its table held the process for seconds; make stress
		// lost servers both ways. A later attach tries again.
		if l.inCode(regs.Rip) {
			keep(fmt.Sprintf("thread %d runs in them", t.tid))
			return
		}
	}
	for _, t := range threads {
		var regs unix.PtraceRegs
		if ptrace.GetRegs(t.tid, &regs) != nil {
			keep(fmt.Sprintf("thread %d's registers are unreadable", t.tid))
			return
		}
		e.restoreOldReturns(t.tid, l, regs.Fs_base)
	}
	mods := e.unwindModules(p)
	heals := l.quietHeals(tid)
	quiet := func(v uint64) bool { return heals(v) || atTrampBody(tid, v) || atExitTramp(tid, v) }
	for _, t := range threads {
		if n := e.framesInto(t, mods, l.inCode, nil); n > 0 {
			keep(fmt.Sprintf("%d frames of thread %d return into them", n, t.tid))
			return
		}
		if at, v, ok := stackHolds(t.tid, maps, l, quiet); ok {
			keep(fmt.Sprintf("thread %d's stack holds an address in them, %#x, at %#x", t.tid, v, at))
			return
		}
	}
	// Data first, the heal areas last: killed in between, we leave what
	// a later attach finds (an area may be known only from its stubs or
	// a heal area's list).
	site := as.areas[0].base
	for _, r := range l.rings {
		e.unmap(tid, site, r[0], r[1]-r[0])
	}
	for _, b := range l.blocks {
		e.unmap(tid, site, b.base, b.size)
	}
	for _, last := range []bool{false, true} {
		for _, r := range l.code {
			if l.heals[r[0]] == last {
				e.unmap(tid, site, r[0], r[1]-r[0])
			}
		}
	}
	e.stats.Leftover.Areas = l.areas()
}

// oldState finds the state of the thread whose thread pointer is fs in
// block b's table, as the stubs do (LOOKUP in probe.S).
func oldState(tid int, b oldBlock, fs uint64) (uint64, bool) {
	if fs == 0 {
		return 0, false
	}
	var ent [16]byte
	idx := stub.TableHash(fs)
	for range stub.TableSize {
		if ptrace.ReadMem(tid, b.base+stub.DTable+uint64(idx)*16, ent[:]) != nil {
			return 0, false
		}
		switch binary.LittleEndian.Uint64(ent[:]) {
		case fs:
			state := binary.LittleEndian.Uint64(ent[8:])
			return state, state >= b.base+stub.DStates && state < b.base+stub.DataSize
		case 0:
			return 0, false
		}
		idx = (idx + 1) % stub.TableSize
	}
	return 0, false
}

// jumpInto looks in the executable file mappings for code that differs
// from its file and jumps or calls into l's code (a patch not undone:
// one in a module this attach does not trace). It returns where, and
// false, if there is one.
func jumpInto(tid int, as *space, maps []instrument.Mapping, l *leftovers) (uint64, bool) {
	for _, m := range maps {
		got, want, ok := textAndFile(tid, as, maps, m)
		if !ok {
			continue
		}
		if k, _, found := changedBranch(got, want, m.Start, 0, l.inCode); found {
			return m.Start + uint64(k), false
		}
	}
	return 0, true
}

// fileOffset names address addr of a file mapping by its file and offset
// there ("redis-check-rdb+0x60f00"), which a symbol table or objdump
// looks up.
func fileOffset(maps []instrument.Mapping, addr uint64) string {
	for _, m := range maps {
		if addr >= m.Start && addr < m.End && m.Path != "" {
			return fmt.Sprintf("%s+%#x", baseName(m.Path), addr-m.Start+m.Offset)
		}
	}
	return "no file's"
}

// changedBranch finds, from offset from on, the first rel32 call, jmp or
// jcc of text got (at base) that covers a byte differing from the file's
// want and whose target into accepts: its offset and length.
func changedBranch(got, want []byte, base uint64, from int, into func(uint64) bool) (k, n int, found bool) {
	for i := from; i < len(got); i++ {
		if got[i] == want[i] {
			continue
		}
		for k := max(from, i-5); k <= i; k++ {
			n := instrument.BranchLen(got[k:])
			if n == 0 || k+n <= i {
				continue
			}
			at := base + uint64(k)
			if into(at + uint64(n) + uint64(int64(int32(binary.LittleEndian.Uint32(got[k+n-4:]))))) {
				return k, n, true
			}
		}
	}
	return 0, 0, false
}

// textAndFile reads executable file mapping m of space as (stopped thread
// tid's) as it is in memory, or will be once the writes its scan holds
// pending go in, and as its file has it; false for any other mapping or
// one unreadable. (Read as memory holds it, the leftover patches a scan
// had undone still jumped into their areas, and every attach to a server
// a profiler was killed in kept them mapped.)
func textAndFile(tid int, as *space, maps []instrument.Mapping, m instrument.Mapping) (got, want []byte, ok bool) {
	if !m.Exec() || !m.FileBacked() || m.End-m.Start > 1<<30 {
		return nil, nil, false
	}
	want, err := instrument.FileBytes(procfs.Tgid(tid), maps, m.Start, int(m.End-m.Start))
	if err != nil {
		return nil, nil, false
	}
	// One read of the whole mapping, the pending writes laid over: what
	// readText gives, without a system call and a cached copy a page.
	got = make([]byte, len(want))
	if ptrace.ReadMem(tid, m.Start, got) != nil {
		return nil, nil, false
	}
	if as.batch != nil {
		as.batch.overlay(m.Start, got)
	}
	return got, want, true
}

// restoreOldReturns puts back the return addresses the stubs of every
// block in l replaced on the stack of the thread whose thread pointer is
// fs. A slot may hold one profiler's return stub in place of another's (a
// frame entered under the first tail-called a function the second had
// patched, whose stub took the first's return stub for the caller's
// address): the blocks are gone through until none puts anything back,
// then their shadow stacks are emptied.
func (e *engine) restoreOldReturns(tid int, l *leftovers, fs uint64) {
	var states []uint64
	var stubs []uint64
	for _, b := range l.blocks {
		if state, ok := oldState(tid, b, fs); ok && b.retstub != 0 {
			states, stubs = append(states, state), append(stubs, b.retstub)
		}
	}
	for range len(states) + 1 {
		n := 0
		for i, state := range states {
			n += e.restoreShadowEntries(tid, state, stubs[i])
		}
		if n == 0 {
			break
		}
	}
	for _, state := range states {
		clearShadow(tid, state)
	}
}

// stackHolds looks at every word of the live part of thread tid's stack
// (from its stack pointer to the end of the mapping holding it) for an
// address in l's code but not a quiet one (quietHeals, atTrampBody), and returns the
// first and where it is. The unwinder
// vouches for the frames it walks; a word it did not reach (past a frame
// without call-frame information, in a signal frame it did not read)
// could still lead there.
func stackHolds(tid int, maps []instrument.Mapping, l *leftovers, quiet func(uint64) bool) (at, v uint64, ok bool) {
	var regs unix.PtraceRegs
	if ptrace.GetRegs(tid, &regs) != nil {
		return 0, 0, false
	}
	sp := regs.Rsp &^ 7
	for _, m := range maps {
		if sp < m.Start || sp >= m.End {
			continue
		}
		buf := make([]byte, min(m.End-sp, 16<<20))
		if ptrace.ReadMem(tid, sp, buf) != nil {
			return 0, 0, false
		}
		for i := 0; i+8 <= len(buf); i += 8 {
			if v := binary.LittleEndian.Uint64(buf[i:]); l.inCode(v) && !quiet(v) {
				return sp + uint64(i), v, true
			}
		}
		return 0, 0, false
	}
	return 0, 0, false
}

// reclaimAtDetach tries again, every thread stopped, what the attach's
// reclaim of space as left mapped because a thread ran in the killed
// profilers' code: their patches were undone at the attach, so no thread
// has gone back there since.
func (e *engine) reclaimAtDetach(t *thread, as *space) {
	if !as.leftoverKept {
		return
	}
	maps, err := instrument.ReadMaps(t.proc.pid)
	if err != nil {
		return
	}
	as.leftoverKept = false
	e.stats.Leftover.Kept = 0
	e.reclaimLeftovers(t.tid, t.proc, maps)
	switch s := e.stats; {
	case s.Leftover.Kept > 0:
		e.warn("pid %d: the %d areas a killed profiler left stay mapped after the detach: %s", t.proc.pid, s.Leftover.Kept, s.Leftover.Why)
	case s.Leftover.Areas > 0:
		e.warn("pid %d: the %d areas a killed profiler left are unmapped at detach", t.proc.pid, s.Leftover.Areas)
	}
}

// healsIn finds the heal areas at the start of lo..hi, a part of an
// executable anonymous mapping read through mem: heal areas side by side
// are one mapping, and those never written (profilers killed as their
// mmap returned: all zeros, no one's) may lie below another and must not
// hide it. It returns their starts and where what follows them begins.
func healsIn(mem interface{ Read(uint64, []byte) error }, lo, hi uint64) ([]uint64, uint64) {
	head := make([]byte, heal.HeadSize)
	read := func(a uint64) bool { return hi-a >= heal.Size && mem.Read(a, head) == nil }
	zero := func() bool { return !slices.ContainsFunc(head, func(c byte) bool { return c != 0 }) }
	var heals []uint64
	for read(lo) {
		next := lo
		for zero() && read(next+heal.Size) {
			next += heal.Size
		}
		if !heal.IsHandler(head) {
			break
		}
		heals = append(heals, next)
		lo = next + heal.Size
	}
	return heals, lo
}
