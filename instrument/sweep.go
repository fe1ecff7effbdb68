package instrument

import (
	"encoding/binary"
	"fmt"
	"os"
	"sync"
	"syscall"
)

// swept is one function's EntryBranches result.
type swept struct {
	branches []EntryBranch
	err      error
}

// Sweep finds the entry branches (EntryBranches) of the functions of m
// that want accepts on workers goroutines, reading each executable
// segment once, for PlanPatchSwept. The sweep reads every instruction of
// every function: for a server of some thousand functions it took most of
// an attach's time, all of it with the target stopped; done first, while
// the target runs, it is not. A module it cannot read is left unswept.
func (m *Module) Sweep(workers int, want func(Symbol) bool) {
	if m.readExec() != nil {
		return
	}
	segs := m.segData
	code := func(sym Symbol) ([]byte, bool) {
		for i, s := range m.loads {
			b, ok := segs[i]
			if ok && sym.Value >= s.vaddr && sym.Value-s.vaddr+sym.Size <= s.filesz {
				return b[sym.Value-s.vaddr:][:sym.Size], true
			}
		}
		return nil, false
	}
	out := make([]*swept, len(m.Symbols))
	done := m.swept // read only while the workers run
	var wg sync.WaitGroup
	for w := range max(workers, 1) {
		wg.Go(func() {
			for i := w; i < len(m.Symbols); i += max(workers, 1) {
				sym := m.Symbols[i]
				if _, ok := done[sym.Value]; ok {
					continue // kept from a walk of its exits (KeepSwept)
				}
				if c, ok := code(sym); ok && sym.Size > 0 && want(sym) {
					b, err := EntryBranches(c)
					out[i] = &swept{b, err}
				}
			}
		})
	}
	wg.Wait()
	if m.swept == nil {
		m.swept = make(map[uint64]swept, len(out))
	}
	for i, s := range out {
		if s != nil {
			m.swept[m.Symbols[i].Value] = *s
		}
	}
}

// KeepSwept records the entry branches of the function at link-time
// address value, or why they could not be told, as a walk of all its
// instructions found them (planning its exit probes: ExitFunc.Swept; or
// an earlier session's walk, from the plan cache), for Swept and for
// Sweep, which then does not read the function again. Not safe beside
// Sweep or Swept.
func (m *Module) KeepSwept(value uint64, branches []EntryBranch, err error) {
	if m.swept == nil {
		m.swept = map[uint64]swept{}
	}
	m.swept[value] = swept{branches, err}
}

// Swept returns the entry branches of sym (EntryBranches) or the error:
// what Sweep found, else what code, its bytes in the file, holds, kept
// for the next process that maps m (a shell script's commands each map
// the C library).
func (m *Module) Swept(sym Symbol, code []byte) (branches []EntryBranch, err error) {
	if s, ok := m.swept[sym.Value]; ok {
		return s.branches, s.err
	}
	branches, err = EntryBranches(code)
	if m.swept == nil {
		m.swept = map[uint64]swept{}
	}
	m.swept[sym.Value] = swept{branches, err}
	return branches, err
}

// Unchanged tells whether the file at m's path is still the one m was
// read from: the same inode, size and modification time.
func (m *Module) Unchanged() bool {
	st, err := os.Stat(m.Path)
	if err != nil {
		return false
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	return ok && sys.Ino == m.ino && st.Size() == m.size && st.ModTime().Equal(m.mtime)
}

// EachSwept calls f with each function's entry branches or error as the
// sweeps found them, by link-time address.
func (m *Module) EachSwept(f func(value uint64, branches []EntryBranch, err error)) {
	for v, s := range m.swept {
		f(v, s.branches, s.err)
	}
}

// SymbolDigest is a byte string that differs whenever the functions' names,
// addresses, sizes or their source (SymbolsFrom) do: with the file's
// bytes, what planning a module's probes depends on.
func (m *Module) SymbolDigest() []byte {
	var b []byte
	b = fmt.Appendf(b, "%s\x00%t\x00%d\x00", m.SymbolsFrom, m.Dynamic, len(m.Symbols))
	for _, s := range m.Symbols {
		b = binary.LittleEndian.AppendUint64(b, s.Value)
		b = binary.LittleEndian.AppendUint64(b, s.Size)
		b = append(append(b, s.Name...), 0)
		b = append(append(b, s.Raw...), 0)
	}
	return b
}
