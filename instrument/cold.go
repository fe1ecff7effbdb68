package instrument

import (
	"sort"
	"strings"
)

// ColdPart finds the part GCC split off function fn (its unlikely paths,
// "fn.cold") that holds the link-time address to: a symbol named for fn's
// cold part, or, where the symbols do not name it (a binary with dynamic
// symbols only), the range of call-frame information around to that no
// symbol overlaps (cfi: that range, from the module's call-frame
// information, link-time; nil: none known). PlanExits checks that the part
// only jumps back into fn.
func (m *Module) ColdPart(fn Symbol, to uint64, cfi func(uint64) (lo, hi uint64, ok bool)) (ColdPart, bool) {
	var lo, hi uint64
	if s, ok := m.Lookup(to); ok {
		if !IsColdPart(s.Name) || !strings.HasPrefix(s.Name, fn.Name) || s.Size == 0 {
			return ColdPart{}, false
		}
		lo, hi = s.Value, s.Value+s.Size
	} else {
		var ok bool
		if cfi == nil {
			return ColdPart{}, false
		}
		if lo, hi, ok = cfi(to); !ok || m.symbolIn(lo, hi) || m.IsPLT(lo) {
			return ColdPart{}, false
		}
	}
	code, err := m.ReadAt(lo, int(hi-lo))
	if err != nil {
		return ColdPart{}, false
	}
	return ColdPart{Addr: lo, Code: code}, true
}

// symbolIn tells whether a symbol starts in, or spans, [lo, hi).
func (m *Module) symbolIn(lo, hi uint64) bool {
	if _, ok := m.Lookup(lo); ok {
		return true
	}
	i := sort.Search(len(m.Symbols), func(i int) bool { return m.Symbols[i].Value >= lo })
	return i < len(m.Symbols) && m.Symbols[i].Value < hi
}
