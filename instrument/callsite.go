package instrument

import (
	"golang.org/x/arch/x86/x86asm"

	"github.com/profile-dev/profile/model"
)

// CallKind is how a function was called: model's, the one definition.
type CallKind = model.CallKind

// The call kinds, as model defines them.
const (
	KindUnknown  = model.KindUnknown
	KindDirect   = model.KindDirect
	KindIndirect = model.KindIndirect
	KindPLT      = model.KindPLT
)

// CallLookback is how many bytes before a return address the tracer should
// read for ClassifyCall: the longest call form compilers emit
// (call [index*8+disp32] with a REX prefix) is 8 bytes.
const CallLookback = 8

// CallSite is a call instruction that ends at a return address.
type CallSite struct {
	Kind   CallKind
	Len    int    // length of the call instruction
	Rel    bool   // call rel32 (Target is set)
	Target uint64 // call rel32: runtime target address
	Slot   uint64 // call [rip+x]: runtime address of the memory operand
}

// DecodeCalls returns every call instruction that could end exactly at the
// runtime return address retAddr, given code, the bytes just before it
// (code[len(code)-1] is at retAddr-1). Without decoding the caller from its
// start the instruction boundaries are unknown, so each length is tried and
// kept only if it decodes as a CALL of exactly that length. The candidates
// are ordered by length.
//
// isPLT is asked about runtime addresses: direct call targets and the
// memory operand of call [rip+x]. It should report true for PLT stubs and
// for GOT slots, which is what -fno-plt calls go through: for the module m
// containing a with load bias b, m.IsPLT(a-b) || m.IsGOT(a-b). It may be
// nil.
func DecodeCalls(code []byte, retAddr uint64, isPLT func(uint64) bool) []CallSite {
	if isPLT == nil {
		isPLT = func(uint64) bool { return false }
	}
	var out []CallSite
	for n := 2; n <= min(len(code), 15); n++ {
		b := code[len(code)-n:]
		inst, err := decodeInst(b)
		if err != nil || inst.Len != n || inst.Op != x86asm.CALL {
			continue
		}
		cs := CallSite{Kind: KindIndirect, Len: n}
		switch a := inst.Args[0].(type) {
		case x86asm.Rel:
			cs.Rel, cs.Target = true, retAddr+uint64(pcRel(b, inst))
			cs.Kind = KindDirect
			if isPLT(cs.Target) {
				cs.Kind = KindPLT
			}
		case x86asm.Mem:
			if a.Base == x86asm.RIP {
				cs.Slot = retAddr + uint64(pcRel(b, inst))
				if isPLT(cs.Slot) {
					cs.Kind = KindPLT
				}
			}
		}
		out = append(out, cs)
	}
	return out
}

// ClassifyCall classifies the call that produced the runtime return address
// retAddr from the bytes before it (see DecodeCalls). It reports false when
// no call ends there: the "return address" of a thread's or signal
// handler's first frame, or of a function entered by a jump.
//
// Several candidates may decode (a stray 0xe8 five bytes back in front of a
// 3-byte indirect call); call rel32 wins because it is by far the most
// common call, then the shortest indirect call. ClassifyCallTo breaks such
// ties with the callee and should be preferred when it is known.
func ClassifyCall(code []byte, retAddr uint64, isPLT func(uint64) bool) (CallKind, bool) {
	cs, ok := pick(DecodeCalls(code, retAddr, isPLT), func(c CallSite) bool { return c.Rel })
	return cs.Kind, ok
}

// ClassifyCallTo is ClassifyCall for a call known to have entered the
// function at runtime address callee (the tracer knows it: it is where the
// entry breakpoint fired). A direct call to callee is certain; a direct call
// to a PLT stub is next (the callee is then in another module); an indirect
// call beats a direct call elsewhere, which only remains plausible for a
// tail call (the caller called f, and f jumped to callee).
func ClassifyCallTo(code []byte, retAddr, callee uint64, isPLT func(uint64) bool) (CallKind, bool) {
	cands := DecodeCalls(code, retAddr, isPLT)
	for _, prefer := range []func(CallSite) bool{
		func(c CallSite) bool { return c.Rel && c.Target == callee },
		func(c CallSite) bool { return c.Rel && c.Kind == KindPLT },
		func(c CallSite) bool { return !c.Rel },
	} {
		for _, c := range cands {
			if prefer(c) {
				return c.Kind, true
			}
		}
	}
	cs, ok := pick(cands, func(CallSite) bool { return false })
	return cs.Kind, ok
}

// pick returns the first candidate satisfying first, else the first one.
func pick(cands []CallSite, first func(CallSite) bool) (CallSite, bool) {
	for _, c := range cands {
		if first(c) {
			return c, true
		}
	}
	if len(cands) > 0 {
		return cands[0], true
	}
	return CallSite{Kind: KindUnknown}, false
}
