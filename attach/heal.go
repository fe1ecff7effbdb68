package attach

import (
	"bytes"
	_ "embed"
	"encoding/binary"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/profile-dev/profile/attach/internal/procfs"
	"github.com/profile-dev/profile/attach/internal/ptrace"
)

// The heal area: the target's own SIGTRAP handler and the table of our
// breakpoints (healcode/heal.S). If the tracer dies, the kernel detaches
// the target and delivers the SIGTRAPs of our int3s to it; the handler then
// puts every original byte back and resumes each thread where it would have
// gone. While the tracer lives, ptrace suppresses those SIGTRAPs and the
// handler never runs.

//go:embed heal.bin
var healCode []byte

// Offsets in the heal area, mirrored from healcode/heal.S.
const (
	healSize        = 8 << 20 // MAP_NORESERVE: pages are touched as the table grows
	healRestore     = 0x700
	healRestorer    = 0x7f0
	healCount       = 0x808
	healOldAct      = 0x810
	healNewAct      = 0x830
	healInjectTrap  = 0x870
	healInjectValid = 0x878
	healInjectRegs  = 0x880
	healAreaCount   = 0x910
	healAreas       = 0x918
	healMaxAreas    = 14
	healTable       = 0x1000
	healEntrySize   = 16
	healCapacity    = (healSize - healTable) / healEntrySize

	// healMagic in si_errno marks a thread the tracer moved on before
	// resuming it: si_addr holds the rip it set (markRip).
	healMagic = 0x464f5250

	saSiginfo  = 0x4
	saOnstack  = 0x08000000
	saRestorer = 0x04000000
	saNodefer  = 0x40000000
)

// healer is the tracer's side of one address space's heal area.
type healer struct {
	base  uint64
	count int            // table entries written
	slots map[uint64]int // breakpoint address -> table entry
	old   sigAction      // the program's own SIGTRAP disposition
	areas [][2]uint64    // out-of-line areas the handler knows
	full  int            // breakpoints that found the table full
}

// sigAction is the kernel's struct sigaction on x86-64.
type sigAction struct{ handler, flags, restorer, mask uint64 }

func (a sigAction) bytes() []byte {
	b := make([]byte, 32)
	for i, v := range []uint64{a.handler, a.flags, a.restorer, a.mask} {
		binary.LittleEndian.PutUint64(b[8*i:], v)
	}
	return b
}

func parseSigAction(b []byte) sigAction {
	u := func(i int) uint64 { return binary.LittleEndian.Uint64(b[8*i:]) }
	return sigAction{u(0), u(1), u(2), u(3)}
}

func (h *healer) clone() *healer {
	if h == nil {
		return nil
	}
	c := *h
	c.areas = append([][2]uint64(nil), h.areas...)
	c.slots = make(map[uint64]int, len(h.slots))
	for k, v := range h.slots {
		c.slots[k] = v
	}
	return &c
}

// installHeal maps the heal area in the space of stopped thread tid and
// makes its handler the process's SIGTRAP disposition, keeping the
// program's own for the handler to chain to and for detach to restore.
// It needs the first out-of-line area (the injection site).
func (e *engine) installHeal(tid int, as *space) error {
	if as.heal != nil || len(as.areas) == 0 {
		return nil
	}
	site := as.areas[0].base
	base, err := e.injectCall(tid, site, unix.SYS_MMAP, 0, healSize,
		unix.PROT_READ|unix.PROT_WRITE|unix.PROT_EXEC, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE, ^uint64(0), 0)
	if err != nil {
		return fmt.Errorf("heal area: mmap in target: %w", err)
	}
	code := append([]byte(nil), healCode...)
	binary.LittleEndian.PutUint64(code[healInjectTrap:], site+2)
	if err := ptrace.WriteMem(tid, base, code); err != nil {
		e.injectSyscall(tid, site, unix.SYS_MUNMAP, base, healSize)
		return fmt.Errorf("heal area: %w", err)
	}
	// Past the injection site's int3: a thread whose trap the tracer
	// reaped before dying goes on to the restore stub.
	jump := []byte{0xff, 0x25, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0} // jmp [rip+0]; abs64
	binary.LittleEndian.PutUint64(jump[6:], base+healRestore)
	if err := ptrace.WriteMem(tid, site+uint64(len(syscallTrap)), jump); err != nil {
		e.injectSyscall(tid, site, unix.SYS_MUNMAP, base, healSize)
		return fmt.Errorf("heal area: %w", err)
	}
	h := &healer{base: base, slots: map[uint64]int{}}
	as.heal = h
	fail := func(err error) error {
		as.heal = nil
		e.injectSyscall(tid, site, unix.SYS_MUNMAP, base, healSize)
		return fmt.Errorf("install SIGTRAP handler: %w", err)
	}
	// Read the program's disposition first: ours takes its mask and its
	// stack and deferral flags, so chaining to it behaves as before.
	if err := e.sigaction(tid, as, 0, base+healOldAct); err != nil {
		return fail(err)
	}
	buf := make([]byte, 32)
	if err := ptrace.ReadMem(tid, base+healOldAct, buf); err != nil {
		return fail(err)
	}
	// A profiler killed while attached left its handler there: take the
	// program's own from it, and the int3s it kept.
	h.old = e.healLeftover(tid, as, parseSigAction(buf))
	if !bytes.Equal(h.old.bytes(), buf) {
		if err := ptrace.WriteMem(tid, base+healOldAct, h.old.bytes()); err != nil {
			return fail(err)
		}
	}
	ours := sigAction{handler: base, flags: saSiginfo | saRestorer | h.old.flags&(saOnstack|saNodefer),
		restorer: base + healRestorer, mask: h.old.mask}
	if err := ptrace.WriteMem(tid, base+healNewAct, ours.bytes()); err != nil {
		return fail(err)
	}
	if err := e.sigaction(tid, as, base+healNewAct, 0); err != nil {
		return fail(err)
	}
	for _, a := range as.areas {
		e.healArea(tid, h, a)
	}
	// The program's entry breakpoint, if any, is healable too.
	for _, b := range as.bps {
		e.healAdd(tid, as, b.addr, b.orig)
	}
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
	if err := e.sigaction(t.tid, t.proc.as, h.base+healNewAct, 0); err != nil {
		e.warn("pid %d: the SIGTRAP handler was reset and could not be put back: %v (the target is not protected should profile be killed)", t.proc.pid, err)
	}
}

// sigaction injects rt_sigaction(SIGTRAP, act, oldact).
func (e *engine) sigaction(tid int, as *space, act, oldact uint64) error {
	_, err := e.injectCall(tid, as.areas[0].base, unix.SYS_RT_SIGACTION, uint64(unix.SIGTRAP), act, oldact, 8)
	return err
}

// uninstallHeal gives the program its own SIGTRAP disposition back (unless
// it installed another one meanwhile) and unmaps the heal area.
func (e *engine) uninstallHeal(tid int, as *space) {
	h := as.heal
	if h == nil {
		return
	}
	// Swap: the program's disposition in, the current one out (into the
	// new_act slot, which is free now).
	if err := e.sigaction(tid, as, h.base+healOldAct, h.base+healNewAct); err != nil {
		e.warn("restore the SIGTRAP disposition of pid %d: %v", tid, err)
		return // leave the area: the handler may still be needed
	}
	buf := make([]byte, 32)
	if ptrace.ReadMem(tid, h.base+healNewAct, buf) == nil {
		if cur := parseSigAction(buf); cur.handler != h.base {
			// The program installed its own handler while traced: keep it.
			e.sigaction(tid, as, h.base+healNewAct, 0)
		}
	}
	as.heal = nil
	e.unmap(tid, as.areas[0].base, h.base, healSize)
}

// healAdd records a breakpoint in the table before its int3 is written, so
// the handler can always undo it.
func (e *engine) healAdd(tid int, as *space, addr uint64, orig byte) {
	h := as.heal
	if h == nil {
		return
	}
	if i, ok := h.slots[addr]; ok {
		e.healWrite(tid, h, i, addr, orig, as.protAt(tid, addr))
		return
	}
	if h.count >= healCapacity {
		if h.full == 0 {
			e.warn("pid %d: more than %d breakpoints: the ones beyond are not healed should profile be killed", tid, healCapacity)
		}
		h.full++
		return
	}
	i := h.count
	if e.healWrite(tid, h, i, addr, orig, as.protAt(tid, addr)) != nil {
		return
	}
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(i+1))
	if ptrace.WriteMem(tid, h.base+healCount, n[:]) == nil {
		h.count = i + 1
		h.slots[addr] = i
	}
}

// healArea lists an out-of-line area for the handler: a thread the tracer
// moved into one resumes there without a mark (markRip).
func (e *engine) healArea(tid int, h *healer, a *area) bool {
	if h == nil || len(h.areas) >= healMaxAreas {
		return false
	}
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:], a.base)
	binary.LittleEndian.PutUint64(b[8:], a.base+a.size)
	if ptrace.WriteMem(tid, h.base+healAreas+uint64(16*len(h.areas)), b[:]) != nil {
		return false
	}
	binary.LittleEndian.PutUint64(b[:], uint64(len(h.areas)+1))
	if ptrace.WriteMem(tid, h.base+healAreaCount, b[:8]) != nil {
		return false
	}
	h.areas = append(h.areas, [2]uint64{a.base, a.base + a.size})
	return true
}

// healUnlist takes the last area healArea listed off the list: it was not
// mapped after all.
func (e *engine) healUnlist(tid int, h *healer) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(len(h.areas)-1))
	if ptrace.WriteMem(tid, h.base+healAreaCount, b[:]) == nil {
		h.areas = h.areas[:len(h.areas)-1]
	}
}

// covers tells whether rip lies in an area the handler knows.
func (h *healer) covers(rip uint64) bool {
	for _, a := range h.areas {
		if rip >= a[0] && rip < a[1] {
			return true
		}
	}
	return false
}

func (e *engine) healWrite(tid int, h *healer, i int, addr uint64, orig, prot byte) error {
	var ent [healEntrySize]byte
	binary.LittleEndian.PutUint64(ent[:], addr)
	ent[8], ent[9], ent[10] = orig, prot, 1
	return ptrace.WriteMem(tid, h.base+healTable+uint64(i)*healEntrySize, ent[:])
}

// healDrop marks the entries in [lo, hi) dead: their module is unmapped,
// and writing to its old addresses could hit whatever is mapped there next.
func (e *engine) healDrop(tid int, as *space, lo, hi uint64) {
	h := as.heal
	if h == nil {
		return
	}
	for addr, i := range h.slots {
		if addr >= lo && addr < hi {
			ptrace.WriteMem(tid, h.base+healTable+uint64(i)*healEntrySize+10, []byte{0})
			delete(h.slots, addr)
		}
	}
}

// healSave puts the registers thread tid must resume with, should the
// tracer die during an injected system call, where the handler finds them.
func (e *engine) healSave(t *thread, regs *unix.PtraceRegs) {
	h := t.proc.as.heal
	if h == nil {
		return
	}
	r := abandonRegs(*regs)
	g := []uint64{r.R8, r.R9, r.R10, r.R11, r.R12, r.R13, r.R14, r.R15, r.Rdi, r.Rsi, r.Rbp, r.Rbx,
		r.Rdx, r.Rax, r.Rcx, r.Rsp, r.Rip, r.Eflags}
	buf := make([]byte, 8+8*len(g))
	binary.LittleEndian.PutUint64(buf, 1)
	for i, v := range g {
		binary.LittleEndian.PutUint64(buf[8+8*i:], v)
	}
	ptrace.WriteMem(t.tid, h.base+healInjectValid, buf)
}

// healClear says the save block no longer holds a thread's registers.
func (e *engine) healClear(t *thread) {
	if h := t.proc.as.heal; h != nil {
		ptrace.WriteMem(t.tid, h.base+healInjectValid, make([]byte, 8))
	}
}

// abandonRegs are the registers a thread stopped with regs must resume
// with in user space, without the tracer: a system call it was stopped in
// is restarted as the kernel would on a return to it. (A thread on one of
// our breakpoints was rewound to it before its stop was reaped.)
func abandonRegs(r unix.PtraceRegs) unix.PtraceRegs {
	if int64(r.Orig_rax) >= 0 {
		switch int64(r.Rax) {
		case -512, -513, -514: // ERESTARTSYS, ERESTARTNOINTR, ERESTARTNOHAND
			r.Rax, r.Rip = r.Orig_rax, r.Rip-2
		case -516: // ERESTART_RESTARTBLOCK
			r.Rax, r.Rip = unix.SYS_RESTART_SYSCALL, r.Rip-2
		}
	}
	return r
}

// markRip marks the siginfo of a thread whose SIGTRAP stop is still
// pending with the rip the tracer is about to give it: should the tracer
// die before resuming it, the handler sees the mark and resumes it there.
// Without the mark the handler rewinds it to its breakpoint. A reaped stop
// needs none (its signal is gone: the thread resumes as the tracer left
// it), nor does a rip in an out-of-line area, which the handler knows: the
// mark costs a system call, the common case (a slot) goes without.
func (e *engine) markRip(t *thread, rip uint64) {
	if h := t.proc.as.heal; t.unreaped && h != nil && !h.covers(rip) {
		si := ptrace.SigInfo{Signo: int32(unix.SIGTRAP), Errno: healMagic, Code: ptrace.SIKernel, Addr: rip}
		ptrace.SetSigInfo(t.tid, &si)
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
