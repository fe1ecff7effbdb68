package unwind

// Regs are the registers the unwinder starts from: the pc, the stack
// pointer and the callee-saved registers, which are all CFI needs to find
// the frames of ordinary code.
type Regs struct{ RIP, RSP, RBP, RBX, R12, R13, R14, R15 uint64 }

// DWARF register numbers of x86-64 (System V psABI, figure 3.36).
const (
	regRAX = 0
	regRDX = 1
	regRBX = 3
	regRBP = 6
	regRSP = 7
	regR12 = 12
	regR13 = 13
	regR14 = 14
	regR15 = 15
	regRIP = 16 // the return-address column

	numRegs = 17 // the general registers and rip; CFI rules for others are ignored
)

// regFile is the unwinder's view of one frame's registers: a register whose
// ok bit is false has an unknown value.
type regFile struct {
	val [numRegs]uint64
	ok  [numRegs]bool
}

func (r Regs) file() regFile {
	var f regFile
	f.set(regRIP, r.RIP)
	f.set(regRSP, r.RSP)
	f.set(regRBP, r.RBP)
	f.set(regRBX, r.RBX)
	f.set(regR12, r.R12)
	f.set(regR13, r.R13)
	f.set(regR14, r.R14)
	f.set(regR15, r.R15)
	return f
}

func (f *regFile) get(n uint64) (uint64, bool) {
	if n >= numRegs {
		return 0, false
	}
	return f.val[n], f.ok[n]
}

func (f *regFile) set(n, v uint64) {
	if n < numRegs {
		f.val[n], f.ok[n] = v, true
	}
}

// calleeSaved reports whether the psABI has functions preserve register n:
// its value in the caller is the callee's unless CFI says it was saved.
// The others are scratch registers whose caller value is unknown.
func calleeSaved(n uint64) bool {
	switch n {
	case regRBX, regRBP, regRSP, regR12, regR13, regR14, regR15:
		return true
	}
	return false
}
