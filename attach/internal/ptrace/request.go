package ptrace

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// PTRACE_O_TRACESYSGOOD marks system-call stops (SIGTRAP|0x80), which
// only the injection chain asks for (PTRACE_SYSCALL).
const traceOptions = unix.PTRACE_O_TRACECLONE | unix.PTRACE_O_TRACEFORK | unix.PTRACE_O_TRACEVFORK |
	unix.PTRACE_O_TRACEEXEC | unix.PTRACE_O_TRACEEXIT | unix.PTRACE_O_TRACEVFORKDONE | unix.PTRACE_O_TRACESYSGOOD

// request issues a request whose addr and data are numbers (remote
// addresses, signals, options). The requests never block, so the raw form
// skips the runtime's syscall bookkeeping: it shows at two stops per call.
func request(req int, pid int, addr, data uintptr) error {
	faultPoint()
	_, _, e := unix.RawSyscall6(unix.SYS_PTRACE, uintptr(req), uintptr(pid), addr, data, 0, 0)
	if e != 0 {
		return e
	}
	return nil
}

// requestPtr issues a request whose data is a buffer of ours. The pointer
// is converted in the system call's own argument list, the one place the
// Go runtime keeps it valid: converted by a caller and passed on as a
// uintptr, it would still point to the old stack after the call grows the
// goroutine's stack, and the kernel would read or write freed memory
// (registers read as zeros, or garbage written into a thread's registers).
func requestPtr(req int, pid int, addr uintptr, data unsafe.Pointer) error {
	faultPoint()
	_, _, e := unix.RawSyscall6(unix.SYS_PTRACE, uintptr(req), uintptr(pid), addr, uintptr(data), 0, 0)
	if e != 0 {
		return e
	}
	return nil
}

// Seize traces task pid with the engine's options (clone, fork, vfork,
// exec and exit events; system-call stops marked).
func Seize(pid int) error { return request(unix.PTRACE_SEIZE, pid, 0, traceOptions) }

// Interrupt stops a seized task (PTRACE_EVENT_STOP).
func Interrupt(tid int) error { return request(unix.PTRACE_INTERRUPT, tid, 0, 0) }

// Cont resumes a stopped task, delivering sig (0: none).
func Cont(tid, sig int) error { return request(unix.PTRACE_CONT, tid, 0, uintptr(sig)) }

// Listen resumes a task in a group-stop without ending the stop.
func Listen(tid int) error { return request(unix.PTRACE_LISTEN, tid, 0, 0) }

// Detach lets a stopped task go, delivering sig (0: none).
func Detach(tid, sig int) error { return request(unix.PTRACE_DETACH, tid, 0, uintptr(sig)) }

// Step runs one instruction of a stopped task.
func Step(tid int) error { return request(unix.PTRACE_SINGLESTEP, tid, 0, 0) }

// TraceSyscall resumes tid to its next system-call entry or exit stop.
func TraceSyscall(tid int) error { return request(unix.PTRACE_SYSCALL, tid, 0, 0) }
