package unwind

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"reflect"
	"testing"
)

// sparse is target memory as a few 64-bit words; reads elsewhere fail.
type sparse map[uint64]uint64

func (s sparse) read(addr uint64, buf []byte) error {
	w, ok := s[addr]
	if !ok || len(buf) > 8 {
		return fmt.Errorf("no word at %#x", addr)
	}
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], w)
	copy(buf, b[:])
	return nil
}

func TestUnwindFramePointers(t *testing.T) {
	// Three frames linked by rbp; the outermost has a return address of 0.
	chain := func() sparse {
		return sparse{
			0x7010: 0x7030, 0x7018: 0x401111,
			0x7030: 0x7050, 0x7038: 0x402222,
			0x7050: 0, 0x7058: 0,
		}
	}
	full := []Frame{{0x400000, 0x7020, 0x401111, 0x7018}, {0x401111, 0x7040, 0x402222, 0x7038}, {0x402222, 0x7060, 0, 0x7058}}
	cases := []struct {
		name   string
		regs   Regs
		edit   func(s sparse)
		max    int
		frames []Frame
	}{
		{"to the outermost frame", Regs{RIP: 0x400000, RSP: 0x7000, RBP: 0x7010}, nil, 10, full},
		{"max frames", Regs{RIP: 0x400000, RSP: 0x7000, RBP: 0x7010}, nil, 2, full[:2]},
		{"pc 0", Regs{RIP: 0, RSP: 0x7000, RBP: 0x7010}, nil, 10, nil},
		{"rbp below rsp", Regs{RIP: 0x400000, RSP: 0x7020, RBP: 0x7010}, nil, 10, nil},
		{"CFA does not grow", Regs{RIP: 0x400000, RSP: 0x7000, RBP: 0x7010}, func(s sparse) {
			s[0x7050], s[0x7058] = 0x7010, 0x403333 // frame 3 would be frame 0 again
		}, 10, []Frame{full[0], full[1], {0x402222, 0x7060, 0x403333, 0x7058}}},
		{"read error", Regs{RIP: 0x400000, RSP: 0x7000, RBP: 0x7010}, func(s sparse) {
			s[0x7050], s[0x7058] = 0x9000, 0x403333 // frame 3's rbp points nowhere
		}, 10, []Frame{full[0], full[1], {0x402222, 0x7060, 0x403333, 0x7058}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mem := chain()
			if c.edit != nil {
				c.edit(mem)
			}
			got := Unwind(nil, c.regs, mem.read, c.max)
			if !reflect.DeepEqual(got, c.frames) {
				t.Errorf("frames\n%s\nwant\n%s", frameList(got), frameList(c.frames))
			}
		})
	}
}

func TestUnwindCFI(t *testing.T) {
	const bias = 0x400000
	normal := &cie{codeAlign: 1, dataAlign: -8, raReg: regRIP, initial: x86Initial()}
	signal := &cie{codeAlign: 1, dataAlign: -8, raReg: regRIP, signal: true}
	// The link-time layout of the synthetic module, after glibc and GCC.
	fdes := []fde{
		{lo: 0x100, hi: 0x120, cie: normal}, // leaf: CFA = rsp+8 throughout
		{lo: 0x200, hi: 0x240, cie: normal, ins: []byte{ // sub rsp,24 ... ends with a call
			cfaAdvanceLoc | 4, cfaDefCFAOffset, 32}},
		{lo: 0x240, hi: 0x260, cie: normal},                                    // the next function: must not be used for RA 0x240
		{lo: 0x300, hi: 0x320, cie: normal},                                    // interrupted by a signal at its first instruction
		{lo: 0x440, hi: 0x460, cie: normal, ins: []byte{cfaUndefined, regRIP}}, // like _start
		{lo: 0x4ff, hi: 0x508, cie: signal, ins: cat( // __restore_rt and the nop before it
			[]byte{cfaDefCFAExpression}, block(breg(regRSP, 160), []byte{opDeref}),
			[]byte{cfaExpression, regRSP}, block(breg(regRSP, 160)),
			[]byte{cfaExpression, regRIP}, block(breg(regRSP, 168)),
			[]byte{cfaExpression, regRBP}, block(breg(regRSP, 120)),
		)},
		{lo: 0x600, hi: 0x640, cie: normal, ins: []byte{ // push rbp
			cfaAdvanceLoc | 1, cfaDefCFAOffset, 16, cfaOffset | regRBP, 2}},
	}
	mod := &Module{Path: "synthetic", bias: bias, lo: bias, hi: bias + 0x1000, fdes: fdes}
	cases := []struct {
		name   string
		regs   Regs
		mem    sparse
		frames []Frame
	}{
		{"return address past the caller's FDE", Regs{RIP: bias + 0x104, RSP: 0x7000},
			sparse{0x7000: bias + 0x240, 0x7020: bias + 0x450},
			[]Frame{{bias + 0x104, 0x7008, bias + 0x240, 0x7000}, {bias + 0x240, 0x7028, bias + 0x450, 0x7020}, {bias + 0x450, 0x7030, 0, 0}}},
		{"frame 0 at its FDE's first byte", Regs{RIP: bias + 0x240, RSP: 0x7000},
			sparse{0x7000: bias + 0x450},
			[]Frame{{bias + 0x240, 0x7008, bias + 0x450, 0x7000}, {bias + 0x450, 0x7010, 0, 0}}},
		{"through a signal frame", Regs{RIP: bias + 0x104, RSP: 0x7000},
			sparse{
				0x7000:       bias + 0x500, // the handler returns to __restore_rt
				0x7008 + 120: 0x1234, 0x7008 + 160: 0x7100, 0x7008 + 168: bias + 0x300,
				0x7100: bias + 0x450,
			},
			[]Frame{
				{bias + 0x104, 0x7008, bias + 0x500, 0x7000},
				{bias + 0x500, 0x7100, bias + 0x300, 0x7008 + 168}, // the saved pc
				{bias + 0x300, 0x7108, bias + 0x450, 0x7100},
				{bias + 0x450, 0x7110, 0, 0},
			}},
		{"saved rbp feeds the frame-pointer fallback", Regs{RIP: bias + 0x610, RSP: 0x7000},
			sparse{0x7000: 0x7040, 0x7008: 0x900000, 0x7040: 0, 0x7048: bias + 0x450},
			[]Frame{{bias + 0x610, 0x7010, 0x900000, 0x7008}, {0x900000, 0x7050, bias + 0x450, 0x7048}, {bias + 0x450, 0x7058, 0, 0}}},
		{"unreadable return address", Regs{RIP: bias + 0x104, RSP: 0x7000}, sparse{}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Unwind([]*Module{mod}, c.regs, c.mem.read, 10)
			if !reflect.DeepEqual(got, c.frames) {
				t.Errorf("frames\n%s\nwant\n%s", frameList(got), frameList(c.frames))
			}
		})
	}
}

// TestUnwindPLT unwinds from the PLT of a real binary, whose FDE computes
// the CFA with the PLT-stub expression.
func TestUnwindPLT(t *testing.T) {
	path := buildC(t, "chain.c", "-fomit-frame-pointer", "-no-pie")
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	plt := f.Section(".plt")
	f.Close()
	if plt == nil {
		t.Fatal("no .plt")
	}
	m, err := Load(path, 0, plt.Addr, plt.Addr+plt.Size)
	if err != nil {
		t.Fatal(err)
	}
	const rsp, ra = 0x7000, 0x123456
	stub := plt.Addr + 16 // the first stub after PLT0
	cases := []struct {
		name  string
		pc    uint64
		depth uint64 // bytes pushed since the call
	}{
		{"stub jmp", stub, 0},
		{"stub push", stub + 6, 0},
		{"stub after push", stub + 11, 8},
		{"PLT0 push", plt.Addr, 8},
		{"PLT0 after push", plt.Addr + 6, 16},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mem := sparse{rsp + c.depth: ra}
			got := Unwind([]*Module{m}, Regs{RIP: c.pc, RSP: rsp}, mem.read, 1)
			want := []Frame{{c.pc, rsp + c.depth + 8, ra, rsp + c.depth}}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("frames\n%s\nwant\n%s", frameList(got), frameList(want))
			}
		})
	}
}

// breg is DW_OP_breg<reg> off.
func breg(reg byte, off int64) []byte { return cat([]byte{opBreg0 + reg}, sleb(off)) }

// block is a DWARF block: the ULEB128 length of the parts, then the parts.
func block(parts ...[]byte) []byte {
	b := cat(parts...)
	return cat(uleb(uint64(len(b))), b)
}

func frameList(fs []Frame) string {
	s := ""
	for i, f := range fs {
		s += fmt.Sprintf("  #%d pc %#x cfa %#x ra %#x at %#x\n", i, f.PC, f.CFA, f.RA, f.RAAt)
	}
	if s == "" {
		return "  (none)"
	}
	return s
}
