package instrument

import (
	"errors"
	"fmt"

	"golang.org/x/arch/x86/x86asm"
	"golang.org/x/sys/unix"
)

// Operand is the target operand of an indirect call: a register, or a memory
// operand [seg: base + index*scale + disp] holding the target.
type Operand struct {
	Mem         bool       // false: the target is the value of Reg
	Reg         x86asm.Reg // register target (call rax)
	Seg         x86asm.Reg // x86asm.FS or x86asm.GS when overridden, else 0
	Base, Index x86asm.Reg // 0 when absent; never RIP (resolved into Disp)
	Scale       uint8
	Disp        int64 // for a rip-relative operand, the absolute runtime address
	Addr32      bool  // 0x67 prefix: the effective address wraps to 32 bits
}

// operandOf describes the target operand of an indirect call; next is the
// runtime address after the call, which rip-relative operands are relative
// to.
func operandOf(inst x86asm.Inst, next uint64) (*Operand, error) {
	switch a := inst.Args[0].(type) {
	case x86asm.Reg:
		return &Operand{Reg: a}, nil
	case x86asm.Mem:
		o := &Operand{Mem: true, Base: a.Base, Index: a.Index, Scale: a.Scale, Disp: a.Disp, Addr32: inst.AddrSize == 32}
		if a.Segment == x86asm.FS || a.Segment == x86asm.GS {
			o.Seg = a.Segment
		}
		if a.Base == x86asm.RIP || a.Base == x86asm.EIP {
			if a.Base == x86asm.EIP {
				return nil, errors.New("eip-relative addressing unsupported")
			}
			// x86asm leaves rip-relative displacements zero-extended.
			o.Base, o.Disp = 0, int64(next+uint64(int64(int32(uint32(a.Disp)))))
		}
		return o, nil
	}
	return nil, fmt.Errorf("unexpected call operand %v", inst.Args[0])
}

// IndirectTarget computes the target of an EmuCallIndirect plan from the
// thread's registers at the breakpoint (before anything is pushed, so rsp
// is the one the original call would have used) and read, which returns
// the 8 bytes of target memory at an address.
func (p Plan) IndirectTarget(regs unix.PtraceRegs, read func(addr uint64) (uint64, error)) (uint64, error) {
	o := p.Operand
	if p.Emulate != EmuCallIndirect || o == nil {
		return 0, fmt.Errorf("indirect target at %#x: plan is %v, not an indirect call", p.Addr, p.Emulate)
	}
	if !o.Mem {
		v, err := regValue(regs, o.Reg)
		if err != nil {
			return 0, fmt.Errorf("indirect target at %#x: %w", p.Addr, err)
		}
		return v, nil
	}
	ea, err := o.Address(regs)
	if err != nil {
		return 0, fmt.Errorf("indirect target at %#x: %w", p.Addr, err)
	}
	v, err := read(ea)
	if err != nil {
		return 0, fmt.Errorf("indirect target at %#x: read [%#x]: %w", p.Addr, ea, err)
	}
	return v, nil
}

// Address returns the effective address of a memory operand.
func (o *Operand) Address(regs unix.PtraceRegs) (uint64, error) {
	ea := uint64(o.Disp)
	if o.Base != 0 {
		v, err := regValue(regs, o.Base)
		if err != nil {
			return 0, err
		}
		ea += v
	}
	if o.Index != 0 {
		v, err := regValue(regs, o.Index)
		if err != nil {
			return 0, err
		}
		ea += v * uint64(o.Scale)
	}
	if o.Addr32 {
		ea = uint64(uint32(ea))
	}
	switch o.Seg {
	case x86asm.FS:
		ea += regs.Fs_base
	case x86asm.GS:
		ea += regs.Gs_base
	}
	return ea, nil
}

// regValue reads a 64-bit or 32-bit general-purpose register.
func regValue(regs unix.PtraceRegs, r x86asm.Reg) (uint64, error) {
	regs64 := [...]uint64{
		regs.Rax, regs.Rcx, regs.Rdx, regs.Rbx, regs.Rsp, regs.Rbp, regs.Rsi, regs.Rdi,
		regs.R8, regs.R9, regs.R10, regs.R11, regs.R12, regs.R13, regs.R14, regs.R15,
	}
	switch {
	case r >= x86asm.RAX && r <= x86asm.R15:
		return regs64[r-x86asm.RAX], nil
	case r >= x86asm.EAX && r <= x86asm.R15L:
		return uint64(uint32(regs64[r-x86asm.EAX])), nil
	}
	return 0, fmt.Errorf("register %v unsupported", r)
}
