package instrument

import (
	"errors"
	"fmt"
	"strings"

	"golang.org/x/arch/x86/x86asm"
)

// rawCall is one call, or jump out of the function, found in its code.
type rawCall struct {
	site    Site
	kind    CalleeKind
	tail    bool
	target  uint64 // direct or PLT stub: link-time target
	name    string // PLT or GOT slot: the imported function's name
	operand string // indirect
}

// sweepCalls decodes the function sym from start to end (and the parts
// GCC split off it, "sym.cold", which it jumps to) and returns its calls
// in address order:
//   - call rel32: direct, or plt when the target is a PLT stub;
//   - call [rip+slot] with slot a GOT slot of an import (-fno-plt): plt;
//   - any other call through a register or memory: an indirect site;
//   - a jump (jmp or jcc rel) out of the function to the start of another
//     function or to a PLT stub, and jmp [rip+GOT slot]: a tail call;
//   - an indirect jmp: an indirect tail-call site, unless it dispatches a
//     switch through a jump table: a notrack jmp (what GCC emits for
//     tables under -fcf-protection), a jmp [table+index*8] without base
//     register (non-PIC tables), or a jmp reg shortly after a
//     movsxd reg, [base+index*4] (PIC tables of 32-bit offsets).
//
// Undecodable bytes end the sweep of a part, with a note: the calls after
// them are not listed.
func (m *Module) sweepCalls(sym Symbol) ([]rawCall, []string, error) {
	if sym.Size == 0 {
		return nil, nil, fmt.Errorf("%s has no size in the symbol table: its end is unknown", sym.Name)
	}
	parts := []Symbol{sym}
	inside := func(a uint64) bool {
		for _, p := range parts {
			if a >= p.Value && a-p.Value < p.Size {
				return true
			}
		}
		return false
	}
	var calls []rawCall
	var notes []string
	for i := 0; i < len(parts); i++ {
		p := parts[i]
		code, err := m.Code(p)
		if err != nil {
			return nil, nil, err
		}
		part := ""
		if i > 0 {
			part = p.Name
		}
		sw := sweeper{m: m, code: code, base: p.Value, part: part, inside: inside}
		note := sw.run(func(target uint64) bool {
			s, ok := m.Lookup(target)
			if !ok || s.Value != target || !IsColdPart(s.Name) || !strings.HasPrefix(s.Name, sym.Name) || s.Size == 0 {
				return false
			}
			if !inside(target) {
				parts = append(parts, s)
			}
			return true
		})
		if note != "" {
			notes = append(notes, note)
		}
		calls = append(calls, sw.calls...)
	}
	return calls, notes, nil
}

// sweeper decodes one part of a function.
type sweeper struct {
	m      *Module
	code   []byte
	base   uint64
	part   string
	inside func(uint64) bool
	calls  []rawCall
	recent []x86asm.Inst // the last few instructions, for jump tables
}

// run sweeps the part; coldPart reports (and queues) a jump target that is
// a split-off part of the function. It returns a note when the sweep
// stopped early.
func (s *sweeper) run(coldPart func(uint64) bool) string {
	err := walkCode(s.code, func(off int, inst *x86asm.Inst, _ int) error {
		if inst == nil {
			return nil
		}
		s.visit(*inst, s.code[off:], off, coldPart)
		if s.recent = append(s.recent, *inst); len(s.recent) > 4 {
			s.recent = s.recent[1:]
		}
		return nil
	})
	var u undecodable
	if errors.As(err, &u) {
		return s.stopped(int(u))
	}
	return ""
}

func (s *sweeper) stopped(off int) string {
	where := fmt.Sprintf("+%#x", off)
	if s.part != "" {
		where = s.part + where
	}
	return fmt.Sprintf("undecodable bytes at %s: calls after them are not listed", where)
}

// visit records inst if it calls or leaves the function.
func (s *sweeper) visit(inst x86asm.Inst, code []byte, off int, coldPart func(uint64) bool) {
	addr := s.base + uint64(off)
	next := addr + uint64(inst.Len)
	site := Site{Part: s.part, Offset: uint64(off), Addr: addr}
	isCall := inst.Op == x86asm.CALL
	switch a := inst.Args[0].(type) {
	case x86asm.Rel:
		if inst.PCRel == 0 {
			return
		}
		target := next + uint64(pcRel(code, inst))
		if !isCall && (s.inside(target) || coldPart(target)) {
			return // a branch within the function
		}
		rc := rawCall{site: site, tail: !isCall, target: target, kind: CalleeDirect}
		if s.m.IsPLT(target) {
			rc.kind, rc.name = CalleePLT, s.m.PLT[target]
		} else if !isCall {
			if sym, ok := s.m.Lookup(target); !ok || sym.Value != target {
				return // into the middle of something: not a call
			}
		}
		s.calls = append(s.calls, rc)
	case x86asm.Mem, x86asm.Reg:
		if !isCall && inst.Op != x86asm.JMP {
			return
		}
		if m, ok := a.(x86asm.Mem); ok && m.Base == x86asm.RIP {
			slot := next + uint64(pcRel(code, inst))
			if name, ok := s.m.GOT[slot]; ok {
				s.calls = append(s.calls, rawCall{site: site, tail: !isCall, kind: CalleePLT, name: name})
				return
			}
		}
		if !isCall && s.jumpTable(inst, code) {
			return
		}
		s.calls = append(s.calls, rawCall{site: site, tail: !isCall, kind: CalleeIndirect, operand: operandText(inst, next, code)})
	}
}

// jumpTable tells an indirect jmp that dispatches a switch (see
// sweepCalls).
func (s *sweeper) jumpTable(inst x86asm.Inst, code []byte) bool {
	return switchJump(inst, code, s.recent)
}

func isLegacyPrefix(b byte) bool {
	switch b {
	case 0x26, 0x2e, 0x36, 0x3e, 0x64, 0x65, 0x66, 0x67, 0xf0, 0xf2, 0xf3:
		return true
	}
	return false
}

// operandText renders an indirect call's target operand in Intel syntax,
// lower case; a rip-relative operand as its link-time address.
func operandText(inst x86asm.Inst, next uint64, code []byte) string {
	switch a := inst.Args[0].(type) {
	case x86asm.Reg:
		return strings.ToLower(a.String())
	case x86asm.Mem:
		if a.Base == x86asm.RIP {
			return fmt.Sprintf("[%#x]", next+uint64(pcRel(code, inst)))
		}
		var b strings.Builder
		b.WriteByte('[')
		if a.Segment == x86asm.FS || a.Segment == x86asm.GS {
			b.WriteString(strings.ToLower(a.Segment.String()) + ":")
		}
		sep := ""
		if a.Base != 0 {
			b.WriteString(strings.ToLower(a.Base.String()))
			sep = "+"
		}
		if a.Index != 0 {
			fmt.Fprintf(&b, "%s%s*%d", sep, strings.ToLower(a.Index.String()), a.Scale)
			sep = "+"
		}
		switch {
		case a.Disp < 0:
			fmt.Fprintf(&b, "-%#x", -a.Disp)
		case a.Disp > 0 || sep == "":
			fmt.Fprintf(&b, "%s%#x", sep, a.Disp)
		}
		b.WriteByte(']')
		return b.String()
	}
	return inst.String()
}
