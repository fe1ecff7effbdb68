package attach

import (
	"encoding/binary"
	"fmt"
	"os"

	"github.com/profile-dev/profile/attach/internal/procfs"
	"github.com/profile-dev/profile/attach/internal/ptrace"
	"github.com/profile-dev/profile/instrument"

	"golang.org/x/sys/unix"
)

// The injection chain: code that runs one system call and then gives the
// thread all its registers back and jumps to where it was, by itself.
// Injected with `syscall; int3`, a thread the tracer leaves (it is killed)
// runs the int3 and dies by SIGTRAP unless our handler is in place; with
// the chain it goes on as if nothing happened, and at worst a mapping is
// left over. The tracer stops the thread at the call's exit (PTRACE_SYSCALL)
// instead of at a trap. The code lives in the slack of the program's last
// text page (instrument.Slack), which exists before anything of ours does.
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
var chainCode = []byte{
	0x0f, 0x05,
	0x58, 0x59, 0x5a, 0x5b, 0x5d, 0x5e, 0x5f,
	0x41, 0x58, 0x41, 0x59, 0x41, 0x5a, 0x41, 0x5b, 0x41, 0x5c, 0x41, 0x5d, 0x41, 0x5e, 0x41, 0x5f,
	0x9d,
	0x5c,
	0xff, 0x25, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0,
}

const (
	chainResume = 33     // offset of the resume address, the last 8 bytes
	chainBlock  = 17 * 8 // registers popped: 15, flags, rsp
	redZone     = 128
)

// chainValues are the registers in the order the chain pops them.
func chainValues(r unix.PtraceRegs) []uint64 {
	return []uint64{r.Rax, r.Rcx, r.Rdx, r.Rbx, r.Rbp, r.Rsi, r.Rdi,
		r.R8, r.R9, r.R10, r.R11, r.R12, r.R13, r.R14, r.R15, r.Eflags, r.Rsp}
}

// setupChain writes the chain into the slack of the executable or of the
// dynamic linker of stopped thread tid's process. Without slack (about one
// file in a hundred) injections keep `syscall; int3`.
func (e *engine) setupChain(tid int, as *space) {
	if as.chain != 0 {
		return
	}
	pid := procfs.Tgid(tid)
	maps, err := instrument.ReadMaps(pid)
	if err != nil {
		return
	}
	aux, err := auxv(pid)
	if err != nil {
		return
	}
	var paths []string
	for _, at := range []uint64{atEntry, atBase} {
		for _, m := range maps {
			if a := aux[at]; a >= m.Start && a < m.End && m.FileBacked() {
				paths = append(paths, m.Path)
				break
			}
		}
	}
	addr, ok := instrument.Slack(maps, paths, uint64(len(chainCode)))
	if !ok {
		return
	}
	// The slack's bytes are its file's: a chain a killed profiler left
	// there is not put back at detach.
	orig, err := fileBytes(pid, maps, addr, len(chainCode))
	if err != nil {
		orig = make([]byte, len(chainCode))
		if ptrace.ReadMem(tid, addr, orig) != nil {
			return
		}
	}
	if ptrace.PokeText(tid, addr, chainCode) != nil {
		return
	}
	as.chain, as.chainOrig = addr, orig
}

// removeChain puts the slack's bytes back, after the last injection.
func (e *engine) removeChain(tid int, as *space) {
	if as.chain != 0 {
		ptrace.PokeText(tid, as.chain, as.chainOrig)
		as.chain = 0
	}
}

// injectChained is injectSyscall through the chain. ok is false when the
// chain cannot be used for this thread (its stack is not writable): the
// caller falls back to `syscall; int3`.
func (e *engine) injectChained(t *thread, tid int, chain uint64, nr uint64, args []uint64) (r uint64, ok bool, err error) {
	var saved unix.PtraceRegs
	if err := ptrace.GetRegs(tid, &saved); err != nil {
		return 0, true, fmt.Errorf("inject: %w", err)
	}
	back := abandonRegs(restoreRegs(t, saved))
	block := make([]byte, chainBlock)
	for i, v := range chainValues(back) {
		binary.LittleEndian.PutUint64(block[8*i:], v)
	}
	sp := (back.Rsp - redZone - chainBlock) &^ 15
	var resume [8]byte
	binary.LittleEndian.PutUint64(resume[:], back.Rip)
	if ptrace.WriteMem(tid, sp, block) != nil || ptrace.PokeText(tid, chain+uint64(chainResume), resume[:]) != nil {
		return 0, false, nil
	}
	regs := saved
	regs.Rip, regs.Rsp, regs.Rax = chain, sp, nr
	regs.Orig_rax = ^uint64(0)
	argRegs := []*uint64{&regs.Rdi, &regs.Rsi, &regs.Rdx, &regs.R10, &regs.R8, &regs.R9}
	for i, a := range args {
		*argRegs[i] = a
	}
	if t != nil {
		e.markRip(t, chain)
	}
	if err := ptrace.SetRegs(tid, &regs); err != nil {
		return 0, true, fmt.Errorf("inject: %w", err)
	}
	if err := ptrace.TraceSyscall(tid); err != nil {
		return 0, true, fmt.Errorf("inject: %w", err)
	}
	if t != nil {
		t.unreaped = false
	}
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
		// A signal (or another stop) on the way: it is handled later.
		e.deferStop(tid, ws)
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
	final := restoreRegs(t, saved)
	if t == nil || len(t.sigs) == 0 {
		final = abandonRegs(final)
		final.Orig_rax = ^uint64(0)
	}
	if err := ptrace.SetRegs(tid, &final); err != nil {
		return 0, true, fmt.Errorf("inject: restore: %w", err)
	}
	return regs.Rax, true, nil
}

// auxv entries the tracer reads.
const (
	atBase  = 7 // the dynamic linker's load address
	atEntry = 9 // the program's entry point
)

// auxv reads a process's auxiliary vector.
func auxv(pid int) (map[uint64]uint64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/auxv", pid))
	if err != nil {
		return nil, err
	}
	out := map[uint64]uint64{}
	for i := 0; i+16 <= len(b); i += 16 {
		out[binary.LittleEndian.Uint64(b[i:])] = binary.LittleEndian.Uint64(b[i+8:])
	}
	return out, nil
}
