package unwind

import (
	"errors"
	"fmt"
)

// Call frame instructions (DWARF 5 §6.4.2 and the GNU extensions). The three
// primary ones carry an operand in their low six bits.
const (
	cfaAdvanceLoc = 0x40
	cfaOffset     = 0x80
	cfaRestore    = 0xc0

	cfaNop                     = 0x00
	cfaSetLoc                  = 0x01
	cfaAdvanceLoc1             = 0x02
	cfaAdvanceLoc2             = 0x03
	cfaAdvanceLoc4             = 0x04
	cfaOffsetExtended          = 0x05
	cfaRestoreExtended         = 0x06
	cfaUndefined               = 0x07
	cfaSameValue               = 0x08
	cfaRegister                = 0x09
	cfaRememberState           = 0x0a
	cfaRestoreState            = 0x0b
	cfaDefCFA                  = 0x0c
	cfaDefCFARegister          = 0x0d
	cfaDefCFAOffset            = 0x0e
	cfaDefCFAExpression        = 0x0f
	cfaExpression              = 0x10
	cfaOffsetExtendedSF        = 0x11
	cfaDefCFASF                = 0x12
	cfaDefCFAOffsetSF          = 0x13
	cfaValOffset               = 0x14
	cfaValOffsetSF             = 0x15
	cfaValExpression           = 0x16
	cfaGNUArgsSize             = 0x2e
	cfaGNUNegativeOffsetExtend = 0x2f
)

// maxRememberDepth bounds DW_CFA_remember_state nesting.
const maxRememberDepth = 64

var errStateStack = errors.New("DW_CFA_restore_state without a remembered state")

// rowAt returns the CFI row in force at the link-time address pc, which
// must lie in [f.lo, f.hi): it runs the CIE's initial instructions and then
// the FDE's until the location passes pc.
func (f *fde) rowAt(pc uint64) (row, error) {
	e := executor{cie: f.cie, loc: f.lo, pc: pc}
	var cur row
	done, err := e.run(reader{b: f.cie.initial, addr: f.cie.initAddr}, &cur)
	if err != nil {
		return row{}, fmt.Errorf("FDE %#x-%#x: CIE instructions: %w", f.lo, f.hi, err)
	}
	if done {
		return cur, nil
	}
	init := cur
	e.initial = &init
	if _, err := e.run(reader{b: f.ins, addr: f.insAddr}, &cur); err != nil {
		return row{}, fmt.Errorf("FDE %#x-%#x: %w", f.lo, f.hi, err)
	}
	return cur, nil
}

// executor runs call frame instructions.
type executor struct {
	cie     *cie
	loc, pc uint64 // the current location; the pc whose row is wanted
	initial *row   // the row after the CIE's instructions, for DW_CFA_restore
	saved   []row  // DW_CFA_remember_state stack
}

// run executes the instructions in r on cur until they end (done false) or
// the location passes e.pc (done true).
func (e *executor) run(r reader, cur *row) (done bool, err error) {
	for !r.done() {
		op := r.u8()
		var past bool
		switch op & 0xc0 {
		case cfaAdvanceLoc:
			past = e.advance(uint64(op & 0x3f))
		case cfaOffset:
			cur.setReg(uint64(op&0x3f), rule{kind: ruleOffset, off: int64(r.uleb()) * e.cie.dataAlign})
		case cfaRestore:
			e.restore(cur, uint64(op&0x3f))
		default:
			past, err = e.extended(op, &r, cur)
			if err != nil {
				return false, err
			}
		}
		if r.err != nil {
			return false, fmt.Errorf("operand of DW_CFA %#x: %w", op, r.err)
		}
		if past {
			return true, nil
		}
	}
	return false, nil
}

// extended executes the instructions with a whole opcode byte.
func (e *executor) extended(op byte, r *reader, cur *row) (past bool, err error) {
	da := e.cie.dataAlign
	switch op {
	case cfaNop:
	case cfaSetLoc:
		loc := r.pointer(e.cie.fdeEnc&^peIndirect, bases{})
		if loc < e.loc {
			return false, fmt.Errorf("DW_CFA_set_loc %#x goes back from %#x", loc, e.loc)
		}
		e.loc = loc
		return e.loc > e.pc, nil
	case cfaAdvanceLoc1:
		return e.advance(uint64(r.u8())), nil
	case cfaAdvanceLoc2:
		return e.advance(uint64(r.u16())), nil
	case cfaAdvanceLoc4:
		return e.advance(uint64(r.u32())), nil
	case cfaOffsetExtended:
		n := r.uleb()
		cur.setReg(n, rule{kind: ruleOffset, off: int64(r.uleb()) * da})
	case cfaOffsetExtendedSF:
		n := r.uleb()
		cur.setReg(n, rule{kind: ruleOffset, off: r.sleb() * da})
	case cfaGNUNegativeOffsetExtend:
		n := r.uleb()
		cur.setReg(n, rule{kind: ruleOffset, off: -int64(r.uleb()) * da})
	case cfaValOffset:
		n := r.uleb()
		cur.setReg(n, rule{kind: ruleValOffset, off: int64(r.uleb()) * da})
	case cfaValOffsetSF:
		n := r.uleb()
		cur.setReg(n, rule{kind: ruleValOffset, off: r.sleb() * da})
	case cfaRestoreExtended:
		e.restore(cur, r.uleb())
	case cfaUndefined:
		cur.setReg(r.uleb(), rule{kind: ruleUndefined})
	case cfaSameValue:
		cur.setReg(r.uleb(), rule{kind: ruleSame})
	case cfaRegister:
		n := r.uleb()
		cur.setReg(n, rule{kind: ruleRegister, reg: r.uleb()})
	case cfaExpression:
		n := r.uleb()
		cur.setReg(n, rule{kind: ruleExpr, expr: r.block()})
	case cfaValExpression:
		n := r.uleb()
		cur.setReg(n, rule{kind: ruleValExpr, expr: r.block()})
	case cfaRememberState:
		if len(e.saved) >= maxRememberDepth {
			return false, fmt.Errorf("DW_CFA_remember_state nested deeper than %d", maxRememberDepth)
		}
		e.saved = append(e.saved, *cur)
	case cfaRestoreState:
		// The whole row comes back, CFA included: GCC's epilogues rely on it.
		if len(e.saved) == 0 {
			return false, errStateStack
		}
		*cur = e.saved[len(e.saved)-1]
		e.saved = e.saved[:len(e.saved)-1]
	case cfaDefCFA:
		cur.cfa = cfaRule{reg: r.uleb(), off: int64(r.uleb())}
	case cfaDefCFASF:
		reg := r.uleb()
		cur.cfa = cfaRule{reg: reg, off: r.sleb() * da}
	case cfaDefCFARegister:
		cur.cfa.reg, cur.cfa.expr = r.uleb(), nil
	case cfaDefCFAOffset:
		cur.cfa.off, cur.cfa.expr = int64(r.uleb()), nil
	case cfaDefCFAOffsetSF:
		cur.cfa.off, cur.cfa.expr = r.sleb()*da, nil
	case cfaDefCFAExpression:
		cur.cfa = cfaRule{expr: r.block()}
	case cfaGNUArgsSize:
		r.uleb() // bytes of pushed arguments: only the C++ personality cares
	default:
		return false, fmt.Errorf("unsupported call frame instruction %#x", op)
	}
	return false, nil
}

// advance moves the location by delta code alignment units and reports
// whether it passed the wanted pc.
func (e *executor) advance(delta uint64) bool {
	next := e.loc + delta*e.cie.codeAlign
	if next < e.loc { // wrapped: past everything
		next = ^uint64(0)
	}
	e.loc = next
	return e.loc > e.pc
}

// restore resets register n to its rule after the CIE's instructions.
func (e *executor) restore(cur *row, n uint64) {
	if n >= numRegs {
		return
	}
	if e.initial == nil {
		cur.regs[n] = rule{}
		return
	}
	cur.regs[n] = e.initial.regs[n]
}
