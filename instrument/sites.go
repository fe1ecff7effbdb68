package instrument

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"os"

	"golang.org/x/arch/x86/x86asm"
)

// A function whose first bytes a branch of its own lands in (a loop head
// at the entry) cannot take the jump of an inline probe there. If every way
// into it is a direct branch of its own module (a call, or a jmp or jcc
// tail call, each with a 32-bit displacement), its probe can be those
// branches instead: each is re-aimed at the trampoline, which jumps to the
// function's untouched entry (docs/design.md, Inline probes). The module
// is swept whole for them, once (siteIndex); a function whose address is
// taken (a rip-relative lea or mov, an absolute immediate, a pointer in
// data, an export other modules may call) or that a short branch reaches
// from elsewhere is refused.

// BranchSite is one direct branch to a function's entry: its link-time
// address, length, and the offset of its rel32.
type BranchSite struct {
	At   uint64
	Len  int
	Disp int
}

// ErrSitesUnknown wraps CallSites' reasons: the function's ways in could
// not all be found, or one cannot be re-aimed.
var ErrSitesUnknown = errors.New("not every call site found")

// siteIndex is what a sweep of a module's whole code found.
type siteIndex struct {
	sites map[uint64][]BranchSite // target -> rel32 branches to it
	bad   map[uint64]string       // target -> why it cannot be probed at its sites
	code  []codeMap               // what the sweep decoded, per executable segment
	err   error                   // the module cannot be swept whole
}

// codeMap marks, for the bytes of one executable segment from base, those
// the sweep decoded (covered: instructions and padding) and where each
// instruction starts.
type codeMap struct {
	base            uint64
	covered, starts []uint64 // bitsets
}

func newCodeMap(base uint64, n int) codeMap {
	w := (n + 63) / 64
	return codeMap{base: base, covered: make([]uint64, w), starts: make([]uint64, w)}
}

func (c codeMap) mark(at uint64, n int) {
	i := at - c.base
	c.starts[i/64] |= 1 << (i % 64)
	for k := i; k < i+uint64(n); k++ {
		c.covered[k/64] |= 1 << (k % 64)
	}
}

func (c codeMap) has(set []uint64, at uint64) bool {
	i := at - c.base
	return at >= c.base && i/64 < uint64(len(set)) && set[i/64]&(1<<(i%64)) != 0
}

// decoded tells whether the sweep read the byte at at as part of an
// instruction or padding.
func (x *siteIndex) decoded(at uint64) bool {
	for _, c := range x.code {
		if c.has(c.covered, at) {
			return true
		}
	}
	return false
}

// CallSites returns every direct branch to sym's entry in its module, in
// address order, or why they cannot all be found or re-aimed.
func (m *Module) CallSites(sym Symbol) ([]BranchSite, error) {
	if m.siteIdx == nil {
		m.siteIdx = m.indexSites()
	}
	x := m.siteIdx
	if x.err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSitesUnknown, x.err)
	}
	if why, ok := x.bad[sym.Value]; ok {
		return nil, fmt.Errorf("%w: %s", ErrSitesUnknown, why)
	}
	// A byte pattern of a rel32 branch to it that the sweep did not find
	// as an instruction: code the sweep could not vouch for.
	for i, s := range m.loads {
		b, ok := m.segData[i]
		if !ok {
			continue
		}
		for off := 0; off+5 <= len(b); off++ {
			n := 0
			switch {
			case b[off] == 0xe8 || b[off] == 0xe9:
				n = 5
			case b[off] == 0x0f && b[off+1]&0xf0 == 0x80 && off+6 <= len(b):
				n = 6
			default:
				continue
			}
			at := s.vaddr + uint64(off)
			to := at + uint64(n) + uint64(int64(int32(binary.LittleEndian.Uint32(b[off+n-4:]))))
			// Inside a decoded instruction the bytes are an operand; at
			// its start, a branch the sweep listed.
			if to == sym.Value && !x.decoded(at) {
				return nil, fmt.Errorf("%w: bytes at %#x branch to it in code the sweep could not read", ErrSitesUnknown, at)
			}
		}
	}
	sites := x.sites[sym.Value]
	if len(sites) == 0 {
		return nil, fmt.Errorf("%w: no direct call to it", ErrSitesUnknown)
	}
	return sites, nil
}

// indexSites sweeps every executable segment of m from each function
// symbol on (and the bytes between them, from their start), and reads the
// relocations and exports that may hold a function's address.
func (m *Module) indexSites() *siteIndex {
	x := &siteIndex{sites: map[uint64][]BranchSite{}, bad: map[uint64]string{}}
	if m.Dynamic {
		x.err = errors.New("only its exported symbols are known: code between them is not")
		return x
	}
	f, err := elf.Open(m.Path)
	if err != nil {
		x.err = err
		return x
	}
	defer f.Close()
	if m.segData == nil {
		if x.err = m.readExec(); x.err != nil {
			return x
		}
	}
	for i, s := range m.loads {
		if b, ok := m.segData[i]; ok {
			x.code = append(x.code, newCodeMap(s.vaddr, len(b)))
			x.sweepSegment(m, b, s.vaddr, x.code[len(x.code)-1])
		}
	}
	if x.err != nil {
		return x
	}
	x.addressesInData(m, f)
	return x
}

// readExec reads m's executable segments into segData (Sweep and
// CallSites read them; ReadAt serves from them).
func (m *Module) readExec() error {
	f, err := os.Open(m.Path)
	if err != nil {
		return err
	}
	defer f.Close()
	segs := map[int][]byte{}
	for i, s := range m.loads {
		if s.flags&elf.PF_X == 0 {
			continue
		}
		b := make([]byte, s.filesz)
		if _, err := f.ReadAt(b, int64(s.off)); err != nil {
			return err
		}
		segs[i] = b
	}
	m.segData = segs
	return nil
}

// sweepSegment decodes the code of one executable segment b (link-time
// address base): from each symbol's start to its end, and any bytes
// between symbols that are not padding from their start.
func (x *siteIndex) sweepSegment(m *Module, b []byte, base uint64, cm codeMap) {
	end := base + uint64(len(b))
	pos := base
	for _, sym := range m.Symbols {
		if sym.Value < pos || sym.Value >= end || sym.Size == 0 {
			continue // one without a size is read as a gap: its end is unknown
		}
		if sym.Value > pos {
			x.sweep(m, cm, b[pos-base:sym.Value-base], pos, true)
		}
		stop := min(sym.Value+sym.Size, end)
		x.sweep(m, cm, b[sym.Value-base:stop-base], sym.Value, false)
		pos = stop
	}
	if pos < end {
		x.sweep(m, cm, b[pos-base:], pos, true)
	}
}

// sweep decodes code at link-time address at linearly. Between symbols
// (gap) the bytes may be padding or data: an undecodable byte there
// stops the sweep of the gap, and the byte scan of CallSites catches a
// branch it hid. In a function it makes the module unsweepable.
func (x *siteIndex) sweep(m *Module, cm codeMap, code []byte, at uint64, gap bool) {
	for off := 0; off < len(code); {
		c := code[off:]
		pc := at + uint64(off)
		if c[0] == 0xcc || c[0] == 0x00 && allZero(c) {
			cm.mark(pc, 1)
			off++
			continue
		}
		if v, err := decodeVEX(c); !errors.Is(err, errNotVEX) {
			if err != nil {
				if !gap {
					x.err = fmt.Errorf("undecodable code at %#x", pc)
				}
				return
			}
			cm.mark(pc, v.len)
			off += v.len
			continue
		}
		if n := cetLen(c); n > 0 {
			cm.mark(pc, n)
			off += n
			continue
		}
		inst, err := decodeInst(c)
		if err != nil {
			if !gap {
				x.err = fmt.Errorf("undecodable code at %#x", pc)
			}
			return
		}
		cm.mark(pc, inst.Len)
		x.note(m, c[:inst.Len], inst, pc)
		off += inst.Len
	}
}

// note records what instruction inst at pc does with a function's entry.
func (x *siteIndex) note(m *Module, code []byte, inst x86asm.Inst, pc uint64) {
	next := pc + uint64(inst.Len)
	if _, ok := inst.Args[0].(x86asm.Rel); ok && inst.PCRel > 0 {
		to := next + uint64(pcRel(code, inst))
		s, ok := m.Lookup(to)
		if !ok || s.Value != to {
			return // not to a function's entry
		}
		inside := pc >= s.Value && pc < s.Value+max(s.Size, 1)
		switch {
		case inside && inst.Op != x86asm.CALL:
			// A loop back to its own entry: not a call, left alone.
		case inst.PCRel != 4:
			x.bad[to] = fmt.Sprintf("a short branch at %#x reaches it", pc)
		case inst.Op == x86asm.CALL || inst.Op == x86asm.JMP || isShortCond(inst.Op):
			x.sites[to] = append(x.sites[to], BranchSite{At: pc, Len: inst.Len, Disp: inst.PCRelOff})
		}
		return
	}
	if _, ok := ripMem(inst); ok && inst.PCRel == 4 {
		to := next + uint64(int64(int32(binary.LittleEndian.Uint32(code[inst.PCRelOff:]))))
		x.bad[to] = fmt.Sprintf("its address is taken at %#x", pc)
		return
	}
	if !m.PIE {
		// An absolute address: an immediate or a displacement.
		for _, a := range inst.Args {
			switch v := a.(type) {
			case x86asm.Imm:
				x.bad[uint64(v)] = fmt.Sprintf("its address is an immediate at %#x", pc)
			case x86asm.Mem:
				if v.Base == 0 && v.Index == 0 {
					x.bad[uint64(v.Disp)] = fmt.Sprintf("its address is an operand at %#x", pc)
				}
			}
		}
	}
}

// addressesInData marks the functions whose address is in data or that
// other modules may call: relocations that write an address (RELATIVE
// addends, symbol relocations), exported symbols, and in a non-PIE
// executable every aligned 8-byte value of its writable and read-only
// data that equals a function's entry.
func (x *siteIndex) addressesInData(m *Module, f *elf.File) {
	dyn, _ := f.DynamicSymbols()
	for _, s := range dyn {
		if s.Section != elf.SHN_UNDEF && elf.ST_TYPE(s.Info) == elf.STT_FUNC && elf.ST_BIND(s.Info) != elf.STB_LOCAL &&
			elf.ST_VISIBILITY(s.Other) == elf.STV_DEFAULT {
			x.bad[s.Value] = "exported: other modules may call it"
		}
	}
	for _, sec := range f.Sections {
		if sec.Type != elf.SHT_RELA {
			continue
		}
		data, err := sec.Data()
		if err != nil {
			x.err = err
			return
		}
		for off := 0; off+24 <= len(data); off += 24 {
			info := binary.LittleEndian.Uint64(data[off+8:])
			addend := binary.LittleEndian.Uint64(data[off+16:])
			switch elf.R_X86_64(info & 0xffffffff) {
			case elf.R_X86_64_RELATIVE, elf.R_X86_64_IRELATIVE:
				x.bad[addend] = "its address is stored in data"
			case elf.R_X86_64_64, elf.R_X86_64_GLOB_DAT, elf.R_X86_64_JMP_SLOT:
				if i := int(info >> 32); i > 0 && i <= len(dyn) && dyn[i-1].Section != elf.SHN_UNDEF {
					x.bad[dyn[i-1].Value+addend] = "its address is stored in data"
				}
			}
		}
	}
	if m.PIE {
		return
	}
	entries := make(map[uint64]bool, len(m.Symbols))
	for _, s := range m.Symbols {
		entries[s.Value] = true
	}
	for _, p := range f.Progs {
		if p.Type != elf.PT_LOAD || p.Flags&elf.PF_X != 0 {
			continue
		}
		b := make([]byte, p.Filesz)
		if _, err := p.ReadAt(b, 0); err != nil {
			x.err = err
			return
		}
		for off := (8 - p.Vaddr%8) % 8; off+8 <= uint64(len(b)); off += 8 {
			if v := binary.LittleEndian.Uint64(b[off:]); entries[v] {
				x.bad[v] = "its address is stored in data"
			}
		}
	}
}
