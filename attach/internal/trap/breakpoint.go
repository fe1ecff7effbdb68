// Package trap holds the trap probes' breakpoints (docs/design.md, Trap
// probes): what each int3 displaced and stands for, and where a thread
// stopped on one goes on. The engine writes the int3s and resumes the
// threads; this package decides nothing that needs ptrace.
package trap

import (
	"encoding/binary"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/profile-dev/profile/instrument"
	"github.com/profile-dev/profile/model"
)

// BP is one int3 in the target: a function entry, a return site, or both.
type BP struct {
	Addr     uint64
	Orig     byte // the byte the int3 replaced
	Fn       int  // profile function entered here, model.None if none
	IsReturn bool // a return site: the instruction after a call
	Kind     model.CallKind
	Plan     instrument.Plan // how the displaced instruction runs
	Special  bool            // the program entry point: not a traced function
	// LinkerHook marks the dynamic linker's _dl_debug_state: the set of
	// loaded libraries changed.
	LinkerHook bool
	// Strays counts a return site's passages that closed no frame: other
	// code flows through it. Past a bound it is Transient: in the text
	// only while a probed call is to return there.
	Strays    int
	Transient bool
	// Callee is the function whose trap-probed call last returned here.
	Callee int
}

// New is a breakpoint at addr, over byte orig, whose displaced
// instruction runs as plan says.
func New(addr uint64, orig byte, plan instrument.Plan) *BP {
	return &BP{Addr: addr, Orig: orig, Fn: model.None, Plan: plan, Callee: model.None}
}

func (b *BP) String() string {
	return fmt.Sprintf("bp@%#x(fn=%d ret=%v)", b.Addr, b.Fn, b.IsReturn)
}

// Memory is the stopped thread's memory.
type Memory interface {
	Read(addr uint64, b []byte) error
	Write(addr uint64, b []byte) error
}

// GoOn sets regs, those of a thread stopped on b (rip at b.Addr), to go on
// as if it had run the displaced instruction: at its out-of-line copy,
// past it (a nop), at a jump's target, or in a call's target with the
// return address pushed. An error (the target of an indirect call or the
// stack unreadable) leaves regs as they were: the caller then takes the
// breakpoint out and lets the thread run the instruction itself.
func GoOn(b *BP, regs *unix.PtraceRegs, mem Memory) error {
	p := &b.Plan
	switch p.Emulate {
	case instrument.EmuNone:
		regs.Rip = p.Slot
	case instrument.EmuNop:
		regs.Rip = p.Next()
	case instrument.EmuJmp:
		regs.Rip = p.Target
	case instrument.EmuCall, instrument.EmuCallIndirect:
		target := p.Target
		if p.Emulate == instrument.EmuCallIndirect {
			var err error
			target, err = p.IndirectTarget(*regs, func(a uint64) (uint64, error) {
				var w [8]byte
				err := mem.Read(a, w[:])
				return binary.LittleEndian.Uint64(w[:]), err
			})
			if err != nil {
				return fmt.Errorf("indirect call at %#x: %w", b.Addr, err)
			}
		}
		var w [8]byte
		binary.LittleEndian.PutUint64(w[:], p.Next())
		if err := mem.Write(regs.Rsp-8, w[:]); err != nil {
			return fmt.Errorf("call at %#x: push its return address: %w", b.Addr, err)
		}
		regs.Rsp -= 8
		regs.Rip = target
	default:
		return fmt.Errorf("breakpoint at %#x: unknown emulation %d", b.Addr, p.Emulate)
	}
	return nil
}
