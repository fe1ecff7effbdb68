package instrument

import (
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// Slack returns the runtime address of n bytes that are mapped executable
// in the process whose mappings are maps but hold neither code nor data:
// the tail of the last page of an executable segment, past the segment's
// end. The kernel maps whole pages, so the bytes are there; no instruction
// of the program leads to them. The tracer keeps code there that must exist
// before it has mapped anything of its own in the target. The files at
// paths are tried in order; the address is 16-byte aligned.
func Slack(maps []Mapping, paths []string, n uint64) (uint64, bool) {
	for _, p := range paths {
		m, err := openLayout(p)
		if err != nil {
			continue
		}
		bias, err := m.Bias(maps)
		if err != nil {
			continue
		}
		for _, lo := range m.slack(n) {
			if m.mappedExec(maps, lo+bias, n) {
				return lo + bias, true
			}
		}
	}
	return 0, false
}

// slack lists the link-time starts of n free bytes past the end of each
// executable segment whose last page no other segment shares.
func (m *Module) slack(n uint64) []uint64 {
	var out []uint64
	for _, s := range m.loads {
		if s.flags&elf.PF_X == 0 || s.filesz != s.memsz {
			continue
		}
		end := s.vaddr + s.memsz
		lo, hi := (end+15)&^15, (end+pageSize-1)&^(pageSize-1)
		if lo+n > hi || m.pageShared(s, hi-pageSize) {
			continue
		}
		out = append(out, lo)
	}
	return out
}

// pageShared tells whether a segment other than s has bytes in the page at
// link-time address page.
func (m *Module) pageShared(s segment, page uint64) bool {
	for _, o := range m.loads {
		if o == s {
			continue
		}
		if o.vaddr < page+pageSize && o.vaddr+o.memsz > page {
			return true
		}
	}
	return false
}

// mappedExec tells whether [addr, addr+n) lies in one executable mapping
// of m's file.
func (m *Module) mappedExec(maps []Mapping, addr, n uint64) bool {
	for _, mp := range maps {
		if mp.Exec() && m.isFile(mp) && mp.Start <= addr && addr+n <= mp.End {
			return true
		}
	}
	return false
}

// openLayout reads what Bias needs of the ELF file at path: its type,
// PT_LOAD headers and identity (inode, real path), no symbols.
func openLayout(path string) (*Module, error) {
	f, m, err := openELF(path)
	if err != nil {
		return nil, err
	}
	f.Close()
	return m, nil
}

// openELF opens an x86-64 ELF file and reads its layout into a new Module.
func openELF(path string) (*elf.File, *Module, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("open module %s: %w", path, err)
	}
	if f.Class != elf.ELFCLASS64 || f.Machine != elf.EM_X86_64 {
		f.Close()
		return nil, nil, fmt.Errorf("open module %s: not an x86-64 ELF file (%v %v)", path, f.Class, f.Machine)
	}
	m := &Module{Path: path, PIE: f.Type == elf.ET_DYN}
	m.layout(f)
	return f, m, nil
}

// layout fills the fields that place m's file in a process: PT_LOAD
// headers, inode and real path.
func (m *Module) layout(f *elf.File) {
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			m.loads = append(m.loads, segment{p.Vaddr, p.Off, p.Filesz, p.Memsz, p.Flags})
		}
	}
	if st, err := os.Stat(m.Path); err == nil {
		if sys, ok := st.Sys().(*syscall.Stat_t); ok {
			m.ino = sys.Ino
		}
		m.size, m.mtime = st.Size(), st.ModTime()
	}
	if real, err := filepath.EvalSymlinks(m.Path); err == nil {
		m.real = real
	}
}
