package instrument

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strings"

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

// codeMap marks, as a bitset, the bytes of one executable segment from
// base that the sweep decoded (instructions and padding).
type codeMap struct {
	base    uint64
	covered []uint64
}

func newCodeMap(base uint64, n int) codeMap {
	return codeMap{base: base, covered: make([]uint64, (n+63)/64)}
}

func (c codeMap) mark(at uint64, n int) {
	for k := at - c.base; k < at-c.base+uint64(n); k++ {
		c.covered[k/64] |= 1 << (k % 64)
	}
}

func (c codeMap) has(at uint64) bool {
	i := at - c.base
	return at >= c.base && i/64 < uint64(len(c.covered)) && c.covered[i/64]&(1<<(i%64)) != 0
}

// decoded tells whether the sweep read the byte at at as part of an
// instruction or padding.
func (x *siteIndex) decoded(at uint64) bool {
	for _, c := range x.code {
		if c.has(at) {
			return true
		}
	}
	return false
}

// BranchLen is the length of the rel32 call, jmp or jcc b starts with
// (its displacement is its last 4 bytes), 0 for anything else.
func BranchLen(b []byte) int {
	switch {
	case len(b) >= 5 && (b[0] == 0xe8 || b[0] == 0xe9):
		return 5
	case len(b) >= 6 && b[0] == 0x0f && b[1]&0xf0 == 0x80:
		return 6
	}
	return 0
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
		for off := range b {
			n := BranchLen(b[off:])
			if n == 0 {
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

// LoadCode reads m's executable segments once, for ReadAt to serve
// from: call it before reading many functions (from several goroutines,
// which ReadAt alone would each open the file for).
func (m *Module) LoadCode() error { return m.readExec() }

// readExec reads m's executable segments into segData, if not yet (Sweep
// and CallSites read them; ReadAt serves from them).
func (m *Module) readExec() error {
	if m.segData != nil {
		return nil
	}
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
		case inst.PCRel == 4 && (inst.Op == x86asm.CALL || inst.Op == x86asm.JMP || isShortCond(inst.Op)):
			x.sites[to] = append(x.sites[to], BranchSite{At: pc, Len: inst.Len, Disp: inst.PCRelOff})
		case inst.PCRel != 4:
			x.refuse(m, to, fmt.Sprintf("a short %s at %#x reaches it", strings.ToLower(inst.Op.String()), pc))
		default: // xbegin: a branch that is no call
			x.refuse(m, to, fmt.Sprintf("a %s at %#x reaches it", strings.ToLower(inst.Op.String()), pc))
		}
		return
	}
	if _, ok := ripMem(inst); ok && inst.PCRel == 4 {
		to := next + uint64(int64(int32(binary.LittleEndian.Uint32(code[inst.PCRelOff:]))))
		x.refuse(m, to, fmt.Sprintf("its address is taken at %#x", pc))
		return
	}
	if !m.PIE {
		// An absolute address: an immediate or a displacement.
		for _, a := range inst.Args {
			switch v := a.(type) {
			case x86asm.Imm:
				x.refuse(m, uint64(v), fmt.Sprintf("its address is an immediate at %#x", pc))
			case x86asm.Mem:
				if v.Base == 0 && v.Index == 0 {
					x.refuse(m, uint64(v.Disp), fmt.Sprintf("its address is an operand at %#x", pc))
				}
			}
		}
	}
}

// refuse records why the function whose entry is addr, if one is, cannot
// be probed at its call sites (the first reason found stays).
func (x *siteIndex) refuse(m *Module, addr uint64, why string) {
	if s, ok := m.Lookup(addr); !ok || s.Value != addr {
		return
	}
	if _, ok := x.bad[addr]; !ok {
		x.bad[addr] = why
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
			x.refuse(m, s.Value, "exported: other modules may call it")
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
				x.refuse(m, addend, "its address is stored in data")
			case elf.R_X86_64_64, elf.R_X86_64_GLOB_DAT, elf.R_X86_64_JMP_SLOT:
				if i := int(info >> 32); i > 0 && i <= len(dyn) && dyn[i-1].Section != elf.SHN_UNDEF {
					x.refuse(m, dyn[i-1].Value+addend, "its address is stored in data")
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
