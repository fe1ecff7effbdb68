package instrument

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"sort"
	"time"
)

// Symbol is one function of a Module.
type Symbol struct {
	Name  string // demangled (C++ and Rust, parameter lists included); C names unchanged
	Raw   string // as in the symbol table
	Value uint64 // link-time address (st_value)
	Size  uint64
}

// Module is one ELF file's function symbols and the facts about its layout
// the tracer needs to place breakpoints and classify calls.
type Module struct {
	Path    string // as opened
	BuildID string // hex of NT_GNU_BUILD_ID, "" if none
	PIE     bool   // ET_DYN: runtime address = link-time address + bias

	// Symbols holds one symbol per address, sorted by Value (see symbols.go
	// for how aliases are collapsed).
	Symbols []Symbol
	// Dynamic: the file has no .symtab functions; Symbols are its dynamic
	// (exported) symbols only.
	Dynamic bool
	// SymbolsFrom says where Symbols came from when not from the file
	// itself: "build-id PATH", "debuglink PATH" or "debuginfod URL" (a
	// separate debug file, DebugSearch); "" for the file.
	SymbolsFrom string
	// IFuncSlots maps the link-time address of each GOT slot the dynamic
	// linker fills with an IFUNC's choice (R_X86_64_IRELATIVE) to the
	// IFUNC's name: read in a running process, a slot tells which
	// function the IFUNC resolved to.
	IFuncSlots map[uint64]string

	// PLT maps the link-time address of each PLT stub (.plt, .plt.sec,
	// .plt.got) to the name of the function it jumps to.
	PLT map[uint64]string
	// GOT maps the link-time address of each GOT slot that holds the address
	// of an imported function or data object to the symbol's name. Code built
	// with -fno-plt calls through these slots directly (call [rip+slot]).
	GOT map[uint64]string

	plt      []addrRange       // PLT sections
	pltSlots map[uint64]uint64 // PLT stub -> the GOT slot it jumps through (PLTSlot)
	got      []addrRange       // .got and .got.plt
	loads    []segment         // PT_LOAD headers
	ino      uint64            // inode of the opened file, to recognise it in /proc/PID/maps
	size     int64             // its size and modification time (Unchanged)
	mtime    time.Time
	real     string // Path with symlinks resolved, as the kernel names it in maps
	// swept: each function's entry branches by address (Sweep), nil
	// before a sweep.
	swept map[uint64]swept
	// segData: the executable segments' file bytes by index in loads,
	// kept by Sweep for ReadAt.
	segData map[int][]byte
	// siteIdx: every direct branch to a function's entry (CallSites),
	// nil until first asked.
	siteIdx *siteIndex
}

// ErrNoSymbols is returned (wrapped with the path) by Open when a file has no
// function symbols at all.
var ErrNoSymbols = errors.New("no function symbols (stripped binary?)")

type addrRange struct{ start, end uint64 }

func (r addrRange) contains(a uint64) bool { return a >= r.start && a < r.end }

type segment struct {
	vaddr, off, filesz, memsz uint64
	flags                     elf.ProgFlag
}

// Open reads the function symbols, PLT stubs and layout of the ELF file at
// path. The file is not kept open: Code and ReadAt reopen it.
func Open(path string) (*Module, error) { return OpenWith(path, nil) }

// OpenWith is Open that, for a file without a symbol table (stripped),
// takes the function symbols from its separate debug file, found by
// debug (nil: none looked for). The debug file's addresses are the
// file's own (the same link); its code is not there (.text is NOBITS),
// so code is still read from the file at path.
func OpenWith(path string, debug *DebugSearch) (*Module, error) {
	f, m, err := openELF(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m.BuildID = buildID(f)
	syms, ifuncs, dynamic, err := readSymbols(f)
	if err != nil {
		return nil, fmt.Errorf("open module %s: %w", path, err)
	}
	if debug != nil && (dynamic || len(syms) == 0) {
		if df := debug.find(path, f, m.BuildID); df != nil {
			dsyms, difuncs, err := readDebugSymbols(df.f)
			df.f.Close()
			if err != nil {
				return nil, fmt.Errorf("open module %s: debug file %s: %w", path, df.at, err)
			}
			if len(dsyms) > 0 {
				syms, dynamic, m.SymbolsFrom = dsyms, false, df.from+" "+df.at
				for a, n := range difuncs {
					ifuncs[a] = n
				}
			}
		}
	}
	m.Dynamic = dynamic
	if len(syms) == 0 {
		return nil, fmt.Errorf("open module %s: %w", path, ErrNoSymbols)
	}
	m.Symbols = syms
	if err := m.readPLT(f, ifuncs); err != nil {
		return nil, fmt.Errorf("open module %s: %w", path, err)
	}
	return m, nil
}

// Lookup returns the symbol containing the link-time address addr. A symbol
// of size 0 contains only its own address.
func (m *Module) Lookup(addr uint64) (Symbol, bool) {
	i := sort.Search(len(m.Symbols), func(i int) bool { return m.Symbols[i].Value > addr }) - 1
	if i < 0 {
		return Symbol{}, false
	}
	s := m.Symbols[i]
	if addr == s.Value || addr-s.Value < s.Size {
		return s, true
	}
	return Symbol{}, false
}

// IsPLT reports whether the link-time address addr lies in a PLT section.
func (m *Module) IsPLT(addr uint64) bool { return inRanges(m.plt, addr) }

// IsGOT reports whether the link-time address addr lies in .got or .got.plt.
func (m *Module) IsGOT(addr uint64) bool { return inRanges(m.got, addr) }

func inRanges(rs []addrRange, a uint64) bool {
	for _, r := range rs {
		if r.contains(a) {
			return true
		}
	}
	return false
}

// maxZeroSizeCode is how many bytes Code returns for a symbol of size 0:
// enough for the longest x86 instruction, which is all the planner needs.
const maxZeroSizeCode = 16

// Code returns the bytes of sym's function as stored in the file. For a
// symbol of size 0 it returns up to 16 bytes (fewer at the end of the
// segment), enough to decode its first instruction.
func (m *Module) Code(sym Symbol) ([]byte, error) {
	n := sym.Size
	if n == 0 {
		seg, ok := m.segmentAt(sym.Value)
		if !ok {
			return nil, fmt.Errorf("code of %s: address %#x not in a loaded segment of %s", sym.Name, sym.Value, m.Path)
		}
		n = min(maxZeroSizeCode, seg.vaddr+seg.filesz-sym.Value)
	}
	b, err := m.ReadAt(sym.Value, int(n))
	if err != nil {
		return nil, fmt.Errorf("code of %s: %w", sym.Name, err)
	}
	return b, nil
}

// ReadAt returns n bytes at the link-time address addr from the file-backed
// part of the PT_LOAD segment that contains it.
func (m *Module) ReadAt(addr uint64, n int) ([]byte, error) {
	if n < 0 {
		return nil, fmt.Errorf("read %s at %#x: negative length %d", m.Path, addr, n)
	}
	seg, ok := m.segmentAt(addr)
	if !ok || addr+uint64(n) > seg.vaddr+seg.filesz {
		return nil, fmt.Errorf("read %s at %#x+%d: not in the file-backed part of a PT_LOAD segment", m.Path, addr, n)
	}
	for i, s := range m.loads {
		if b, ok := m.segData[i]; ok && s == seg {
			return bytes.Clone(b[addr-s.vaddr:][:n]), nil
		}
	}
	f, err := os.Open(m.Path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", m.Path, err)
	}
	defer f.Close()
	b := make([]byte, n)
	if _, err := f.ReadAt(b, int64(seg.off+addr-seg.vaddr)); err != nil {
		return nil, fmt.Errorf("read %s at %#x: %w", m.Path, addr, err)
	}
	return b, nil
}

// segmentAt returns the PT_LOAD segment whose file-backed part holds addr.
func (m *Module) segmentAt(addr uint64) (segment, bool) {
	for _, s := range m.loads {
		if addr >= s.vaddr && addr-s.vaddr < s.filesz {
			return s, true
		}
	}
	return segment{}, false
}
