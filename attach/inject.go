package attach

import (
	"fmt"

	"github.com/profile-dev/profile/attach/internal/inject"
	"github.com/profile-dev/profile/attach/internal/procfs"
	"github.com/profile-dev/profile/attach/internal/ptrace"
	"github.com/profile-dev/profile/instrument"

	"golang.org/x/sys/unix"
)

// injectSyscall makes stopped thread tid run one system call (through the
// chain, or at site: an executable address no other thread will run
// meanwhile) and returns its result; see inject.Syscall.
func (e *engine) injectSyscall(tid int, site uint64, nr uint64, args ...uint64) (uint64, error) {
	return e.injectWith(tid, site, nr, args, inject.Syscall)
}

// injectCall is injectSyscall with the kernel's error return made an
// error.
func (e *engine) injectCall(tid int, site uint64, nr uint64, args ...uint64) (uint64, error) {
	return e.injectWith(tid, site, nr, args, inject.Call)
}

// injectWith runs one injection (inject.Syscall or inject.Call) with
// what its space's scan holds pending written first (settle).
func (e *engine) injectWith(tid int, site, nr uint64, args []uint64,
	run func(int, inject.Thread, *inject.Chain, uint64, uint64, ...uint64) (uint64, error)) (uint64, error) {
	th := e.injectee(tid)
	resume, err := th.settle()
	if err != nil {
		return 0, err
	}
	defer resume()
	return run(tid, th, th.chain(), site, nr, args...)
}

// settle writes the code its space's scan holds pending before the
// thread runs (an injection reads and writes the code at its site, and
// runs it), and returns what starts holding it again.
func (th injectee) settle() (resume func(), err error) {
	if th.t == nil || th.t.proc.as.batch == nil {
		return func() {}, nil
	}
	as := th.t.proc.as
	if err := as.flushPending(th.tid); err != nil {
		return nil, err
	}
	return func() { as.batch = newPending() }, nil
}

// injectee is thread tid as an injection sees it (inject.Thread): t is
// nil for a task the loop does not know.
type injectee struct {
	e   *engine
	tid int
	t   *thread
}

func (e *engine) injectee(tid int) injectee { return injectee{e, tid, e.threads[tid]} }

func (th injectee) chain() *inject.Chain {
	if th.t == nil {
		return nil
	}
	return &th.t.proc.as.chain
}

// Restore gives a thread on one of our breakpoints its breakpoint back.
func (th injectee) Restore(saved unix.PtraceRegs) unix.PtraceRegs { return restoreRegs(th.t, saved) }

func (th injectee) Resuming(rip uint64) {
	if th.t != nil {
		th.e.markRip(th.t, rip)
	}
}

func (th injectee) Resumed() {
	if th.t != nil {
		th.t.unreaped = false
	}
}

// Guard: at the injection site of our first area, the heal handler or the
// restore stub gives the thread its registers back should we die.
func (th injectee) Guard(site uint64, restore *unix.PtraceRegs) func() {
	if t := th.t; t != nil && t.proc.as.heal != nil && site == t.proc.as.areas[0].base {
		th.e.healSave(t, restore)
		return func() { th.e.healClear(t) }
	}
	return func() {}
}

func (th injectee) Defer(ws unix.WaitStatus) { th.e.deferStop(th.tid, ws) }
func (th injectee) SignalsHeld() bool        { return th.t != nil && len(th.t.sigs) > 0 }
func (th injectee) Done()                    { th.e.rearm(th.tid) }

// PokeText writes text through the memory of the thread's space, opened
// once for its scan's writes (space.pokeText).
func (th injectee) PokeText(addr uint64, b []byte) error {
	if th.t != nil {
		return th.t.proc.as.pokeText(th.tid, addr, b)
	}
	return ptrace.PokeText(th.tid, addr, b)
}

// mapArea injects an mmap of an RWX area near addr (within rel32 reach):
// first at the free gap of the target's maps nearest to addr (areas left
// by a killed profiler take the usual places), then at fixed hints below
// and above it.
func (e *engine) mapArea(tid int, s *space, site, addr uint64) (*area, error) {
	var hints []uint64
	if maps, err := instrument.ReadMaps(procfs.Tgid(tid)); err == nil {
		if h, ok := freeNear(maps, addr, areaSize); ok {
			hints = append(hints, h)
		}
	}
	hints = append(hints, addr&^0xfff-64<<20, addr&^0xfff+64<<20, addr&^0xfff-512<<20, addr&^0xfff+512<<20)
	for _, h := range hints {
		if s.heal != nil {
			// Listed in the heal area before it is mapped, and mapped
			// there or not at all: a profiler killed as the mmap
			// returns leaves an area a later attach finds in the list
			// (reclaim.go), not one nothing names.
			listed := e.healArea(tid, s.heal, &area{base: h, size: areaSize})
			base, err := e.injectCall(tid, site, unix.SYS_MMAP, h, areaSize,
				unix.PROT_READ|unix.PROT_WRITE|unix.PROT_EXEC, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_FIXED_NOREPLACE, ^uint64(0), 0)
			if err == nil && base == h && listed {
				a := &area{base: base, size: areaSize}
				s.areas = append(s.areas, a)
				return a, nil
			}
			if listed {
				s.heal.Unlist(tid)
			}
			if err == nil {
				// Mapped elsewhere (a kernel without NOREPLACE), or
				// not listed (the list is full): not ours to keep.
				e.injectSyscall(tid, site, unix.SYS_MUNMAP, base, areaSize)
			}
			continue
		}
		base, err := e.injectCall(tid, site, unix.SYS_MMAP, h, areaSize,
			unix.PROT_READ|unix.PROT_WRITE|unix.PROT_EXEC, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS, ^uint64(0), 0)
		if err != nil {
			return nil, fmt.Errorf("mmap in target: %w", err)
		}
		if dist(base, addr) < near {
			a := &area{base: base, size: areaSize}
			if len(s.areas) == 0 {
				a.next = injectSiteSize // slot 0: later injections
				if err := ptrace.WriteMem(tid, base, inject.SyscallTrap); err != nil {
					return nil, err
				}
			}
			s.areas = append(s.areas, a)
			e.healArea(tid, s.heal, a)
			return a, nil
		}
		e.injectSyscall(tid, site, unix.SYS_MUNMAP, base, areaSize)
	}
	return nil, fmt.Errorf("no room for an out-of-line area within 2 GiB of %#x", addr)
}

// freeNear returns the start of a free range of size bytes, between the
// mappings, nearest to addr and within rel32 reach of it. A page of gap is
// kept on each side so the area never merges with a neighbour.
func freeNear(maps []instrument.Mapping, addr, size uint64) (uint64, bool) {
	const page = 4096
	best, found := uint64(0), false
	consider := func(lo, hi uint64) { // a free range [lo, hi)
		lo, hi = lo+page, hi-page
		if hi <= lo || hi-lo < size {
			return
		}
		cand := min(max(addr&^(page-1), lo), hi-size) // the nearest start in range
		if dist(cand, addr) < near && (!found || dist(cand, addr) < dist(best, addr)) {
			best, found = cand, true
		}
	}
	prev := uint64(64 << 10) // below mmap_min_addr nothing maps
	for _, m := range maps {
		if m.Start > prev {
			consider(prev, m.Start)
		}
		prev = max(prev, m.End)
	}
	consider(prev, 1<<47-page)
	return best, found
}

// unmap removes an area from the target at detach, saying so if it cannot.
func (e *engine) unmap(tid int, site, base, size uint64) {
	if _, err := e.injectCall(tid, site, unix.SYS_MUNMAP, base, size); err != nil {
		e.warn("could not unmap the area at %#x in the target: %v", base, err)
	}
}
