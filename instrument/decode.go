package instrument

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"golang.org/x/arch/x86/x86asm"
)

// endbr64 and endbr32 are the CET landing pads that start most functions
// built with -fcf-protection. x86asm does not know them (it decodes a lone
// "rep" prefix), so they are recognised here.
var (
	endbr64 = []byte{0xf3, 0x0f, 0x1e, 0xfa}
	endbr32 = []byte{0xf3, 0x0f, 0x1e, 0xfb}
)

func isEndbr(code []byte) bool {
	return bytes.HasPrefix(code, endbr64) || bytes.HasPrefix(code, endbr32)
}

// decodeInst decodes one 64-bit instruction. It reports an error for bytes
// x86asm accepts without naming an instruction, which it does for some
// encodings it does not know, so callers never act on a guessed length.
func decodeInst(code []byte) (x86asm.Inst, error) {
	if isEndbr(code) {
		return x86asm.Inst{Op: x86asm.NOP, Len: 4, Mode: 64, AddrSize: 64, DataSize: 32}, nil
	}
	inst, err := x86asm.Decode(code, 64)
	if err != nil {
		return inst, fmt.Errorf("decode % x: %w", head(code), err)
	}
	if inst.Op == 0 {
		return inst, fmt.Errorf("decode % x: unrecognized instruction", head(code))
	}
	return inst, nil
}

// head returns at most the first 15 bytes of code, the longest instruction,
// for error messages.
func head(code []byte) []byte { return code[:min(len(code), 15)] }

// pcRel returns the sign-extended PC-relative displacement or branch offset
// of inst, read from its encoding, which is less error-prone than the
// decoded argument (x86asm does not sign-extend rip-relative Mem.Disp).
func pcRel(code []byte, inst x86asm.Inst) int64 {
	b := code[inst.PCRelOff : inst.PCRelOff+inst.PCRel]
	switch inst.PCRel {
	case 1:
		return int64(int8(b[0]))
	case 2:
		return int64(int16(binary.LittleEndian.Uint16(b)))
	default:
		return int64(int32(binary.LittleEndian.Uint32(b)))
	}
}

// ripMem returns inst's rip-relative memory operand, if it has one.
func ripMem(inst x86asm.Inst) (x86asm.Mem, bool) {
	for _, a := range inst.Args {
		if m, ok := a.(x86asm.Mem); ok && (m.Base == x86asm.RIP || m.Base == x86asm.EIP) {
			return m, true
		}
	}
	return x86asm.Mem{}, false
}

// undecodable is the offset of a byte a walk could not decode.
type undecodable int

func (u undecodable) Error() string { return fmt.Sprintf("undecodable code at +%#x", int(u)) }

// walkCode decodes a function's code from its start, as every sweep does:
// VEX-encoded instructions (which x86asm does not know) are visited with
// a nil inst and their length, padding (int3s, zeros to the end) and the
// CET shadow-stack instructions (which never branch) are passed over. An
// undecodable byte ends the walk with an undecodable error; so does an
// error visit returns, as it is.
func walkCode(code []byte, visit func(off int, inst *x86asm.Inst, vexLen int) error) error {
	for off := 0; off < len(code); {
		if v, err := decodeVEX(code[off:]); !errors.Is(err, errNotVEX) {
			if err != nil {
				return undecodable(off)
			}
			if err := visit(off, nil, v.len); err != nil {
				return err
			}
			off += v.len
			continue
		}
		if code[off] == 0xcc || code[off] == 0x00 && allZero(code[off:]) {
			off++ // padding after the last instruction
			continue
		}
		if n := cetLen(code[off:]); n > 0 {
			off += n
			continue
		}
		inst, err := decodeInst(code[off:])
		if err != nil {
			return undecodable(off)
		}
		if err := visit(off, &inst, 0); err != nil {
			return err
		}
		off += inst.Len
	}
	return nil
}

// CoverLen is the length of the whole instructions at the start of code
// that cover at least n bytes (what a jump of n bytes written there
// replaces), or n where they cannot be decoded.
func CoverLen(code []byte, n int) int {
	l := 0
	for l < n {
		inst, err := decodeInst(code[l:])
		if err != nil {
			return n
		}
		l += inst.Len
	}
	return l
}
