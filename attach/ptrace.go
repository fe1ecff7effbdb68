package attach

import (
	"fmt"
	"os"
	"strconv"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The raw ptrace requests the engine uses. Every call must come from the
// engine's locked OS thread (see loop.go): ptrace requests for a tracee
// from any other thread fail with ESRCH.

// PTRACE_O_TRACESYSGOOD marks system-call stops (SIGTRAP|0x80), which
// only the injection chain asks for (PTRACE_SYSCALL).
const traceOptions = unix.PTRACE_O_TRACECLONE | unix.PTRACE_O_TRACEFORK | unix.PTRACE_O_TRACEVFORK |
	unix.PTRACE_O_TRACEEXEC | unix.PTRACE_O_TRACEEXIT | unix.PTRACE_O_TRACEVFORKDONE | unix.PTRACE_O_TRACESYSGOOD

// siKernel is si_code of a SIGTRAP raised by an int3.
const siKernel = 0x80

// ptrace issues a request whose addr and data are numbers (remote
// addresses, signals, options). The requests never block, so the raw form
// skips the runtime's syscall bookkeeping: it shows at two stops per call.
func ptrace(req int, pid int, addr, data uintptr) error {
	faultPoint()
	_, _, e := unix.RawSyscall6(unix.SYS_PTRACE, uintptr(req), uintptr(pid), addr, data, 0, 0)
	if e != 0 {
		return e
	}
	return nil
}

// ptracePtr issues a request whose data is a buffer of ours. The pointer
// is converted in the system call's own argument list, the one place the
// Go runtime keeps it valid: converted by a caller and passed on as a
// uintptr, it would still point to the old stack after the call grows the
// goroutine's stack, and the kernel would read or write freed memory
// (registers read as zeros, or garbage written into a thread's registers).
func ptracePtr(req int, pid int, addr uintptr, data unsafe.Pointer) error {
	faultPoint()
	_, _, e := unix.RawSyscall6(unix.SYS_PTRACE, uintptr(req), uintptr(pid), addr, uintptr(data), 0, 0)
	if e != 0 {
		return e
	}
	return nil
}

func seize(pid int) error { return ptrace(unix.PTRACE_SEIZE, pid, 0, traceOptions) }

func interrupt(tid int) error { return ptrace(unix.PTRACE_INTERRUPT, tid, 0, 0) }

func cont(tid, sig int) error { return ptrace(unix.PTRACE_CONT, tid, 0, uintptr(sig)) }

func listen(tid int) error { return ptrace(unix.PTRACE_LISTEN, tid, 0, 0) }

func detach(tid, sig int) error { return ptrace(unix.PTRACE_DETACH, tid, 0, uintptr(sig)) }

func getRegs(tid int, r *unix.PtraceRegs) error {
	return ptracePtr(unix.PTRACE_GETREGS, tid, 0, unsafe.Pointer(r))
}

func setRegs(tid int, r *unix.PtraceRegs) error {
	return ptracePtr(unix.PTRACE_SETREGS, tid, 0, unsafe.Pointer(r))
}

// sigMask reads stopped thread tid's mask of blocked signals.
func sigMask(tid int) (uint64, error) {
	var m uint64
	err := ptracePtr(unix.PTRACE_GETSIGMASK, tid, 8, unsafe.Pointer(&m))
	return m, err
}

func eventMsg(tid int) (uint, error) { return unix.PtraceGetEventMsg(tid) }

// sigInfo holds the fields of siginfo_t the engine reads.
type sigInfo struct {
	Signo int32
	Errno int32
	Code  int32
	_     int32
	Addr  uint64 // si_addr for SIGSEGV/SIGBUS/SIGILL/SIGFPE
	_     [112]byte
}

// Pid is si_pid of a signal sent by kill, tgkill or sigqueue.
func (si *sigInfo) Pid() int32 { return int32(uint32(si.Addr)) }

func setSigInfo(tid int, si *sigInfo) error {
	return ptracePtr(unix.PTRACE_SETSIGINFO, tid, 0, unsafe.Pointer(si))
}

func getSigInfo(tid int) (sigInfo, error) {
	var si sigInfo
	err := ptracePtr(unix.PTRACE_GETSIGINFO, tid, 0, unsafe.Pointer(&si))
	return si, err
}

// readMem reads len(buf) bytes at addr with one process_vm_readv.
func readMem(pid int, addr uint64, buf []byte) error {
	if len(buf) == 0 {
		return nil
	}
	local := unix.Iovec{Base: &buf[0]}
	local.SetLen(len(buf))
	remote := unix.RemoteIovec{Base: uintptr(addr), Len: len(buf)}
	r, _, e := unix.RawSyscall6(unix.SYS_PROCESS_VM_READV, uintptr(pid),
		uintptr(unsafe.Pointer(&local)), 1, uintptr(unsafe.Pointer(&remote)), 1, 0)
	n := int(r)
	var err error
	if e != 0 {
		err = e
	}
	if err != nil {
		return fmt.Errorf("read %d bytes at %#x in %d: %w", len(buf), addr, pid, err)
	}
	if n != len(buf) {
		return fmt.Errorf("read %d bytes at %#x in %d: short read (%d)", len(buf), addr, pid, n)
	}
	return nil
}

// writeMem writes buf at addr with one process_vm_writev (writable
// mappings only: the stack, the out-of-line area).
func writeMem(pid int, addr uint64, buf []byte) error {
	faultPoint()
	if len(buf) == 0 {
		return nil
	}
	local := []unix.Iovec{{Base: &buf[0]}}
	local[0].SetLen(len(buf))
	remote := []unix.RemoteIovec{{Base: uintptr(addr), Len: len(buf)}}
	n, err := unix.ProcessVMWritev(pid, local, remote, 0)
	if err != nil {
		return fmt.Errorf("write %d bytes at %#x in %d: %w", len(buf), addr, pid, err)
	}
	if n != len(buf) {
		return fmt.Errorf("write at %#x in %d: short write", addr, pid)
	}
	return nil
}

// pokeText writes buf at addr through ptrace, which may write read-only
// text: read-modify-write of aligned words.
func pokeText(tid int, addr uint64, buf []byte) error {
	faultPoint()
	if len(buf) == 0 {
		return nil
	}
	// One write through /proc/TID/mem, which writes read-only text as
	// ptrace does: a word's PTRACE_PEEKTEXT and PTRACE_POKETEXT wait for
	// the stopped thread each. A kernel that refuses such writes
	// (proc_mem.force_override=never) gets the words.
	if f, err := openText(tid); err == nil {
		n, err := f.WriteAt(buf, int64(addr))
		f.Close()
		if err == nil && n == len(buf) {
			return nil
		}
	}
	return pokeWords(tid, addr, buf)
}

// openText opens the memory of task tid for writing its text.
func openText(tid int) (*os.File, error) {
	return os.OpenFile("/proc/"+strconv.Itoa(tid)+"/mem", os.O_WRONLY, 0)
}

// pokeWords writes buf at addr word by word with ptrace.
func pokeWords(tid int, addr uint64, buf []byte) error {
	start := addr &^ 7
	end := (addr + uint64(len(buf)) + 7) &^ 7
	for w := start; w < end; w += 8 {
		var word [8]byte
		if _, err := unix.PtracePeekText(tid, uintptr(w), word[:]); err != nil {
			return fmt.Errorf("peek %#x: %w", w, err)
		}
		for i := 0; i < 8; i++ {
			a := w + uint64(i)
			if a >= addr && a < addr+uint64(len(buf)) {
				word[i] = buf[a-addr]
			}
		}
		if _, err := unix.PtracePokeText(tid, uintptr(w), word[:]); err != nil {
			return fmt.Errorf("poke %#x: %w", w, err)
		}
	}
	return nil
}

// spinBudget is how many times peek polls before it sleeps. A stop that
// follows within microseconds (the next call of a hot function) is then
// picked up without the tracer's CPU going idle and being woken again,
// which costs tens of microseconds when tracer and tracee run on
// different CPUs. On a single CPU polling would only take the CPU from
// the tracee: no polling there.
func spinBudget() int {
	var set unix.CPUSet
	if unix.SchedGetaffinity(0, &set) != nil || set.Count() < 2 {
		return 0
	}
	return 2000
}

// peek waits for any tracee (or child) with __WALL, like wait4, but leaves
// the stop unreaped (waitid with WNOWAIT): a stopped tracee keeps its
// pending signal while the tracer looks at it; waitTid then reaps it. It
// polls spin times first.
func peek(spin int) (int, unix.WaitStatus, error) {
	var si waitInfo
	const opts = unix.WEXITED | unix.WSTOPPED | unix.WALL | unix.WNOWAIT
	for i := 0; ; i++ {
		flags := opts
		if i < spin {
			flags |= unix.WNOHANG
		}
		si = waitInfo{}
		var e unix.Errno
		if flags&unix.WNOHANG != 0 {
			// Polling never blocks: skip the runtime's syscall bookkeeping.
			_, _, e = unix.RawSyscall6(unix.SYS_WAITID, unix.P_ALL, 0, uintptr(unsafe.Pointer(&si)), uintptr(flags), 0, 0)
		} else {
			_, _, e = unix.Syscall6(unix.SYS_WAITID, unix.P_ALL, 0, uintptr(unsafe.Pointer(&si)), uintptr(flags), 0, 0)
		}
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			return 0, 0, e
		}
		if si.Pid != 0 {
			return int(si.Pid), si.status(), nil
		}
	}
}

// waitInfo is siginfo_t as waitid fills it.
type waitInfo struct {
	Signo, Errno, Code, _ int32
	Pid, UID, Status      int32
	_                     [100]byte
}

// status is the wait4 status of what waitid reported.
func (w *waitInfo) status() unix.WaitStatus {
	switch w.Code {
	case 1: // CLD_EXITED
		return unix.WaitStatus(w.Status << 8)
	case 2: // CLD_KILLED
		return unix.WaitStatus(w.Status)
	case 3: // CLD_DUMPED
		return unix.WaitStatus(w.Status | 0x80)
	}
	return unix.WaitStatus(w.Status<<8 | 0x7f) // CLD_TRAPPED, CLD_STOPPED
}

// reap collects a stop peek reported: it is there, so the wait never
// blocks and the raw form skips the runtime's syscall bookkeeping.
func reap(tid int) (unix.WaitStatus, error) {
	var ws unix.WaitStatus
	for {
		r, _, e := unix.RawSyscall6(unix.SYS_WAIT4, uintptr(tid), uintptr(unsafe.Pointer(&ws)), unix.WALL|unix.WNOHANG, 0, 0, 0)
		switch {
		case e == unix.EINTR:
			continue
		case e != 0:
			return ws, e
		case r == 0:
			return ws, unix.ECHILD // not there after all
		}
		return ws, nil
	}
}

// waitTid waits for one task.
func waitTid(tid int) (unix.WaitStatus, error) {
	var ws unix.WaitStatus
	for {
		_, err := unix.Wait4(tid, &ws, unix.WALL, nil)
		if err == unix.EINTR {
			continue
		}
		return ws, err
	}
}

// event is the PTRACE_EVENT_* of a stop (status>>16), 0 for none. Unlike
// WaitStatus.TrapCause it also reads group-stops, whose signal is not
// SIGTRAP.
func event(ws unix.WaitStatus) int { return int(uint32(ws) >> 16) }

// traceSyscall resumes tid to its next system-call entry or exit stop.
func traceSyscall(tid int) error { return ptrace(unix.PTRACE_SYSCALL, tid, 0, 0) }

// Ops of PTRACE_GET_SYSCALL_INFO: what kind of stop a thread is in.
const (
	syscallNone  = 0
	syscallEntry = 1
	syscallExit  = 2
)

// syscallOp tells whether stopped thread tid is at a system-call entry or
// exit stop (PTRACE_GET_SYSCALL_INFO: op is its first byte).
func syscallOp(tid int) (byte, error) {
	var info [88]byte
	err := ptracePtr(unix.PTRACE_GET_SYSCALL_INFO, tid, uintptr(len(info)), unsafe.Pointer(&info[0]))
	return info[0], err
}
