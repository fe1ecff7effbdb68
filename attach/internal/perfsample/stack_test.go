package perfsample

import (
	"encoding/binary"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// With stackBytes, the test's spinning thread's samples carry its user
// registers (the sample's IP among them, its stack pointer in the Go
// stack it runs on) and up to that many bytes of its stack, which hold
// the return address into its caller: an unwinder has what it needs.
func TestSamplesCarryStack(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	const stackBytes = 512
	tid := unix.Gettid()
	s, err := open(tid, period, false, stackBytes, ringPages(period, stackBytes))
	if err != nil {
		t.Skipf("the host refuses perf_event_open: %v", err)
	}
	defer s.Close()
	var here int
	sp := uint64(uintptr(unsafe.Pointer(&here))) // in the Go stack spin runs on
	spinFor(t, 200*time.Millisecond, nil)
	n, withStack, ipMatches, spNear := 0, 0, 0, 0
	s.Read(func(x Sample) {
		n++
		if !x.HasRegs || len(x.Stack) == 0 || len(x.Stack) > stackBytes {
			return
		}
		withStack++
		if x.Regs.IP == x.IP {
			ipMatches++
		}
		if x.Regs.SP < sp && sp-x.Regs.SP < 64<<10 {
			spNear++
		}
	})
	if n < 50 || withStack != n || ipMatches != n || spNear < n*9/10 {
		t.Errorf("%d samples: %d with registers and stack, %d with Regs.IP = IP, %d with SP just below the test's frame (%#x)",
			n, withStack, ipMatches, spNear, sp)
	}
}

// A record's registers and stack decode as the kernel lays them out; a
// thread without user registers (abi 0) has none.
func TestDecodeStack(t *testing.T) {
	b := make([]byte, 8+nRegs*8+8+16+8)
	binary.LittleEndian.PutUint64(b, unix.PERF_SAMPLE_REGS_ABI_64)
	for i := range nRegs {
		binary.LittleEndian.PutUint64(b[8+8*i:], uint64(i+1))
	}
	at := 8 + nRegs*8
	binary.LittleEndian.PutUint64(b[at:], 16)
	copy(b[at+8:], "0123456789abcdef")
	binary.LittleEndian.PutUint64(b[at+24:], 12) // dyn_size: what was read
	regs, stack, ok := decodeStack(b)
	want := UserRegs{BX: 1, BP: 2, SP: 3, IP: 4, R12: 5, R13: 6, R14: 7, R15: 8}
	if !ok || regs != want || string(stack) != "0123456789ab" {
		t.Errorf("decodeStack = %+v %q %v, want %+v %q", regs, stack, ok, want, "0123456789ab")
	}
	binary.LittleEndian.PutUint64(b, 0)
	if _, stack, ok := decodeStack(b); ok || stack != nil {
		t.Errorf("abi 0: %q %v, want no registers", stack, ok)
	}
}
