package ptrace

import (
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// SpinMax is the longest Peek should poll before it sleeps. A stop
// that follows within microseconds (the next call of a hot function) is
// then picked up without the tracer's CPU going idle and being woken
// again, which costs tens of microseconds when tracer and tracee run on
// different CPUs. On a single CPU polling would only take the CPU from
// the tracee: no polling there.
func SpinMax() time.Duration {
	var set unix.CPUSet
	if unix.SchedGetaffinity(0, &set) != nil || set.Count() < 2 {
		return 0
	}
	return 2 * time.Millisecond
}

// Peek waits for any tracee (or child) with __WALL, like wait4, but
// leaves the stop unreaped (waitid with WNOWAIT): a stopped tracee keeps
// its pending signal while the tracer looks at it; Wait or Reap then
// reaps it. It polls for spin first.
func Peek(spin time.Duration) (int, unix.WaitStatus, error) {
	var si waitInfo
	const opts = unix.WEXITED | unix.WSTOPPED | unix.WALL | unix.WNOWAIT
	var start time.Time
	if spin > 0 {
		start = time.Now()
	}
	for {
		flags := opts
		if spin > 0 && time.Since(start) < spin {
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

// Reap collects a stop Peek reported: it is there, so the wait never
// blocks and the raw form skips the runtime's syscall bookkeeping.
func Reap(tid int) (unix.WaitStatus, error) {
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

// Wait waits for one task.
func Wait(tid int) (unix.WaitStatus, error) {
	var ws unix.WaitStatus
	for {
		_, err := unix.Wait4(tid, &ws, unix.WALL, nil)
		if err == unix.EINTR {
			continue
		}
		return ws, err
	}
}

// WaitStopped waits for a child no longer traced to stop (WUNTRACED).
func WaitStopped(pid int) (unix.WaitStatus, error) {
	var ws unix.WaitStatus
	for {
		_, err := unix.Wait4(pid, &ws, unix.WALL|unix.WUNTRACED, nil)
		if err == unix.EINTR {
			continue
		}
		return ws, err
	}
}

// Event is the PTRACE_EVENT_* of a stop (status>>16), 0 for none. Unlike
// WaitStatus.TrapCause it also reads group-stops, whose signal is not
// SIGTRAP.
func Event(ws unix.WaitStatus) int { return int(uint32(ws) >> 16) }
