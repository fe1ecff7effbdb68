package ptrace

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// SIKernel is si_code of a SIGTRAP raised by an int3.
const SIKernel = 0x80

// SigInfo holds the fields of siginfo_t the engine reads.
type SigInfo struct {
	Signo int32
	Errno int32
	Code  int32
	_     int32
	Addr  uint64 // si_addr for SIGSEGV/SIGBUS/SIGILL/SIGFPE
	_     [112]byte
}

// Pid is si_pid of a signal sent by kill, tgkill or sigqueue.
func (si *SigInfo) Pid() int32 { return int32(uint32(si.Addr)) }

// SetSigInfo replaces the siginfo of a stopped task's pending signal.
func SetSigInfo(tid int, si *SigInfo) error {
	return requestPtr(unix.PTRACE_SETSIGINFO, tid, 0, unsafe.Pointer(si))
}

// GetSigInfo reads the siginfo of the signal a task stopped for.
func GetSigInfo(tid int) (SigInfo, error) {
	var si SigInfo
	err := requestPtr(unix.PTRACE_GETSIGINFO, tid, 0, unsafe.Pointer(&si))
	return si, err
}

// Ops of PTRACE_GET_SYSCALL_INFO: what kind of stop a thread is in.
const (
	SyscallNone  = 0
	SyscallEntry = 1
	SyscallExit  = 2
)

// SyscallOp tells whether stopped thread tid is at a system-call entry or
// exit stop (PTRACE_GET_SYSCALL_INFO: op is its first byte).
func SyscallOp(tid int) (byte, error) {
	var info [88]byte
	err := requestPtr(unix.PTRACE_GET_SYSCALL_INFO, tid, uintptr(len(info)), unsafe.Pointer(&info[0]))
	return info[0], err
}
