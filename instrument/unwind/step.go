package unwind

import (
	"errors"
	"fmt"
)

// stepResult is one frame unwound: its CFA and return address and the
// registers of its caller.
type stepResult struct {
	cfa, ra uint64
	raAt    uint64 // where ra was read, 0 if from no memory
	caller  regFile
	signal  bool // the frame is a signal trampoline
}

var errNoReturnAddress = errors.New("no rule for the return address")

// step unwinds the frame whose registers are cur, looking its CFI up at the
// runtime address lookup.
func step(mods []*Module, lookup uint64, cur *regFile, mem Memory) (stepResult, error) {
	if m := moduleFor(mods, lookup); m != nil {
		if f := m.fdeFor(lookup - m.bias); f != nil {
			s, err := cfiStep(f, lookup-m.bias, cur, mem)
			if err != nil {
				return stepResult{}, fmt.Errorf("unwind %#x in %s: %w", lookup, m.Path, err)
			}
			return s, nil
		}
	}
	s, err := fpStep(cur, mem)
	if err != nil {
		return stepResult{}, fmt.Errorf("unwind %#x by frame pointer: %w", lookup, err)
	}
	return s, nil
}

// cfiStep unwinds by the FDE f at the link-time address pc.
func cfiStep(f *fde, pc uint64, cur *regFile, mem Memory) (stepResult, error) {
	rw, err := f.rowAt(pc)
	if err != nil {
		return stepResult{}, err
	}
	cfa, err := rw.cfa.eval(cur, mem)
	if err != nil {
		return stepResult{}, fmt.Errorf("CFA: %w", err)
	}
	if sp, ok := cur.get(regRSP); ok && !f.cie.signal && cfa < sp {
		return stepResult{}, fmt.Errorf("CFA %#x below rsp %#x", cfa, sp)
	}
	s := stepResult{cfa: cfa, signal: f.cie.signal}
	for n := range uint64(numRegs) {
		v, ok, err := rw.regs[n].value(n, cfa, cur, mem)
		switch {
		case n == f.cie.raReg:
			if err != nil {
				return stepResult{}, fmt.Errorf("return address: %w", err)
			}
			switch rw.regs[n].kind {
			case ruleUndefined: // outermost frame: s.ra stays 0
			case ruleUnspecified:
				return stepResult{}, errNoReturnAddress
			default:
				if !ok {
					return stepResult{}, fmt.Errorf("return address: %w", errUnknownValue)
				}
				s.ra = v
				s.raAt = rw.regs[n].at(cfa, cur, mem)
			}
		case ok && err == nil:
			s.caller.set(n, v)
		}
	}
	if rw.regs[regRSP].kind == ruleUnspecified || rw.regs[regRSP].kind == ruleSame {
		s.caller.set(regRSP, cfa) // the CFA is by definition the caller's rsp
	}
	s.caller.val[regRIP], s.caller.ok[regRIP] = s.ra, true
	return s, nil
}

var errUnknownValue = errors.New("value depends on an unknown register")

// eval computes the CFA from the registers of the frame.
func (c cfaRule) eval(cur *regFile, mem Memory) (uint64, error) {
	if c.expr != nil {
		return evalExpr(c.expr, cur, mem)
	}
	v, ok := cur.get(c.reg)
	if !ok {
		return 0, fmt.Errorf("register %d: %w", c.reg, errUnknownValue)
	}
	return v + uint64(c.off), nil
}

// at is the address this rule reads the caller's value from, 0 if none.
func (ru rule) at(cfa uint64, cur *regFile, mem Memory) uint64 {
	switch ru.kind {
	case ruleOffset:
		return cfa + uint64(ru.off)
	case ruleExpr:
		if a, err := evalExpr(ru.expr, cur, mem, cfa); err == nil {
			return a
		}
	}
	return 0
}

// value recovers the caller's value of register n by this rule. ok is false
// when the value is unknown; err is set when reading memory failed.
func (ru rule) value(n, cfa uint64, cur *regFile, mem Memory) (v uint64, ok bool, err error) {
	switch ru.kind {
	case ruleUnspecified:
		if !calleeSaved(n) {
			return 0, false, nil
		}
		v, ok = cur.get(n)
		return v, ok, nil
	case ruleSame:
		v, ok = cur.get(n)
		return v, ok, nil
	case ruleOffset:
		v, err = read64(mem, cfa+uint64(ru.off))
		return v, err == nil, err
	case ruleValOffset:
		return cfa + uint64(ru.off), true, nil
	case ruleRegister:
		v, ok = cur.get(ru.reg)
		return v, ok, nil
	case ruleExpr:
		a, err := evalExpr(ru.expr, cur, mem, cfa)
		if err != nil {
			return 0, false, err
		}
		v, err = read64(mem, a)
		return v, err == nil, err
	case ruleValExpr:
		v, err = evalExpr(ru.expr, cur, mem, cfa)
		return v, err == nil, err
	}
	return 0, false, nil // ruleUndefined
}

// fpStep unwinds a frame by its frame pointer: push rbp; mov rbp, rsp
// leaves the caller's rbp at [rbp] and the return address at [rbp+8]. The
// caller's registers other than rsp, rbp and rip are unknown.
func fpStep(cur *regFile, mem Memory) (stepResult, error) {
	bp, ok := cur.get(regRBP)
	if !ok {
		return stepResult{}, fmt.Errorf("rbp: %w", errUnknownValue)
	}
	if sp, ok := cur.get(regRSP); ok && bp < sp {
		return stepResult{}, fmt.Errorf("rbp %#x below rsp %#x is not a frame pointer", bp, sp)
	}
	cfa := bp + 16
	if cfa < bp {
		return stepResult{}, fmt.Errorf("rbp %#x overflows", bp)
	}
	ra, err := read64(mem, bp+8)
	if err != nil {
		return stepResult{}, fmt.Errorf("return address: %w", err)
	}
	saved, err := read64(mem, bp)
	if err != nil {
		return stepResult{}, fmt.Errorf("saved rbp: %w", err)
	}
	s := stepResult{cfa: cfa, ra: ra, raAt: bp + 8}
	s.caller.set(regRSP, cfa)
	s.caller.set(regRBP, saved)
	s.caller.set(regRIP, ra)
	return s, nil
}
