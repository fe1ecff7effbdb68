package attach

import (
	"encoding/binary"
	"slices"

	"github.com/profile-dev/profile/attach/internal/ptrace"
)

// ifuncChoices reads, through the stopped thread tid, the GOT slots the
// dynamic linker filled with the choices of module l's IFUNCs
// (R_X86_64_IRELATIVE, done when the module is relocated), and returns
// the IFUNCs' names by the name of the function each chose: a call of
// memcpy runs __memmove_avx_unaligned_erms, which a filter naming memcpy
// must then select. A slot not filled yet (a library being loaded) or
// holding no function's start names nothing.
func ifuncChoices(tid int, l *loaded) map[string][]string {
	out := map[string][]string{}
	if len(l.mod.IFuncSlots) == 0 {
		return out
	}
	// The slots lie together in the GOT: one read of their span, while
	// the process is held stopped.
	lo, hi := uint64(1<<64-1), uint64(0)
	for slot := range l.mod.IFuncSlots {
		lo, hi = min(lo, slot), max(hi, slot+8)
	}
	got := make([]byte, hi-lo)
	if hi-lo > 1<<20 || ptrace.ReadMem(tid, lo+l.bias, got) != nil {
		return out
	}
	for slot, ifunc := range l.mod.IFuncSlots {
		addr := binary.LittleEndian.Uint64(got[slot-lo:]) - l.bias
		sym, ok := l.mod.Lookup(addr)
		if !ok || sym.Value != addr || slices.Contains(out[sym.Name], ifunc) {
			continue
		}
		out[sym.Name] = append(out[sym.Name], ifunc)
	}
	for _, names := range out {
		slices.Sort(names) // map order is not the profile's business
	}
	return out
}
