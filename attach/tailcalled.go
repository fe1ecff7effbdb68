package attach

import (
	"encoding/binary"

	"github.com/profile-dev/profile/attach/internal/ptrace"
	"github.com/profile-dev/profile/instrument/unwind"
	"github.com/profile-dev/profile/model"
)

// tailCalled finds a traced function a thread is inside at attach
// although no frame of it is on the stack: its caller, traced frame
// frames[i], called it, and it tail-jumped to an untraced function,
// frames[i-1] (pthread_join jumps to __pthread_clockjoin_ex, where the
// thread waits). The call before frames[i-1]'s return address names it.
// It returns the function, its entry and the stack slot holding that
// return address; model.None if there is none such.
func (e *engine) tailCalled(t *thread, frames []unwind.Frame, i int) (int, uint64, uint64) {
	if i < 1 {
		return model.None, 0, 0
	}
	inner := frames[i-1]
	pc := inner.PC
	if i-1 > 0 {
		pc--
	}
	as := t.proc.as
	if fn, _ := e.tracedAt(as, pc); fn != model.None || inner.RA == 0 {
		return model.None, 0, 0 // a traced frame: an ordinary call
	}
	sp := inner.CFA - 8
	var slot [8]byte
	if ptrace.ReadMem(t.tid, sp, slot[:]) != nil || binary.LittleEndian.Uint64(slot[:]) != inner.RA {
		return model.None, 0, 0
	}
	target, ok := callTarget(t.tid, inner.RA)
	if !ok {
		return model.None, 0, 0
	}
	fn, start := e.tracedAt(as, target)
	if fn == model.None || start != target || e.counted[fn] {
		return model.None, 0, 0
	}
	return fn, start, sp
}

// callTarget is where the call instruction that returns to ret went: a
// call rel32, a call through a GOT slot (-fno-plt), and through a PLT
// stub's jump to its GOT slot, each followed to the function.
func callTarget(tid int, ret uint64) (uint64, bool) {
	var b [6]byte
	if ret < 6 || ptrace.ReadMem(tid, ret-6, b[:]) != nil {
		return 0, false
	}
	var to uint64
	switch {
	case b[1] == 0xe8: // call rel32
		to = ret + uint64(int64(int32(binary.LittleEndian.Uint32(b[2:]))))
	case b[0] == 0xff && b[1] == 0x15: // call *disp32(%rip)
		return readPtr(tid, ret+uint64(int64(int32(binary.LittleEndian.Uint32(b[2:])))))
	default:
		return 0, false
	}
	// A PLT stub: [endbr64] [bnd] jmp *disp32(%rip).
	var s [16]byte
	if ptrace.ReadMem(tid, to, s[:]) != nil {
		return to, true
	}
	at := 0
	if s[0] == 0xf3 && s[1] == 0x0f && s[2] == 0x1e && s[3] == 0xfa {
		at = 4
	}
	if s[at] == 0xf2 {
		at++
	}
	if s[at] != 0xff || s[at+1] != 0x25 {
		return to, true
	}
	next := to + uint64(at+6)
	return readPtr(tid, next+uint64(int64(int32(binary.LittleEndian.Uint32(s[at+2:])))))
}

// readPtr reads the 8-byte pointer at addr.
func readPtr(tid int, addr uint64) (uint64, bool) {
	var w [8]byte
	if ptrace.ReadMem(tid, addr, w[:]) != nil {
		return 0, false
	}
	return binary.LittleEndian.Uint64(w[:]), true
}
