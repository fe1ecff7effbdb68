package instrument

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/arch/x86/x86asm"
)

// An inline probe (DESIGN §3.4) replaces a function's first instructions
// by a jmp rel32 to its trampoline:
//
//	tramp:  push $id            ; the function's id for the entry stub
//	        call entry          ; records the entry, hijacks the return; ret $8
//	        <relocated prologue>
//	        jmp  At+Len         ; back behind the patch
const (
	// PatchLen is the length of the jump written over the prologue.
	PatchLen = 5
	// TrampMax bounds a trampoline: the header, at most PatchLen+14 bytes of
	// instructions (each short branch widened to 2+5+5 or 2+14+14 bytes) and
	// the jump back.
	TrampMax = 128
	trampHdr = 10 // push imm32 (5) + call rel32 (5)
)

// ErrCannotPatch is wrapped by PlanPatch's errors: the function keeps (or
// gets) a trap probe. The text after it is the reason, for --stats.
var ErrCannotPatch = errors.New("no inline probe")

// Patch is how to give one function an inline probe.
type Patch struct {
	Addr  uint64 // the function's entry
	At    uint64 // where the jump goes: Addr, or past an endbr64 (indirect calls still land on one)
	Len   int    // bytes replaced at At: whole instructions, at least PatchLen
	Orig  []byte // the original bytes at At
	Jump  []byte // the Len bytes written at At: jmp rel32 to the trampoline, int3 padding
	Tramp []byte // the trampoline, to be written at its address
}

// PlanPatch plans the inline probe of a function whose code (the whole
// function, size from the symbol table) is at runtime address addr. Its
// trampoline goes at tramp and calls the entry stub at entry with id. A
// function is refused when its first instructions cannot move: a call,
// return, system call, indirect jump or an instruction that must not run
// elsewhere; or when a branch of the function lands inside the replaced
// bytes, which would then execute half of the jump.
func PlanPatch(code []byte, addr, tramp, entry uint64, id uint32) (Patch, error) {
	p, err := planPatch(code, addr, tramp, entry, id)
	if err != nil {
		return Patch{}, fmt.Errorf("%w: %w", ErrCannotPatch, err)
	}
	return p, nil
}

func planPatch(code []byte, addr, tramp, entry uint64, id uint32) (Patch, error) {
	start := 0
	if isEndbr(code) {
		start = len(endbr64)
	}
	if len(code) < start+PatchLen {
		return Patch{}, fmt.Errorf("function of %d bytes is shorter than the jump", len(code))
	}
	p := Patch{Addr: addr, At: addr + uint64(start)}
	out := make([]byte, trampHdr, TrampMax)
	out[0] = 0x68
	binary.LittleEndian.PutUint32(out[1:], id)
	out[5] = 0xe8
	rel, ok := rel32(tramp+trampHdr, entry)
	if !ok {
		return Patch{}, errors.New("entry stub out of reach of the trampoline")
	}
	binary.LittleEndian.PutUint32(out[6:], uint32(rel))
	off, ended := start, false
	for off < start+PatchLen {
		if ended {
			return Patch{}, errors.New("jump in the prologue")
		}
		at := addr + uint64(off)
		slot := tramp + uint64(len(out))
		ins, n, last, err := relocateProbe(code[off:], at, slot)
		if err != nil {
			return Patch{}, err
		}
		out = append(out, ins...)
		off += n
		ended = last
	}
	p.Len = off - start
	if !ended {
		out = appendJump(out, tramp+uint64(len(out)), p.At+uint64(p.Len))
	}
	if len(out) > TrampMax {
		return Patch{}, fmt.Errorf("trampoline of %d bytes", len(out))
	}
	if err := branchesInto(code, addr, p.At+1, p.At+uint64(p.Len)); err != nil {
		return Patch{}, err
	}
	p.Orig = append([]byte(nil), code[start:off]...)
	p.Jump = make([]byte, p.Len)
	p.Jump[0] = 0xe9
	rel, ok = rel32(p.At+PatchLen, tramp)
	if !ok {
		return Patch{}, errors.New("trampoline out of reach of the function")
	}
	binary.LittleEndian.PutUint32(p.Jump[1:], uint32(rel))
	for i := PatchLen; i < p.Len; i++ {
		p.Jump[i] = 0xcc
	}
	p.Tramp = out
	return p, nil
}

// relocateProbe copies one prologue instruction at at to slot: re-aimed
// when it addresses memory relative to rip, widened when it is a short
// branch. last is true for an unconditional jump, after which the
// trampoline needs no jump back.
func relocateProbe(code []byte, at, slot uint64) (out []byte, n int, last bool, err error) {
	if v, err := decodeVEX(code); !errors.Is(err, errNotVEX) {
		if err != nil {
			return nil, 0, false, err
		}
		ins := append([]byte(nil), code[:v.len]...)
		if v.ripOff >= 0 {
			if err := reaim(ins, v.ripOff, at, slot); err != nil {
				return nil, 0, false, err
			}
		}
		return ins, v.len, false, nil
	}
	inst, err := decodeInst(code)
	if err != nil {
		return nil, 0, false, err
	}
	// Reasons name the instruction, not its operands: --stats groups them.
	name := strings.ToLower(inst.Op.String())
	_, isRel := inst.Args[0].(x86asm.Rel)
	switch op := inst.Op; {
	case refused(op), op == x86asm.SYSCALL, op == x86asm.INT, op == x86asm.RET, op == x86asm.CALL:
		return nil, 0, false, fmt.Errorf("%s in the prologue", name)
	case op == x86asm.JMP && isRel:
		target := at + uint64(inst.Len) + uint64(pcRel(code, inst))
		return appendJump(nil, slot, target), inst.Len, true, nil
	case op == x86asm.JMP:
		return nil, 0, false, errors.New("indirect jump in the prologue")
	case isRel && inst.DataSize == 16:
		return nil, 0, false, errors.New("16-bit branch in the prologue")
	case isRel && isShortCond(op):
		ins, err := probeBranch(code[:inst.Len], inst, at, slot)
		return ins, inst.Len, false, err
	case isRel:
		return nil, 0, false, fmt.Errorf("%s: unexpected relative operand", name)
	}
	ins, err := relocate(code[:inst.Len], inst, at, slot)
	if err != nil {
		return nil, 0, false, fmt.Errorf("%s: %w", name, err)
	}
	return ins[:inst.Len], inst.Len, false, nil // relocate appends a jump back: not wanted here
}

// probeBranch relocates a conditional branch of a prologue: taken, it
// goes to its original target; not taken, on to the next relocated
// instruction (unlike condBranch's, whose fall-through is the original
// code, here the middle of the jump):
//
//	[67] cond rel8 → taken   ; the same condition
//	jmp  short over          ; not taken
//	taken: jmp target
//	over:
func probeBranch(code []byte, inst x86asm.Inst, addr, slot uint64) ([]byte, error) {
	op := code[inst.PCRelOff-1]
	var br []byte
	switch {
	case op >= 0x70 && op <= 0x7f, op >= 0x80 && op <= 0x8f:
		br = []byte{0x70 | op&0x0f, 2}
	case op >= 0xe0 && op <= 0xe3:
		br = []byte{op, 2}
		if inst.AddrSize == 32 {
			br = []byte{0x67, op, 2}
		}
	default:
		return nil, errors.New("unexpected conditional branch encoding")
	}
	target := addr + uint64(inst.Len) + uint64(pcRel(code, inst))
	taken := slot + uint64(len(br)) + 2
	jmp := appendJump(nil, taken, target)
	out := append(br, 0xeb, byte(len(jmp)))
	return append(out, jmp...), nil
}

// branchesInto sweeps the function's instructions and refuses any direct
// branch (or call) to an address in [lo, hi): the middle of the jump.
// Undecodable bytes refuse the function: the sweep could not vouch for it.
func branchesInto(code []byte, addr, lo, hi uint64) error {
	for off := 0; off < len(code); {
		if v, err := decodeVEX(code[off:]); !errors.Is(err, errNotVEX) {
			if err != nil {
				return fmt.Errorf("undecodable code at +%#x", off)
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
			return fmt.Errorf("undecodable code at +%#x", off)
		}
		if _, isRel := inst.Args[0].(x86asm.Rel); isRel && inst.PCRel > 0 {
			target := addr + uint64(off+inst.Len) + uint64(pcRel(code[off:], inst))
			if target >= lo && target < hi {
				return fmt.Errorf("a branch at +%#x lands inside the first %d bytes", off, PatchLen)
			}
		}
		off += inst.Len
	}
	return nil
}

// cetLen measures the register forms of the CET shadow-stack instructions
// x86asm does not know (rdssp, incssp, saveprevssp, setssbsy), which
// unwinders use: F3 [REX] 0F 1E /1, F3 [REX] 0F AE /5, F3 0F 01 EA/E8. It
// returns 0 for anything else. They never branch.
func cetLen(code []byte) int {
	if len(code) < 4 || code[0] != 0xf3 {
		return 0
	}
	i := 1
	if code[i]&0xf0 == 0x40 { // REX
		i++
	}
	if len(code) < i+3 || code[i] != 0x0f {
		return 0
	}
	op, modrm := code[i+1], code[i+2]
	reg := modrm >> 3 & 7
	switch {
	case op == 0x1e && modrm>>6 == 3 && reg == 1, op == 0xae && modrm>>6 == 3 && reg == 5:
		return i + 3
	case op == 0x01 && (modrm == 0xea || modrm == 0xe8) && i == 1:
		return 4
	}
	return 0
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
