package attach

import (
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/profile-dev/profile/attach/internal/procfs"
	"github.com/profile-dev/profile/attach/internal/ptrace"
)

// crashing lists the signals of a crash: the program's own fault, which
// kills it (with a core) unless it handles them. Other fatal signals (a
// SIGTERM from outside) end the process too; the profile then says so.
func crashing(sig syscall.Signal) bool {
	switch sig {
	case unix.SIGSEGV, unix.SIGBUS, unix.SIGILL, unix.SIGFPE, unix.SIGABRT, unix.SIGSYS, unix.SIGTRAP:
		return true
	}
	return false
}

// crashSignal tells whether delivering sig to t's process is a crash: a
// crashing signal that the process neither catches nor ignores.
func crashSignal(t *thread, sig syscall.Signal) bool {
	if !crashing(sig) {
		return false
	}
	if h := t.proc.as.heal; h != nil && sig == unix.SIGTRAP {
		// Our handler is the disposition now; the program's own decides.
		return h.Old.Handler == 0
	}
	st := procfs.Status(t.tid)
	if st == nil {
		return false
	}
	bit := uint64(1) << (uint(sig) - 1)
	return (procfs.Mask(st, "SigCgt")|procfs.Mask(st, "SigIgn"))&bit == 0
}

// crash records a fatal signal about to end t's process, with the
// thread's stack, and saves the profile so far before letting it through.
func (e *engine) crash(t *thread, sig syscall.Signal) {
	var addr uint64
	if si, err := ptrace.GetSigInfo(t.tid); err == nil {
		addr = si.Addr
	}
	var pc string
	var regs unix.PtraceRegs
	if ptrace.GetRegs(t.tid, &regs) == nil {
		pc = e.symbolize(t.proc.as, regs.Rip)
	}
	e.s.Crash(t.st, signalName(sig), addr, pc)
	if e.opt.Live.OnCrash != nil {
		e.opt.Live.OnCrash(e.compensated(e.profileNow()))
	}
}

// symbolize names a runtime address as module:function+0xoff.
func (e *engine) symbolize(as *space, pc uint64) string {
	if m := as.moduleAt(pc); m != nil {
		if s, ok := m.mod.Lookup(pc - m.bias); ok {
			return fmt.Sprintf("%s:%s+%#x", baseName(m.mod.Path), s.Name, pc-m.bias-s.Value)
		}
		return fmt.Sprintf("%s+%#x", baseName(m.mod.Path), pc-m.bias)
	}
	return fmt.Sprintf("%#x", pc)
}
