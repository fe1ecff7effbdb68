package inject

import (
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/profile-dev/profile/attach/internal/ptrace"
)

// SyscallTrap is `syscall; int3`: run a system call in the target and stop.
var SyscallTrap = []byte{0x0f, 0x05, 0xcc}

// Syscall makes stopped thread tid run one system call and returns its
// result: through the chain c if it has one and the thread's stack takes
// the chain's block, else at site (an executable address no other thread
// will run meanwhile). The thread's registers and the bytes at site are
// restored, so a thread stopped inside an interrupted call restarts it as
// before.
func Syscall(tid int, th Thread, c *Chain, site uint64, nr uint64, args ...uint64) (uint64, error) {
	defer th.Done()
	if c != nil && c.Addr != 0 {
		if r, ok, err := chained(tid, th, c.Addr, nr, args); ok {
			return r, err
		}
	}
	var saved, regs unix.PtraceRegs
	if err := ptrace.GetRegs(tid, &saved); err != nil {
		return 0, fmt.Errorf("inject: %w", err)
	}
	orig := make([]byte, len(SyscallTrap))
	if err := ptrace.ReadMem(tid, site, orig); err != nil {
		return 0, fmt.Errorf("inject: %w", err)
	}
	if err := th.PokeText(site, SyscallTrap); err != nil {
		return 0, fmt.Errorf("inject: %w", err)
	}
	defer th.PokeText(site, orig)
	restore := th.Restore(saved)
	defer th.Guard(site, &restore)()
	regs = withCall(saved, site, nr, args)
	th.Resuming(site)
	if err := ptrace.SetRegs(tid, &regs); err != nil {
		return 0, fmt.Errorf("inject: %w", err)
	}
	if err := ptrace.Cont(tid, 0); err != nil {
		return 0, fmt.Errorf("inject: %w", err)
	}
	th.Resumed()
	for {
		ws, err := ptrace.Wait(tid)
		if err != nil {
			return 0, fmt.Errorf("inject: wait: %w", err)
		}
		if ws.Exited() || ws.Signaled() {
			return 0, fmt.Errorf("inject: thread %d ended", tid)
		}
		if ws.Stopped() && ws.StopSignal() == unix.SIGTRAP && ptrace.Event(ws) <= 0 {
			if err := ptrace.GetRegs(tid, &regs); err == nil && regs.Rip == site+uint64(len(SyscallTrap)) {
				break
			}
		}
		// Anything else (a signal arriving now) is the loop's, later.
		th.Defer(ws)
		if err := ptrace.Cont(tid, 0); err != nil {
			return 0, fmt.Errorf("inject: %w", err)
		}
	}
	if err := ptrace.SetRegs(tid, &restore); err != nil {
		return 0, fmt.Errorf("inject: restore: %w", err)
	}
	return regs.Rax, nil
}

// Call is Syscall with the kernel's error return (-4095 to -1) made an
// error.
func Call(tid int, th Thread, c *Chain, site uint64, nr uint64, args ...uint64) (uint64, error) {
	r, err := Syscall(tid, th, c, site, nr, args...)
	if err == nil && int64(r) < 0 && int64(r) > -4096 {
		err = unix.Errno(-int64(r))
	}
	return r, err
}

// withCall is regs set to run system call nr with args at rip: not in a
// system call (no restart logic on resume).
func withCall(regs unix.PtraceRegs, rip, nr uint64, args []uint64) unix.PtraceRegs {
	regs.Rip, regs.Rax = rip, nr
	regs.Orig_rax = ^uint64(0)
	argRegs := []*uint64{&regs.Rdi, &regs.Rsi, &regs.Rdx, &regs.R10, &regs.R8, &regs.R9}
	for i, a := range args {
		*argRegs[i] = a
	}
	return regs
}

// Abandoned are the registers a thread stopped with r must resume with in
// user space, without the tracer: a system call it was stopped in is
// restarted as the kernel would on a return to it.
func Abandoned(r unix.PtraceRegs) unix.PtraceRegs {
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
