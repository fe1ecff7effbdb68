package model

// CallKind is how a call was made (docs/design.md, Calling-context trees):
// the one definition, used by the tracer (instrument tells the kind from the
// call instruction), the recorder and every report that counts calls by
// kind.
type CallKind uint8

// Call kinds.
const (
	KindUnknown  CallKind = iota // no call instruction ends at the return address
	KindDirect                   // call rel32 to a function of the same module
	KindIndirect                 // call through a register or memory (function pointer, vtable)
	KindPLT                      // call through a PLT stub or, with -fno-plt, a GOT slot
)

func (k CallKind) String() string {
	switch k {
	case KindDirect:
		return "direct"
	case KindIndirect:
		return "indirect"
	case KindPLT:
		return "plt"
	default:
		return "unknown"
	}
}
