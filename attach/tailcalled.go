package attach

import (
	"encoding/binary"

	"github.com/profile-dev/profile/attach/internal/ptrace"
	"github.com/profile-dev/profile/instrument"
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
	target, ok := callTarget(t.tid, as, inner.RA)
	if !ok {
		return model.None, 0, 0
	}
	fn, start := e.tracedAt(as, target)
	if fn == model.None || start != target || e.counted[fn] {
		return model.None, 0, 0
	}
	return fn, start, sp
}

// callTarget is where the call instruction that returns to ret went
// (instrument.DecodeCalls on the original bytes before ret): a call rel32,
// through a PLT stub's GOT slot, or through a GOT slot (-fno-plt), each
// slot read in the process.
func callTarget(tid int, as *space, ret uint64) (uint64, bool) {
	code := make([]byte, instrument.CallLookback)
	if ptrace.ReadMem(tid, ret-uint64(len(code)), code) != nil {
		return 0, false
	}
	as.origBytes(ret-uint64(len(code)), code)
	for _, c := range instrument.DecodeCalls(code, ret, as.isPLT) {
		switch {
		case c.Rel && c.Kind == instrument.KindPLT:
			m := as.moduleAt(c.Target)
			if slot, ok := m.mod.PLTSlot(c.Target - m.bias); ok {
				return readPtr(tid, slot+m.bias)
			}
		case c.Rel:
			return c.Target, true
		case c.Slot != 0:
			return readPtr(tid, c.Slot)
		}
	}
	return 0, false
}

// readPtr reads the 8-byte pointer at addr.
func readPtr(tid int, addr uint64) (uint64, bool) {
	var w [8]byte
	if ptrace.ReadMem(tid, addr, w[:]) != nil {
		return 0, false
	}
	return binary.LittleEndian.Uint64(w[:]), true
}
