package heal

import (
	"encoding/binary"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/profile-dev/profile/attach/internal/ptrace"
)

// The park handler (healcode/heal.S at park_handler) holds still a thread
// ptrace cannot stop, one another tracer has, while the tracer changes
// code: asked by a queued SIGURG, it publishes where the thread was
// interrupted and waits until let go, or until the tracer has gone quiet
// past the deadline the tracer keeps ahead of the clock.

const (
	siQueue   = ^uint64(0) // SI_QUEUE, -1
	parkMagic = 0x4b524150 // "PARK"
)

// ParkState is a park slot's state word.
type ParkState uint64

// The states a slot goes through: asked by the tracer, parked by the
// thread, released by the tracer; left by a thread that found the
// deadline passed.
const (
	ParkIdle ParkState = iota
	ParkAsked
	ParkParked
	ParkReleased
	ParkLeft
)

// ParkHandler is the park handler's address in the area at base.
func ParkHandler(base uint64) uint64 { return base + parkHandler }

// ParkOldAct and ParkNewAct are where the area at base keeps the
// program's own SIGURG disposition and ours.
func ParkOldAct(base uint64) uint64 { return base + parkOldAct }
func ParkNewAct(base uint64) uint64 { return base + parkNewAct }

// ParkAction is the SIGURG disposition that makes the park handler of the
// area at base the handler. It keeps the program's mask and stack and
// deferral flags, so chaining to its handler behaves as before, and
// restarts the system calls a park interrupts unless the program's own
// handler asked not to.
func ParkAction(base uint64, old SigAction) SigAction {
	flags := SaSiginfo | SaRestorer | old.Flags&(SaOnstack|SaNodefer|SaRestart)
	if old.Handler <= 1 { // SIG_DFL, SIG_IGN: the program never sees one
		flags |= SaRestart
	}
	return SigAction{Handler: ParkHandler(base), Flags: flags, Restorer: Restorer(base), Mask: old.Mask}
}

// ParkOldOf is the SIGURG disposition the park handler of the area at
// base chains to (a killed profiler's handler is taken back through it).
func ParkOldOf(tid int, base uint64) (SigAction, bool) {
	a, err := ReadAct(tid, ParkOldAct(base))
	return a, err == nil
}

// SetParkCookie writes the cookie the handler checks each ask against: a
// program's own queued SIGURG is not taken for one.
func (h *Area) SetParkCookie(tid int, cookie uint32) error {
	return h.put(tid, parkCookie, uint64(cookie))
}

// SetParkDeadline sets the CLOCK_MONOTONIC time (ns) past which a parked
// thread leaves by itself.
func (h *Area) SetParkDeadline(tid int, ns int64) error {
	return h.put(tid, parkDeadline, uint64(ns))
}

func (h *Area) put(tid int, off, v uint64) error {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	return ptrace.WriteMem(tid, h.Base+off, b[:])
}

func (h *Area) slot(i int) uint64 { return h.Base + parkSlots + uint64(i)*parkSlotSize }

// SetPark writes slot i's state (through stopped thread tid).
func (h *Area) SetPark(tid, i int, s ParkState) error { return h.put(tid, h.slot(i)-h.Base, uint64(s)) }

// Park reads slot i: its state and, once parked, where its thread was
// interrupted.
func (h *Area) Park(tid, i int) (ParkState, uint64, error) {
	var b [24]byte
	if err := ptrace.ReadMem(tid, h.slot(i), b[:]); err != nil {
		return 0, 0, err
	}
	return ParkState(binary.LittleEndian.Uint64(b[:])), binary.LittleEndian.Uint64(b[16:]), nil
}

// AskPark queues the park signal for thread target of process pid, for
// slot i of an area whose cookie is cookie.
func AskPark(pid, target, i int, cookie uint32) error {
	var si [128]byte
	binary.LittleEndian.PutUint32(si[0:], uint32(unix.SIGURG))
	binary.LittleEndian.PutUint32(si[4:], parkMagic)
	binary.LittleEndian.PutUint32(si[8:], uint32(siQueue&0xffffffff))
	binary.LittleEndian.PutUint32(si[16:], uint32(unix.Getpid()))
	binary.LittleEndian.PutUint32(si[20:], uint32(unix.Getuid()))
	binary.LittleEndian.PutUint32(si[24:], uint32(i))
	binary.LittleEndian.PutUint32(si[28:], cookie)
	_, _, e := unix.Syscall6(unix.SYS_RT_TGSIGQUEUEINFO, uintptr(pid), uintptr(target), uintptr(unix.SIGURG),
		uintptr(unsafe.Pointer(&si[0])), 0, 0)
	if e != 0 {
		return fmt.Errorf("signal thread %d: %w", target, e)
	}
	return nil
}

// InUseNow reads how many threads are inside the area's handlers.
func (h *Area) InUseNow(tid int) (uint64, error) {
	var b [8]byte
	if err := ptrace.ReadMem(tid, h.Base+inUse, b[:]); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b[:]), nil
}
