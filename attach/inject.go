package attach

import (
	"fmt"

	"github.com/profile-dev/profile/attach/internal/procfs"
	"github.com/profile-dev/profile/attach/internal/ptrace"
	"github.com/profile-dev/profile/instrument"

	"golang.org/x/sys/unix"
)

// syscallTrap is `syscall; int3`: run a system call in the target and stop.
var syscallTrap = []byte{0x0f, 0x05, 0xcc}

// injectSyscall makes stopped thread tid run one system call at site (an
// executable address no other thread will run meanwhile) and returns its
// result. The thread's registers and the bytes at site are restored, so a
// thread stopped inside an interrupted call restarts it as before.
func (e *engine) injectSyscall(tid int, site uint64, nr uint64, args ...uint64) (uint64, error) {
	defer e.rearm(tid)
	t := e.threads[tid]
	if t != nil && t.proc.as.chain != 0 {
		if r, ok, err := e.injectChained(t, tid, t.proc.as.chain, nr, args); ok {
			return r, err
		}
	}
	var saved, regs unix.PtraceRegs
	if err := ptrace.GetRegs(tid, &saved); err != nil {
		return 0, fmt.Errorf("inject: %w", err)
	}
	orig := make([]byte, len(syscallTrap))
	if err := ptrace.ReadMem(tid, site, orig); err != nil {
		return 0, fmt.Errorf("inject: %w", err)
	}
	if err := ptrace.PokeText(tid, site, syscallTrap); err != nil {
		return 0, fmt.Errorf("inject: %w", err)
	}
	defer ptrace.PokeText(tid, site, orig)
	restore := restoreRegs(t, saved)
	if t != nil && t.proc.as.heal != nil && site == t.proc.as.areas[0].base {
		// Should we die before restoring them, the handler or the
		// restore stub does.
		e.healSave(t, &restore)
		defer e.healClear(t)
	}
	regs = saved
	regs.Rip = site
	regs.Rax = nr
	regs.Orig_rax = ^uint64(0) // not in a syscall: no restart logic on resume
	argRegs := []*uint64{&regs.Rdi, &regs.Rsi, &regs.Rdx, &regs.R10, &regs.R8, &regs.R9}
	for i, a := range args {
		*argRegs[i] = a
	}
	if t != nil {
		e.markRip(t, site)
	}
	if err := ptrace.SetRegs(tid, &regs); err != nil {
		return 0, fmt.Errorf("inject: %w", err)
	}
	if err := ptrace.Cont(tid, 0); err != nil {
		return 0, fmt.Errorf("inject: %w", err)
	}
	if t != nil {
		t.unreaped = false
	}
	for {
		ws, err := ptrace.Wait(tid)
		if err != nil {
			return 0, fmt.Errorf("inject: wait: %w", err)
		}
		if ws.Exited() || ws.Signaled() {
			return 0, fmt.Errorf("inject: thread %d ended", tid)
		}
		if ws.Stopped() && ws.StopSignal() == unix.SIGTRAP && ptrace.Event(ws) <= 0 {
			if err := ptrace.GetRegs(tid, &regs); err == nil && regs.Rip == site+uint64(len(syscallTrap)) {
				break
			}
		}
		// Anything else (a signal arriving now) waits for later: put it
		// back by continuing without it is wrong, so remember and retry.
		e.deferStop(tid, ws)
		if err := ptrace.Cont(tid, 0); err != nil {
			return 0, fmt.Errorf("inject: %w", err)
		}
	}
	if err := ptrace.SetRegs(tid, &restore); err != nil {
		return 0, fmt.Errorf("inject: restore: %w", err)
	}
	return regs.Rax, nil
}

// injectCall is injectSyscall with the kernel's error return (-4095 to -1)
// made an error.
func (e *engine) injectCall(tid int, site uint64, nr uint64, args ...uint64) (uint64, error) {
	r, err := e.injectSyscall(tid, site, nr, args...)
	if err == nil && int64(r) < 0 && int64(r) > -4096 {
		err = unix.Errno(-int64(r))
	}
	return r, err
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
				e.healUnlist(tid, s.heal)
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
				if err := ptrace.WriteMem(tid, base, syscallTrap); err != nil {
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
