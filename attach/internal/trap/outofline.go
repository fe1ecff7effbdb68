package trap

import (
	"encoding/binary"

	"golang.org/x/arch/x86/x86asm"

	"github.com/profile-dev/profile/instrument"
)

// InCopy tells whether pc is in b's out-of-line copy.
func (b *BP) InCopy(pc uint64) bool {
	p := &b.Plan
	return p.Emulate == instrument.EmuNone && pc >= p.Slot && pc < p.Slot+uint64(len(p.OOL))
}

// Back maps a pc inside b's out-of-line copy to the original code: the
// first instruction has not run yet (go on at b.Addr); any later one is a
// jump whose target is where the thread is going.
func (b *BP) Back(pc uint64) (uint64, bool) {
	if !b.InCopy(pc) {
		return 0, false
	}
	if pc == b.Plan.Slot {
		return b.Addr, true
	}
	code := b.Plan.OOL[pc-b.Plan.Slot:]
	inst, err := x86asm.Decode(code, 64)
	if err != nil || inst.Op != x86asm.JMP {
		return 0, false
	}
	switch a := inst.Args[0].(type) {
	case x86asm.Rel:
		return pc + uint64(inst.Len) + uint64(int64(a)), true
	case x86asm.Mem:
		if a.Base == x86asm.RIP && len(code) >= inst.Len+int(a.Disp)+8 {
			at := inst.Len + int(a.Disp)
			return binary.LittleEndian.Uint64(code[at:]), true
		}
	}
	return 0, false
}
