package attach

import (
	"encoding/binary"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/profile-dev/profile/attach/internal/heal"
	"github.com/profile-dev/profile/attach/internal/inject"
	"github.com/profile-dev/profile/attach/internal/procfs"
	"github.com/profile-dev/profile/attach/internal/ptrace"
)

// The engine's side of the heal area (attach/internal/heal): mapping it,
// making its handler the process's SIGTRAP disposition and giving the
// program its own back, and telling the area of each breakpoint, area and
// injection as the engine makes them.

// installHeal maps the heal area in the space of stopped thread tid and
// makes its handler the process's SIGTRAP disposition, keeping the
// program's own for the handler to chain to and for detach to restore.
// It needs the first out-of-line area (the injection site).
func (e *engine) installHeal(tid int, as *space) error {
	if as.heal != nil || len(as.areas) == 0 {
		return nil
	}
	site := as.areas[0].base
	base, err := e.injectCall(tid, site, unix.SYS_MMAP, 0, heal.Size,
		unix.PROT_READ|unix.PROT_WRITE|unix.PROT_EXEC, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE, ^uint64(0), 0)
	if err != nil {
		return fmt.Errorf("heal area: mmap in target: %w", err)
	}
	if err := ptrace.WriteMem(tid, base, heal.Code(site)); err != nil {
		e.injectSyscall(tid, site, unix.SYS_MUNMAP, base, heal.Size)
		return fmt.Errorf("heal area: %w", err)
	}
	// Past the injection site's int3: a thread whose trap the tracer
	// reaped before dying goes on to the restore stub.
	jump := []byte{0xff, 0x25, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0} // jmp [rip+0]; abs64
	binary.LittleEndian.PutUint64(jump[6:], heal.RestoreStub(base))
	if err := ptrace.WriteMem(tid, site+uint64(len(inject.SyscallTrap)), jump); err != nil {
		e.injectSyscall(tid, site, unix.SYS_MUNMAP, base, heal.Size)
		return fmt.Errorf("heal area: %w", err)
	}
	h := heal.New(base)
	as.heal = h
	fail := func(err error) error {
		as.heal = nil
		e.injectSyscall(tid, site, unix.SYS_MUNMAP, base, heal.Size)
		return fmt.Errorf("install SIGTRAP handler: %w", err)
	}
	// Read the program's disposition first: ours takes its mask and its
	// stack and deferral flags, so chaining to it behaves as before.
	if err := e.sigaction(tid, as, 0, heal.OldAct(base)); err != nil {
		return fail(err)
	}
	cur, err := heal.ReadAct(tid, heal.OldAct(base))
	if err != nil {
		return fail(err)
	}
	// A profiler killed while attached left its handler there: take the
	// program's own from it, and the int3s it kept.
	h.Old = e.healLeftover(tid, as, cur)
	if h.Old != cur {
		if err := heal.WriteAct(tid, heal.OldAct(base), h.Old); err != nil {
			return fail(err)
		}
	}
	if err := heal.WriteAct(tid, heal.NewAct(base), heal.Handler(base, h.Old)); err != nil {
		return fail(err)
	}
	if err := e.sigaction(tid, as, heal.NewAct(base), 0); err != nil {
		return fail(err)
	}
	for _, a := range as.areas {
		e.healArea(tid, h, a)
	}
	e.healChain(tid, as)
	// The program's entry breakpoint, if any, is healable too.
	for _, b := range as.bps {
		e.healAdd(tid, as, b.Addr, b.Orig)
	}
	e.watchHeal(tid, as)
	return nil
}

// keepHandler puts the heal handler back when the trap thread t stopped
// at took it away. An int3 run with SIGTRAP blocked (jemalloc's background
// threads run with every signal blocked; glibc blocks them all while it
// creates a thread or spawns) is forced on the thread by the kernel
// (force_sig_info_to_task): it unblocks SIGTRAP in the thread and resets
// the process's disposition to SIG_DFL, before the tracer sees the stop.
// While traced nothing shows; once the tracer is killed, the first int3
// kills the process. The forced trap leaves the thread's mask without
// SIGTRAP: a thread whose mask changed since we last looked is the only
// suspect (one system call a trap; /proc only then).
func (e *engine) keepHandler(t *thread) {
	h := t.proc.as.heal
	if h == nil {
		return
	}
	m, err := ptrace.SigMask(t.tid)
	if err != nil || m == t.mask {
		return
	}
	old := t.mask
	t.mask = m
	if m == 0 && old&(1<<(unix.SIGTRAP-1)) == 0 {
		return
	}
	if procfs.Mask(procfs.Status(t.proc.pid), "SigCgt")&(1<<(unix.SIGTRAP-1)) != 0 {
		return
	}
	if err := e.sigaction(t.tid, t.proc.as, heal.NewAct(h.Base), 0); err != nil {
		e.warn("pid %d: the SIGTRAP handler was reset and could not be put back: %v (the target is not protected should profile be killed)", t.proc.pid, err)
	}
}

// sigaction injects rt_sigaction(SIGTRAP, act, oldact).
func (e *engine) sigaction(tid int, as *space, act, oldact uint64) error {
	return e.sigactionOf(tid, as, unix.SIGTRAP, act, oldact)
}

// sigactionOf injects rt_sigaction(sig, act, oldact).
func (e *engine) sigactionOf(tid int, as *space, sig unix.Signal, act, oldact uint64) error {
	_, err := e.injectCall(tid, as.areas[0].base, unix.SYS_RT_SIGACTION, uint64(sig), act, oldact, 8)
	return err
}

// giveBack gives the program back its disposition of sig, kept at old,
// unless it installed one of its own while traced (the current one is not
// handler, ours): a swap, the current one out into free, a struct
// sigaction slot of the heal area free now.
func (e *engine) giveBack(tid int, as *space, sig unix.Signal, old, free, handler uint64) error {
	if err := e.sigactionOf(tid, as, sig, old, free); err != nil {
		return err
	}
	if cur, err := heal.ReadAct(tid, free); err == nil && cur.Handler != handler {
		e.sigactionOf(tid, as, sig, free, 0) // the program's own since: keep it
	}
	return nil
}

// uninstallHeal gives the program its own SIGTRAP disposition back (unless
// it installed another one meanwhile) and unmaps the heal area.
func (e *engine) uninstallHeal(tid int, as *space) {
	h := as.heal
	if h == nil {
		return
	}
	if err := e.giveBack(tid, as, unix.SIGTRAP, heal.OldAct(h.Base), heal.NewAct(h.Base), h.Base); err != nil {
		e.warn("restore the SIGTRAP disposition of pid %d: %v", tid, err)
		return // leave the area: the handler may still be needed
	}
	as.heal = nil
	e.unwatchHeal(as)
	if !as.keepHeal {
		e.unmap(tid, as.areas[0].base, h.Base, heal.Size)
	}
}

// healAdd records a breakpoint in the table before its int3 is written, so
// the handler can always undo it.
func (e *engine) healAdd(tid int, as *space, addr uint64, orig byte) {
	if h := as.heal; h != nil && h.Add(tid, addr, orig, as.protAt(tid, addr)) {
		e.warn("pid %d: more than %d breakpoints: the ones beyond are not healed should profile be killed", tid, heal.Capacity)
	}
}

// healArea lists an out-of-line area for the handler (heal.Area.List).
func (e *engine) healArea(tid int, h *heal.Area, a *area) bool {
	return h != nil && h.List(tid, a.base, a.base+a.size)
}

// healChain lists the injection chain for the handler as code of ours:
// a thread set to run it from a trap stop not yet reaped (an injection at
// a breakpoint) resumes there should profile die before the call, runs it
// and gets its own registers back; no mark is needed, and a mark made
// before (programEntry's) stays for a death before the thread is set.
func (e *engine) healChain(tid int, as *space) {
	if h := as.heal; h != nil && as.chain.Addr != 0 && !h.Covers(as.chain.Addr) {
		h.List(tid, as.chain.Addr, as.chain.Addr+uint64(inject.ChainSize))
	}
}

// healDrop marks the entries in [lo, hi) dead (heal.Area.Drop).
func (e *engine) healDrop(tid int, as *space, lo, hi uint64) {
	if h := as.heal; h != nil {
		h.Drop(tid, lo, hi)
	}
}

// healSave puts the registers thread t must resume with, should the
// tracer die during an injected system call, where the handler finds
// them.
func (e *engine) healSave(t *thread, regs *unix.PtraceRegs) {
	if h := t.proc.as.heal; h != nil {
		h.Save(t.tid, inject.Abandoned(*regs))
	}
}

// healClear says the save block no longer holds a thread's registers.
func (e *engine) healClear(t *thread) {
	if h := t.proc.as.heal; h != nil {
		h.Clear(t.tid)
	}
}

// markRip marks the siginfo of a thread whose SIGTRAP stop is still
// pending with the rip the tracer is about to give it: should the tracer
// die before resuming it, the handler sees the mark and resumes it there.
// Without the mark the handler rewinds it to its breakpoint. A reaped stop
// needs none (its signal is gone: the thread resumes as the tracer left
// it), nor does a rip in an out-of-line area, which the handler knows: the
// mark costs a system call, the common case (a slot) goes without.
func (e *engine) markRip(t *thread, rip uint64) {
	if h := t.proc.as.heal; t.unreaped && h != nil && !h.Covers(rip) {
		heal.Mark(t.tid, rip)
	}
}

// moveTo sets the registers a thread stopped on one of our traps is to go
// on with: each state the tracer sets is one the thread can resume from
// alone (out-of-line slot, emulated call or jump).
func (e *engine) moveTo(t *thread, regs *unix.PtraceRegs) error {
	e.markRip(t, regs.Rip)
	t.trapAt = 0
	return ptrace.SetRegs(t.tid, regs)
}

// restoreRegs are the registers a thread is given back after an injected
// system call: the ones it had, at its breakpoint if it sits on one.
func restoreRegs(t *thread, saved unix.PtraceRegs) unix.PtraceRegs {
	if t != nil && t.trapAt != 0 {
		saved.Rip = t.trapAt
	}
	return saved
}

// protAt is the protection of the page holding a breakpoint: text of a
// module is r-x; anything else (a return site in generated code) is read
// from the maps.
func (s *space) protAt(tid int, addr uint64) byte {
	if s.moduleAt(addr) != nil || s.undoing != nil && addr >= s.undoing.lo && addr < s.undoing.hi {
		return unix.PROT_READ | unix.PROT_EXEC
	}
	if p, ok := procfs.MappingProt(tid, addr); ok {
		return p
	}
	return unix.PROT_READ | unix.PROT_EXEC
}
