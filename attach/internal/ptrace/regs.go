package ptrace

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// GetRegs reads a stopped task's registers.
func GetRegs(tid int, r *unix.PtraceRegs) error {
	return requestPtr(unix.PTRACE_GETREGS, tid, 0, unsafe.Pointer(r))
}

// SetRegs writes a stopped task's registers.
func SetRegs(tid int, r *unix.PtraceRegs) error {
	return requestPtr(unix.PTRACE_SETREGS, tid, 0, unsafe.Pointer(r))
}

// SigMask reads stopped thread tid's mask of blocked signals.
func SigMask(tid int) (uint64, error) {
	var m uint64
	err := requestPtr(unix.PTRACE_GETSIGMASK, tid, 8, unsafe.Pointer(&m))
	return m, err
}

// EventMsg reads the message of a stop's event (a new task's id, an exit
// status).
func EventMsg(tid int) (uint, error) { return unix.PtraceGetEventMsg(tid) }
