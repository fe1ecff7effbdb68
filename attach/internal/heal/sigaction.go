package heal

import (
	"encoding/binary"

	"github.com/profile-dev/profile/attach/internal/ptrace"
)

// SigAction is the kernel's struct sigaction on x86-64.
type SigAction struct{ Handler, Flags, Restorer, Mask uint64 }

// sa_flags the handler's disposition is built from.
const (
	SaSiginfo  = 0x4
	SaOnstack  = 0x08000000
	SaRestorer = 0x04000000
	SaNodefer  = 0x40000000
	SaRestart  = 0x10000000
)

// Bytes is a as the kernel reads it.
func (a SigAction) Bytes() []byte {
	b := make([]byte, 32)
	for i, v := range []uint64{a.Handler, a.Flags, a.Restorer, a.Mask} {
		binary.LittleEndian.PutUint64(b[8*i:], v)
	}
	return b
}

// ParseSigAction reads a struct sigaction the kernel wrote.
func ParseSigAction(b []byte) SigAction {
	u := func(i int) uint64 { return binary.LittleEndian.Uint64(b[8*i:]) }
	return SigAction{u(0), u(1), u(2), u(3)}
}

// ReadAct reads the struct sigaction at addr through stopped task tid.
func ReadAct(tid int, addr uint64) (SigAction, error) {
	buf := make([]byte, 32)
	if err := ptrace.ReadMem(tid, addr, buf); err != nil {
		return SigAction{}, err
	}
	return ParseSigAction(buf), nil
}

// WriteAct writes a at addr through stopped task tid.
func WriteAct(tid int, addr uint64, a SigAction) error {
	return ptrace.WriteMem(tid, addr, a.Bytes())
}

// Handler is the disposition that makes the area at base the handler,
// keeping the program's own old mask and stack and deferral flags, so
// that chaining to it behaves as before.
func Handler(base uint64, old SigAction) SigAction {
	return SigAction{Handler: base, Flags: SaSiginfo | SaRestorer | old.Flags&(SaOnstack|SaNodefer),
		Restorer: Restorer(base), Mask: old.Mask}
}
