package instrument

import (
	"debug/elf"
	"errors"
)

// IsGoProgram tells whether the ELF file at path is a Go program: it has a
// .go.buildinfo section (kept by strip) or a runtime.main symbol. Goroutine
// stacks move and goroutines switch stacks under a tracer that follows
// stack pointers, so its counts would be wrong.
func IsGoProgram(path string) bool {
	f, err := elf.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	if f.Section(".go.buildinfo") != nil {
		return true
	}
	syms, err := f.Symbols()
	if err != nil && !errors.Is(err, elf.ErrNoSymbols) {
		return false
	}
	for _, s := range syms {
		if s.Name == "runtime.main" {
			return true
		}
	}
	return false
}
