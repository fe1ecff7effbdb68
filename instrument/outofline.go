package instrument

import (
	"encoding/binary"
	"errors"
	"fmt"

	"golang.org/x/arch/x86/x86asm"
)

// SlotSize is the number of bytes reserved per breakpoint in the scratch
// area. Every out-of-line sequence fits: the longest is a conditional branch
// with two absolute jumps (3 + 14 + 14 bytes) or a 15-byte instruction with
// an absolute jump back (29 bytes).
const SlotSize = 64

// Emu says how the tracer executes the instruction displaced by a
// breakpoint.
type Emu uint8

const (
	// EmuNone: set rip to the slot holding Plan.OOL and resume; the
	// sequence ends by jumping back (or wherever the instruction went).
	EmuNone Emu = iota
	// EmuNop: the instruction does nothing (nop, endbr64): set rip to
	// Plan.Next().
	EmuNop
	// EmuCall: push Plan.Next() and set rip to Plan.Target. Calls are
	// emulated rather than run out of line so that the pushed return
	// address is the original one, not an address in the scratch area,
	// which unwinders, exceptions and the return-site breakpoints rely on.
	EmuCall
	// EmuCallIndirect: like EmuCall with the target computed by
	// Plan.IndirectTarget from the registers and memory.
	EmuCallIndirect
	// EmuJmp: set rip to Plan.Target.
	EmuJmp
)

func (e Emu) String() string {
	switch e {
	case EmuNone:
		return "out-of-line"
	case EmuNop:
		return "nop"
	case EmuCall:
		return "call"
	case EmuCallIndirect:
		return "call-indirect"
	case EmuJmp:
		return "jmp"
	default:
		return fmt.Sprintf("Emu(%d)", uint8(e))
	}
}

// Plan says how to execute the instruction displaced by an int3 at Addr.
type Plan struct {
	Addr, Slot uint64 // runtime addresses of the instruction and its scratch slot
	Len        int    // length of the original instruction
	Emulate    Emu
	// OOL is written at Slot when Emulate is EmuNone: the instruction,
	// re-aimed if it addresses memory relative to rip, then a jump back to
	// Next(); relative branches become a branch over jumps to their
	// original targets.
	OOL []byte
	// Target is the runtime target of EmuCall and EmuJmp.
	Target uint64
	// Operand is where EmuCallIndirect finds its target.
	Operand *Operand
	// Inst is the original instruction in Intel syntax, for diagnostics.
	Inst string
}

// Next is the address of the instruction after the original one: the
// return address of an emulated call and where EmuNop resumes.
func (p Plan) Next() uint64 { return p.Addr + uint64(p.Len) }

// ErrCannotPlan is wrapped by PlanAt's errors for instructions that cannot be
// displaced; the tracer then leaves that breakpoint out.
var ErrCannotPlan = errors.New("cannot execute out of line")

// PlanAt plans how to execute the instruction at runtime address addr whose
// original bytes start code (at least the instruction's length; 16 bytes
// always suffice) when an int3 replaces its first byte. slot is the runtime
// address of the SlotSize bytes reserved for it, which must be within
// ±2 GiB of addr for instructions addressing memory relative to rip.
func PlanAt(code []byte, addr, slot uint64) (Plan, error) {
	p, err := plan(code, addr, slot)
	if err != nil {
		return Plan{}, fmt.Errorf("plan %#x: %w: %w", addr, ErrCannotPlan, err)
	}
	if len(p.OOL) > SlotSize {
		return Plan{}, fmt.Errorf("plan %#x: %w: sequence of %d bytes exceeds the slot", addr, ErrCannotPlan, len(p.OOL))
	}
	return p, nil
}

func plan(code []byte, addr, slot uint64) (Plan, error) {
	if len(code) == 0 {
		return Plan{}, errors.New("no code")
	}
	if code[0] == 0xcc {
		return Plan{}, errors.New("int3 already there")
	}
	if v, err := decodeVEX(code); !errors.Is(err, errNotVEX) {
		if err != nil {
			return Plan{}, err
		}
		return planVEX(code, addr, slot, v)
	}
	inst, err := decodeInst(code)
	if err != nil {
		return Plan{}, err
	}
	p := Plan{Addr: addr, Slot: slot, Len: inst.Len, Inst: x86asm.IntelSyntax(inst, addr, nil)}
	code = code[:inst.Len]
	_, isRel := inst.Args[0].(x86asm.Rel)
	if isRel && inst.DataSize == 16 {
		return Plan{}, errors.New("16-bit branch")
	}
	switch op := inst.Op; {
	case refused(op):
		return Plan{}, fmt.Errorf("%s must not run out of line", p.Inst)
	case op == x86asm.NOP:
		p.Emulate = EmuNop
	case op == x86asm.CALL && isRel:
		p.Emulate, p.Target = EmuCall, p.Next()+uint64(pcRel(code, inst))
	case op == x86asm.CALL:
		operand, err := operandOf(inst, p.Next())
		if err != nil {
			return Plan{}, err
		}
		p.Emulate, p.Operand = EmuCallIndirect, operand
	case op == x86asm.JMP && isRel:
		p.Emulate, p.Target = EmuJmp, p.Next()+uint64(pcRel(code, inst))
	case isRel && isShortCond(op):
		p.OOL, err = condBranch(code, inst, addr, slot)
	case isRel:
		return Plan{}, fmt.Errorf("%s: unexpected relative operand", p.Inst)
	default:
		p.OOL, err = relocate(code, inst, addr, slot)
	}
	if err != nil {
		return Plan{}, fmt.Errorf("%s: %w", p.Inst, err)
	}
	return p, nil
}

// refused lists instructions that must not be displaced: software
// interrupts and undefined opcodes trap with rip in the scratch area (and
// int3 would be mistaken for a breakpoint), far transfers change the code
// segment, and xbegin's abort address is rip-relative but cannot be
// re-aimed to a jump.
func refused(op x86asm.Op) bool {
	switch op {
	case x86asm.INT, x86asm.INTO, x86asm.UD0, x86asm.UD1, x86asm.UD2, x86asm.HLT,
		x86asm.LCALL, x86asm.LJMP, x86asm.LRET, x86asm.IRET, x86asm.IRETD, x86asm.IRETQ,
		x86asm.SYSRET, x86asm.SYSEXIT, x86asm.SYSENTER, x86asm.XBEGIN:
		return true
	}
	return false
}

// relocate copies an instruction that does not transfer control relative to
// rip, re-aims its rip-relative displacement (if any) so it addresses the
// same memory from the slot, and appends the jump back. The displacement's
// position comes from the decoder (PCRelOff): it sits after ModRM and
// before any immediate, so it cannot be found from the end of the
// instruction without knowing the immediate's size.
func relocate(code []byte, inst x86asm.Inst, addr, slot uint64) ([]byte, error) {
	out := append(make([]byte, 0, len(code)+jmpAbsLen), code...)
	mem, isRIP := ripMem(inst)
	switch {
	case isRIP && mem.Base == x86asm.EIP: // x86asm sets no PCRel for these
		return nil, errors.New("eip-relative addressing unsupported")
	case isRIP != (inst.PCRel > 0), inst.PCRel != 0 && inst.PCRel != 4:
		return nil, errors.New("pc-relative field that is not a rip-relative disp32")
	case isRIP:
		if err := reaim(out, inst.PCRelOff, addr, slot); err != nil {
			return nil, err
		}
	}
	return appendJump(out, slot+uint64(len(code)), addr+uint64(len(code))), nil
}

// reaim rewrites the rip-relative disp32 at off in the copy ins (originally
// at addr, now at slot) so it reaches the same absolute address.
func reaim(ins []byte, off int, addr, slot uint64) error {
	n := uint64(len(ins))
	target := addr + n + uint64(int64(int32(binary.LittleEndian.Uint32(ins[off:]))))
	d, ok := rel32(slot+n, target)
	if !ok {
		return fmt.Errorf("rip-relative target %#x out of reach of slot %#x", target, slot)
	}
	binary.LittleEndian.PutUint32(ins[off:], uint32(d))
	return nil
}

// planVEX plans an AVX/AVX-512 instruction (never a control transfer).
func planVEX(code []byte, addr, slot uint64, v vexInst) (Plan, error) {
	code = code[:v.len]
	p := Plan{Addr: addr, Slot: slot, Len: v.len, Inst: fmt.Sprintf("vex % x", code)}
	// x86asm's VEX decoding is only good for a description: it prints
	// rip-relative operands as absolute addresses and, given more bytes,
	// reads a ModRM after vzeroupper.
	if inst, err := x86asm.Decode(code, 64); err == nil && inst.Op != 0 && inst.Len == v.len && v.ripOff < 0 {
		p.Inst = x86asm.IntelSyntax(inst, addr, nil)
	}
	out := append(make([]byte, 0, len(code)+jmpAbsLen), code...)
	if v.ripOff >= 0 {
		if err := reaim(out, v.ripOff, addr, slot); err != nil {
			return Plan{}, fmt.Errorf("%s: %w", p.Inst, err)
		}
	}
	p.OOL = appendJump(out, slot+uint64(len(code)), p.Next())
	return p, nil
}
