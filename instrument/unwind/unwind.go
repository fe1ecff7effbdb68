package unwind

// Frame is one activation on the stack.
type Frame struct {
	// PC is, for frame 0, the current pc; for callers the return address
	// into them (unless the callee was a signal frame: then the pc at which
	// the signal interrupted).
	PC uint64
	// CFA is the canonical frame address: the value of rsp just before the
	// call that created the frame, so the return address lies at CFA-8
	// (signal trampolines excepted).
	CFA uint64
	// RA is the frame's return address, the next frame's PC; 0 for the
	// outermost frame.
	RA uint64
	// RAAt is where RA was read from (for a signal frame, the saved pc
	// the kernel resumes at), 0 if from no memory.
	RAAt uint64
}

// Unwind walks from regs outward through at most max frames. Each frame is
// unwound by the CFI of the module containing its pc; where no FDE covers
// the pc it falls back to the frame-pointer chain (saved rbp at [rbp], the
// return address at [rbp+8], CFA = rbp+16). It stops at a pc of 0, at a
// return address of 0 (the outermost frame, which is included), at a CFA
// that does not grow, and when a frame cannot be unwound (a read error, an
// unknown register, a rule it does not support); it then returns the frames
// found so far.
//
// For frame 0 the FDE is looked up at the pc itself; for callers at pc-1,
// because a call may be the last instruction of a function, whose return
// address then lies past its FDE, except after a signal frame ('S'
// augmentation), where the pc is the interrupted instruction itself.
func Unwind(mods []*Module, regs Regs, mem Memory, max int) []Frame {
	var frames []Frame
	cur := regs.file()
	afterSignal := false
	for len(frames) < max {
		pc := cur.val[regRIP]
		if pc == 0 {
			break
		}
		lookup := pc
		if len(frames) > 0 && !afterSignal {
			lookup = pc - 1
		}
		s, err := step(mods, lookup, &cur, mem)
		if err != nil {
			break
		}
		// Stacks grow down, so callers' CFAs are higher, except across a
		// signal frame, where the handler may run on an alternate stack.
		if n := len(frames); n > 0 && !afterSignal && s.cfa <= frames[n-1].CFA {
			break
		}
		frames = append(frames, Frame{PC: pc, CFA: s.cfa, RA: s.ra, RAAt: s.raAt})
		if s.ra == 0 {
			break
		}
		cur, afterSignal = s.caller, s.signal
	}
	return frames
}

// moduleFor returns the module whose runtime range holds pc, or nil.
func moduleFor(mods []*Module, pc uint64) *Module {
	for _, m := range mods {
		if m != nil && m.Contains(pc) {
			return m
		}
	}
	return nil
}
