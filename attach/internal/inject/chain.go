package inject

import (
	"encoding/binary"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/profile-dev/profile/attach/internal/ptrace"
)

// The injection chain: code that runs one system call and then gives the
// thread all its registers back and jumps to where it was, by itself.
// Injected with `syscall; int3`, a thread the tracer leaves (it is killed)
// runs the int3 and dies by SIGTRAP unless a handler of ours is in place;
// with the chain it goes on as if nothing happened, and at worst a
// mapping is left over. The tracer stops the thread at the call's exit
// (PTRACE_SYSCALL) instead of at a trap. The code lives in the slack of
// the program's last text page (instrument.Slack), which exists before
// anything of ours does.
//
//	syscall
//	pop rax; pop rcx; pop rdx; pop rbx; pop rbp; pop rsi; pop rdi
//	pop r8 … pop r15
//	popfq
//	pop rsp
//	jmp [rip+0]
//	.quad resume address
//
// The registers are popped from a block the tracer writes below the
// thread's red zone; rsp comes last, so nothing the chain still needs lies
// below the stack pointer, where a signal frame could land.
var chainCode = [...]byte{
	0x0f, 0x05,
	0x58, 0x59, 0x5a, 0x5b, 0x5d, 0x5e, 0x5f,
	0x41, 0x58, 0x41, 0x59, 0x41, 0x5a, 0x41, 0x5b, 0x41, 0x5c, 0x41, 0x5d, 0x41, 0x5e, 0x41, 0x5f,
	0x9d,
	0x5c,
	0xff, 0x25, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0,
}

// ChainSize is the bytes of slack the chain takes.
const ChainSize = len(chainCode)

const (
	chainResume = 33     // offset of the resume address, the last 8 bytes
	chainBlock  = 17 * 8 // registers popped: 15, flags, rsp
	redZone     = 128
)

// Chain is the injection chain of one address space: where it is (0: no
// chain) and the slack's own bytes, put back when it goes.
type Chain struct {
	Addr uint64
	Orig []byte
}

// Write writes the chain at addr (text slack whose own bytes are orig)
// through stopped thread tid.
func (c *Chain) Write(tid int, addr uint64, orig []byte) error {
	if err := ptrace.PokeText(tid, addr, chainCode[:]); err != nil {
		return err
	}
	c.Addr, c.Orig = addr, orig
	return nil
}

// Remove puts the slack's bytes back, after the last injection, in the
// memory of task tid (a forked child's copy too).
func (c *Chain) Remove(tid int) {
	if c.Addr != 0 {
		ptrace.PokeText(tid, c.Addr, c.Orig)
		c.Addr = 0
	}
}

// chainValues are the registers in the order the chain pops them.
func chainValues(r unix.PtraceRegs) []uint64 {
	return []uint64{r.Rax, r.Rcx, r.Rdx, r.Rbx, r.Rbp, r.Rsi, r.Rdi,
		r.R8, r.R9, r.R10, r.R11, r.R12, r.R13, r.R14, r.R15, r.Eflags, r.Rsp}
}

// chained is Syscall through the chain at chain. ok is false when the
// chain cannot be used for this thread (its stack is not writable): the
// caller falls back to `syscall; int3`.
func chained(tid int, th Thread, chain uint64, nr uint64, args []uint64) (r uint64, ok bool, err error) {
	var saved unix.PtraceRegs
	if err := ptrace.GetRegs(tid, &saved); err != nil {
		return 0, true, fmt.Errorf("inject: %w", err)
	}
	back := Abandoned(th.Restore(saved))
	block := make([]byte, chainBlock)
	for i, v := range chainValues(back) {
		binary.LittleEndian.PutUint64(block[8*i:], v)
	}
	sp := (back.Rsp - redZone - chainBlock) &^ 15
	var resume [8]byte
	binary.LittleEndian.PutUint64(resume[:], back.Rip)
	if ptrace.WriteMem(tid, sp, block) != nil || th.PokeText(chain+uint64(chainResume), resume[:]) != nil {
		return 0, false, nil
	}
	regs := withCall(saved, chain, nr, args)
	regs.Rsp = sp
	th.Resuming(chain)
	if err := ptrace.SetRegs(tid, &regs); err != nil {
		return 0, true, fmt.Errorf("inject: %w", err)
	}
	if err := ptrace.TraceSyscall(tid); err != nil {
		return 0, true, fmt.Errorf("inject: %w", err)
	}
	th.Resumed()
	for {
		ws, err := ptrace.Wait(tid)
		if err != nil {
			return 0, true, fmt.Errorf("inject: wait: %w", err)
		}
		if ws.Exited() || ws.Signaled() {
			return 0, true, fmt.Errorf("inject: thread %d ended", tid)
		}
		if ws.Stopped() && ws.StopSignal() == unix.SIGTRAP|0x80 {
			op, err := ptrace.SyscallOp(tid)
			if err != nil {
				return 0, true, fmt.Errorf("inject: %w", err)
			}
			if op == ptrace.SyscallExit {
				break
			}
			if op == ptrace.SyscallEntry {
				if err := ptrace.TraceSyscall(tid); err != nil {
					return 0, true, fmt.Errorf("inject: %w", err)
				}
				continue
			}
		}
		// A signal (or another stop) on the way: the loop's, later.
		th.Defer(ws)
		if err := ptrace.TraceSyscall(tid); err != nil {
			return 0, true, fmt.Errorf("inject: %w", err)
		}
	}
	if err := ptrace.GetRegs(tid, &regs); err != nil {
		return 0, true, fmt.Errorf("inject: %w", err)
	}
	// The thread now sits in a system-call exit stop, where the kernel
	// does not restart an interrupted call on its own unless a signal is
	// pending: restart it here, unless a signal waits to be delivered at
	// this stop (the kernel then decides as it would have).
	final := th.Restore(saved)
	if !th.SignalsHeld() {
		final = Abandoned(final)
		final.Orig_rax = ^uint64(0)
	}
	if err := ptrace.SetRegs(tid, &final); err != nil {
		return 0, true, fmt.Errorf("inject: restore: %w", err)
	}
	return regs.Rax, true, nil
}
