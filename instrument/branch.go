package instrument

import (
	"errors"

	"golang.org/x/arch/x86/x86asm"
)

// isShortCond reports the conditional relative branches: jcc (rel8 and
// rel32 forms) and the rel8-only loop/loope/loopne/jrcxz/jecxz.
func isShortCond(op x86asm.Op) bool {
	switch op {
	case x86asm.JA, x86asm.JAE, x86asm.JB, x86asm.JBE, x86asm.JE, x86asm.JG, x86asm.JGE,
		x86asm.JL, x86asm.JLE, x86asm.JNE, x86asm.JNO, x86asm.JNP, x86asm.JNS, x86asm.JO,
		x86asm.JP, x86asm.JS,
		x86asm.LOOP, x86asm.LOOPE, x86asm.LOOPNE, x86asm.JRCXZ, x86asm.JECXZ:
		return true
	}
	return false
}

// shortCond returns the rel8 form of conditional branch inst (its
// displacement, the last byte, left 0): every condition has one.
func shortCond(code []byte, inst x86asm.Inst) ([]byte, error) {
	op := code[inst.PCRelOff-1] // 7x (jcc rel8), 0f 8x (jcc rel32) or e0..e3
	switch {
	case op >= 0x70 && op <= 0x7f, op >= 0x80 && op <= 0x8f:
		return []byte{0x70 | op&0x0f, 0}, nil
	case op >= 0xe0 && op <= 0xe3:
		if inst.AddrSize == 32 { // loopd/jecxz count in ecx
			return []byte{0x67, op, 0}, nil
		}
		return []byte{op, 0}, nil
	}
	return nil, errors.New("unexpected conditional branch encoding")
}

// condBranch builds the out-of-line form of a conditional branch:
//
//	slot:   [67] cond rel8 → taken   ; same condition, now over the next jump
//	        jmp addr+len             ; not taken: fall through
//	taken:  jmp target               ; taken: the original target
//
// The CPU evaluates the condition itself, so flags, rcx (loop) and the
// address size of jecxz/loop need no emulation. Every condition has a rel8
// form and the jump over is at most 14 bytes, so rel8 always reaches.
func condBranch(code []byte, inst x86asm.Inst, addr, slot uint64) ([]byte, error) {
	br, err := shortCond(code, inst)
	if err != nil {
		return nil, err
	}
	next := addr + uint64(inst.Len)
	target := next + uint64(pcRel(code, inst))
	fall := slot + uint64(len(br))
	br[len(br)-1] = byte(jumpLen(fall, next))
	out := appendJump(br, fall, next)
	return appendJump(out, slot+uint64(len(out)), target), nil
}
