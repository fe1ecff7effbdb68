package instrument

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"golang.org/x/arch/x86/x86asm"
)

// An ExitRegion is where a function's return takes an exit probe: the
// bytes [Off, Off+Len) of its code end with its ret at Ret, or start with
// it and go on in padding. A jump replaces them; the trampoline runs the
// instructions before the ret, calls the exit stub and returns.
type ExitRegion struct {
	Off, Len, Ret int
}

// vzeroupper is the one VEX instruction an exit region moves (it often
// comes just before a ret).
var vzeroupper = []byte{0xc5, 0xf8, 0x77}

// exitInst is what planning keeps of an instruction: its place, and what
// makes a ret or an instruction an exit's region can move (a whole
// x86asm.Inst each, for every instruction of a large program, was some
// 6% of planning in zeroing and scanning memory).
type exitInst struct {
	off, len int
	ret      bool // a ret
	retImm   bool // ... with an immediate
	movable  bool // runs the same at any address and never branches (movable)
}

// An ExitFunc is a function as PlanExits sees it.
type ExitFunc struct {
	Code, Pad []byte // its code (size from the symbol table) and the padding after it
	EntryEnd  int    // its first bytes, which the entry patch takes
	Addr      uint64 // where it lies
	// IsEntry tells a function's entry or a PLT entry: a jump there is a
	// tail call (a split-off part's first byte is none).
	IsEntry func(uint64) bool
	// Cold finds the part split off the function (GCC's "f.cold") that
	// holds an address it jumps to; nil: none.
	Cold func(uint64) (ColdPart, bool)
	// Swept, if set, is given the function's entry branches
	// (EntryBranches) once the plan has read all its instructions: the
	// module's sweep need not read them again (Module.KeepSwept).
	Swept func([]EntryBranch)
}

// A ColdPart is code a compiler split off a function and jumps to: its
// bytes and where they lie.
type ColdPart struct {
	Addr uint64
	Code []byte
}

// PlanExits finds an exit region for every return of function f. It
// refuses a function that may leave other than by a ret or a tail jump (a
// jump out of its bytes, an indirect jump that is not a switch's), and
// one with a return no region fits: a region moves only instructions
// that run anywhere, and no branch lands inside it. With a switch's
// indirect jump (its targets unknown), only a ret followed by padding
// takes one. A part split off it counts as its own when all it does is
// jump back (or call what never returns): its branches back are targets
// like the function's own.
func PlanExits(f ExitFunc) (ExitPlan, error) {
	rs, tails, err := planExits(f)
	return ExitPlan{Regions: rs, Tails: tails}, err
}

// An ExitPlan is a function's exit probes: at its returns (Regions) and
// at its tail jumps (Tails).
type ExitPlan struct {
	Regions []ExitRegion
	Tails   []TailSite
}

// A TailSite is a tail jump (jmp or jcc rel32, Len bytes at Off) to the
// function at To: its trampoline has the frame's return taken by the
// return stub before it jumps on, so that the callee's return ends both;
// or, for one that Ends, ends the frame as a return does.
type TailSite struct {
	Off, Len int
	To       uint64
	// Ends: the frame ends at the jump (the caller decides: a jump to a
	// PLT entry, out of the module).
	Ends bool
}

func planExits(f ExitFunc) ([]ExitRegion, []TailSite, error) {
	code, pad, entryEnd, addr := f.Code, f.Pad, f.EntryEnd, f.Addr
	// About one instruction in four bytes: room for them all at once (an
	// append at a time took a tenth of planning cc1's exits in copies and
	// the garbage collector).
	ins := make([]exitInst, 0, len(code)/4+1)
	var cold []uint64 // where the function jumps into parts split off it
	// The last few, for switchJump, which asks whether any of them is
	// one kind: a ring of them, in no order.
	var recent [4]x86asm.Inst
	seen := 0
	var tails []TailSite
	targets := map[int]bool{}
	tables := false
	var entry []EntryBranch
	err := walkCode(code, func(off int, in *x86asm.Inst, vexLen int) error {
		if in == nil {
			ins = append(ins, exitInst{off: off, len: vexLen, movable: string(code[off:off+vexLen]) == string(vzeroupper)})
			return nil
		}
		if f.Swept != nil {
			if b, ok := entryBranchAt(code, off, in); ok {
				entry = append(entry, b)
			}
		}
		inst := *in
		if _, isRel := inst.Args[0].(x86asm.Rel); isRel && inst.PCRel > 0 && inst.Op != x86asm.CALL {
			to := int64(off+inst.Len) + pcRel(code[off:], inst)
			if to < 0 || to >= int64(len(code)) {
				abs := addr + uint64(to)
				switch {
				case BranchLen(code[off:]) == inst.Len && f.IsEntry(abs) && off >= entryEnd:
					tails = append(tails, TailSite{Off: off, Len: inst.Len, To: abs})
				case f.Cold != nil && !f.IsEntry(abs):
					cold = append(cold, abs) // coldTargets refuses it if no part holds it
				default:
					return fmt.Errorf("a jump at +%#x leaves the function", off)
				}
			} else {
				targets[int(to)] = true
			}
		}
		if inst.Op == x86asm.JMP {
			if _, isRel := inst.Args[0].(x86asm.Rel); !isRel {
				if !switchJump(inst, code[off:], recent[:min(seen, len(recent))]) {
					return fmt.Errorf("an indirect jump at +%#x", off)
				}
				tables = true
			}
		}
		ret := inst.Op == x86asm.RET
		ins = append(ins, exitInst{off: off, len: inst.Len, ret: ret, retImm: ret && inst.Args[0] != nil, movable: movable(inst)})
		recent[seen%len(recent)] = inst
		seen++
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	if f.Swept != nil {
		f.Swept(entry)
	}
	if err := coldTargets(f, cold, targets); err != nil {
		return nil, nil, err
	}
	var out []ExitRegion
	rets := 0
	for k, x := range ins {
		if !x.ret {
			continue
		}
		rets++
		if x.retImm {
			return nil, nil, fmt.Errorf("ret with an immediate at +%#x", x.off)
		}
		if x.off < entryEnd {
			return nil, nil, fmt.Errorf("a ret at +%#x, among the entry's bytes", x.off)
		}
		if r, ok := padAfter(code, pad, ins, k, targets); ok {
			out = append(out, r)
			continue
		}
		if tables {
			return nil, nil, fmt.Errorf("a switch's jump and a ret at +%#x without padding after it", x.off)
		}
		r, ok := movedBefore(code, ins, k, targets)
		if !ok || r.Off < entryEnd {
			return nil, nil, fmt.Errorf("no room for an exit at the ret at +%#x", x.off)
		}
		out = append(out, r)
	}
	if rets == 0 && len(tails) == 0 {
		return nil, nil, errors.New("no ret")
	}
	return out, tails, nil
}

// padAfter: the ret of ins[k] and the padding after it (nops, int3, or past
// the function's end its alignment padding), no branch landing there.
func padAfter(code, pad []byte, ins []exitInst, k int, targets map[int]bool) (ExitRegion, bool) {
	x := ins[k]
	end := x.off + x.len
	for end < x.off+PatchLen {
		switch {
		case end >= len(code):
			if !padding(pad) || len(pad) < x.off+PatchLen-len(code) {
				return ExitRegion{}, false
			}
			end = x.off + PatchLen
		case targets[end]:
			return ExitRegion{}, false
		case code[end] == 0xcc:
			end++
		default:
			inst, err := decodeInst(code[end:])
			if err != nil || inst.Op != x86asm.NOP {
				return ExitRegion{}, false
			}
			end += inst.Len
		}
	}
	return ExitRegion{Off: x.off, Len: PatchLen, Ret: x.off}, true
}

// movedBefore: the ret of ins[k] and the fewest instructions before it
// that make a jump's room, each one that runs the same anywhere, no
// branch landing after the first.
func movedBefore(code []byte, ins []exitInst, k int, targets map[int]bool) (ExitRegion, bool) {
	x := ins[k]
	n := x.len
	for j := k - 1; j >= 0; j-- {
		if targets[ins[j+1].off] || !ins[j].movable || ins[j].off+ins[j].len != ins[j+1].off {
			return ExitRegion{}, false
		}
		n += ins[j].len
		if n >= PatchLen {
			return ExitRegion{Off: ins[j].off, Len: n, Ret: x.off}, true
		}
	}
	return ExitRegion{}, false
}

// movable tells an instruction that does the same at any address and
// never branches: register and stack moves of an epilogue.
func movable(inst x86asm.Inst) bool {
	if _, ok := ripMem(inst); ok {
		return false
	}
	switch inst.Op {
	case x86asm.POP, x86asm.ADD, x86asm.SUB, x86asm.LEA, x86asm.LEAVE, x86asm.MOV,
		x86asm.MOVZX, x86asm.MOVSX, x86asm.MOVSXD, x86asm.XOR, x86asm.AND, x86asm.OR,
		x86asm.MOVAPS, x86asm.MOVUPS, x86asm.MOVDQA, x86asm.MOVDQU,
		x86asm.MOVQ, x86asm.MOVD, x86asm.MOVSD_XMM, x86asm.MOVSS, x86asm.CMOVE, x86asm.CMOVNE,
		x86asm.SETE, x86asm.SETNE, x86asm.TEST, x86asm.CMP:
		return true
	}
	return false
}

// switchJump tells an indirect jmp that dispatches a switch: a notrack
// prefix, a table indexed in memory, or a register loaded from a table of
// 32-bit offsets by one of the few instructions before it.
func switchJump(inst x86asm.Inst, code []byte, before []x86asm.Inst) bool {
	for _, b := range code[:inst.Len] {
		if b == 0x3e {
			return true
		}
		if !isLegacyPrefix(b) && b&0xf0 != 0x40 {
			break
		}
	}
	switch a := inst.Args[0].(type) {
	case x86asm.Mem:
		return a.Base == 0 && a.Index != 0
	case x86asm.Reg:
		for _, r := range before[max(0, len(before)-4):] {
			if r.Op != x86asm.MOVSXD {
				continue
			}
			if m, ok := r.Args[1].(x86asm.Mem); ok && m.Index != 0 && m.Scale == 4 {
				return true
			}
		}
	}
	return false
}

// ExitTramp is the trampoline at tramp of the exit region r of the
// function whose code is at addr: the moved instructions, a call of the
// exit stub at exitStub, a ret. Jump is what replaces the region.
func ExitTramp(code []byte, addr uint64, r ExitRegion, tramp, exitStub uint64) (t, jump []byte, err error) {
	t = append(t, code[r.Off:r.Ret]...)
	call := tramp + uint64(len(t)) + 5
	rel := int64(exitStub) - int64(call)
	if rel != int64(int32(rel)) {
		return nil, nil, errors.New("exit stub out of reach")
	}
	t = append(t, 0xe8, 0, 0, 0, 0, 0xc3)
	binary.LittleEndian.PutUint32(t[len(t)-5:], uint32(int32(rel)))
	at := addr + uint64(r.Off)
	jrel := int64(tramp) - int64(at+5)
	if jrel != int64(int32(jrel)) {
		return nil, nil, errors.New("trampoline out of reach")
	}
	jump = make([]byte, r.Len)
	jump[0] = 0xe9
	binary.LittleEndian.PutUint32(jump[1:], uint32(int32(jrel)))
	for i := 5; i < r.Len; i++ {
		jump[i] = 0xcc
	}
	return t, jump, nil
}

// TailTramp is the trampoline at tramp of the tail jump t of the function
// at addr: a call of the tail stub at tailStub, a jmp to t.To. Jump is
// what replaces the tail jump: the same jump, to the trampoline.
func TailTramp(code []byte, addr uint64, t TailSite, tramp, tailStub uint64) (tr, jump []byte, err error) {
	rel := func(from, to uint64) ([]byte, error) {
		d := int64(to) - int64(from)
		if d != int64(int32(d)) {
			return nil, errors.New("out of reach")
		}
		return binary.LittleEndian.AppendUint32(nil, uint32(int32(d))), nil
	}
	c, err := rel(tramp+5, tailStub)
	if err != nil {
		return nil, nil, err
	}
	j, err := rel(tramp+10, t.To)
	if err != nil {
		return nil, nil, err
	}
	tr = append(append(append([]byte{0xe8}, c...), 0xe9), j...)
	at := addr + uint64(t.Off)
	b, err := rel(at+uint64(t.Len), tramp)
	if err != nil {
		return nil, nil, err
	}
	jump = append(slices.Clone(code[t.Off:t.Off+t.Len-4]), b...)
	return tr, jump, nil
}

// EntryPad is the length of the CET landing pad code starts with, 0 if
// none: an entry patch goes behind it.
func EntryPad(code []byte) int {
	if isEndbr(code) {
		return len(endbr64)
	}
	return 0
}

// coldTargets sweeps the parts split off function f that it jumps into
// (at the addresses in into), and adds their branches back to targets.
// A part may only branch back into f past its entry's bytes, within
// itself or into another such part, and call; it ends in a jump or a
// call (of what never returns, such as abort): a ret or a tail jump there
// would leave f without an exit probe.
func coldTargets(f ExitFunc, into []uint64, targets map[int]bool) error {
	swept := map[uint64]bool{}
	for len(into) > 0 {
		at := into[0]
		into = into[1:]
		p, ok := f.Cold(at)
		if !ok {
			return fmt.Errorf("a jump to %#x leaves the function", at)
		}
		if swept[p.Addr] {
			continue
		}
		swept[p.Addr] = true
		var last x86asm.Op
		err := walkCode(p.Code, func(off int, in *x86asm.Inst, _ int) error {
			if in == nil {
				last = 0
				return nil
			}
			last = in.Op
			switch in.Op {
			case x86asm.RET:
				return fmt.Errorf("a ret in the part split off at %#x", p.Addr)
			case x86asm.CALL:
				return nil
			}
			if _, isRel := in.Args[0].(x86asm.Rel); !isRel || in.PCRel == 0 {
				if in.Op == x86asm.JMP {
					return fmt.Errorf("an indirect jump in the part split off at %#x", p.Addr)
				}
				return nil
			}
			to := p.Addr + uint64(off+in.Len) + uint64(pcRel(p.Code[off:], *in))
			switch {
			case to >= p.Addr && to < p.Addr+uint64(len(p.Code)):
			case to >= f.Addr+uint64(f.EntryEnd) && to < f.Addr+uint64(len(f.Code)):
				targets[int(to-f.Addr)] = true
			case to >= f.Addr && to < f.Addr+uint64(len(f.Code)):
				return fmt.Errorf("the part split off at %#x jumps among the entry's bytes", p.Addr)
			default:
				into = append(into, to)
			}
			return nil
		})
		if err != nil {
			return err
		}
		if last != x86asm.JMP && last != x86asm.CALL && last != x86asm.UD2 {
			return fmt.Errorf("the part split off at %#x runs off its end", p.Addr)
		}
	}
	return nil
}
