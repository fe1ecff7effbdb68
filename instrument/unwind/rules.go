package unwind

// ruleKind is how a register of the caller is recovered (DWARF 5 §6.4.1).
type ruleKind uint8

const (
	ruleUnspecified ruleKind = iota // no rule: callee-saved registers keep their value, scratch ones are lost
	ruleUndefined                   // not recoverable (for the return address: outermost frame)
	ruleSame                        // unchanged
	ruleOffset                      // saved at CFA+off
	ruleValOffset                   // the value is CFA+off
	ruleRegister                    // saved in register reg
	ruleExpr                        // saved at the address expr computes (CFA pushed first)
	ruleValExpr                     // the value is what expr computes (CFA pushed first)
)

type rule struct {
	kind ruleKind
	off  int64
	reg  uint64
	expr []byte
}

// cfaRule defines the CFA: reg+off, or expr when expr is not nil.
type cfaRule struct {
	reg  uint64
	off  int64
	expr []byte
}

// row is one row of the CFI table: the rules in force at one pc.
type row struct {
	cfa  cfaRule
	regs [numRegs]rule
}

// setReg sets the rule of register n; rules of registers this package does
// not track are dropped.
func (r *row) setReg(n uint64, ru rule) {
	if n < numRegs {
		r.regs[n] = ru
	}
}
