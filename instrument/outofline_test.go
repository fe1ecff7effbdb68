package instrument

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"golang.org/x/arch/x86/x86asm"
	"golang.org/x/sys/unix"
)

const (
	testAddr     = 0x555555561234
	testSlotNear = testAddr + 0x10000000  // within ±2 GiB: rel32 jumps
	testSlotFar  = testAddr + 0x200000000 // 8 GiB away: absolute jumps
)

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// ripTarget is the absolute address a rip-relative operand of the
// instruction code at addr refers to (disp32 at off).
func ripTarget(code []byte, addr uint64, off int) uint64 {
	return addr + uint64(len(code)) + uint64(int64(int32(binary.LittleEndian.Uint32(code[off:]))))
}

// decodeJump decodes the jump appendJump wrote at ool[off:] (slot+off at
// runtime) and returns its target and length.
func decodeJump(t *testing.T, ool []byte, slot uint64, off int) (uint64, int) {
	t.Helper()
	b := ool[off:]
	switch {
	case len(b) >= jmpRel32Len && b[0] == 0xe9:
		return slot + uint64(off+jmpRel32Len) + uint64(int64(int32(binary.LittleEndian.Uint32(b[1:])))), jmpRel32Len
	case len(b) >= jmpAbsLen && bytes.HasPrefix(b, []byte{0xff, 0x25, 0, 0, 0, 0}):
		inst, err := x86asm.Decode(b, 64)
		if err != nil || inst.Op != x86asm.JMP || inst.Len != 6 {
			t.Fatalf("jmp [rip+0] decodes as %v, %v", inst, err)
		}
		return binary.LittleEndian.Uint64(b[6:]), jmpAbsLen
	}
	t.Fatalf("no jump at OOL+%d: % x", off, b)
	return 0, 0
}

// checkRelocated checks an OOL copy: the instruction decodes the same at the
// slot (same op, same length, same absolute rip-relative target), then a
// jump back to addr+len follows and nothing else.
func checkRelocated(t *testing.T, p Plan, code []byte, ripOff int) {
	t.Helper()
	n := p.Len
	if ripOff > 0 && !bytes.Equal(p.OOL[:ripOff], code[:ripOff]) {
		t.Errorf("bytes before the displacement changed: % x vs % x", p.OOL[:n], code[:n])
	}
	if ripOff >= 0 {
		if got, want := ripTarget(p.OOL[:n], p.Slot, ripOff), ripTarget(code[:n], p.Addr, ripOff); got != want {
			t.Errorf("rip-relative target from slot %#x, want %#x", got, want)
		}
		if !bytes.Equal(p.OOL[ripOff+4:n], code[ripOff+4:n]) {
			t.Errorf("immediate after the displacement changed: % x vs % x", p.OOL[ripOff+4:n], code[ripOff+4:n])
		}
	} else if !bytes.Equal(p.OOL[:n], code[:n]) {
		t.Errorf("copy % x differs from original % x", p.OOL[:n], code[:n])
	}
	if orig, err := x86asm.Decode(code, 64); err == nil && orig.Op != 0 {
		moved, err := x86asm.Decode(p.OOL[:n], 64)
		if err != nil || moved.Op != orig.Op || moved.Len != orig.Len {
			t.Errorf("copy decodes as %v (%v), original %v", moved, err, orig)
		}
	}
	to, jl := decodeJump(t, p.OOL, p.Slot, n)
	if to != p.Next() {
		t.Errorf("jump back to %#x, want %#x", to, p.Next())
	}
	if len(p.OOL) != n+jl {
		t.Errorf("OOL has %d trailing bytes", len(p.OOL)-n-jl)
	}
}

// checkCond checks a conditional branch's OOL form: the same condition
// (decoded) jumps over the fall-through jump to a jump to the target.
func checkCond(t *testing.T, p Plan, code []byte, prefix []byte) {
	t.Helper()
	orig, err := x86asm.Decode(code, 64)
	if err != nil {
		t.Fatal(err)
	}
	target := p.Next() + uint64(pcRel(code, orig))
	br, err := x86asm.Decode(p.OOL, 64)
	if err != nil || br.Op != orig.Op || br.PCRel != 1 {
		t.Fatalf("OOL branch %v (%v), want %v rel8", br, err, orig.Op)
	}
	if !bytes.HasPrefix(p.OOL, prefix) {
		t.Errorf("OOL % x does not start with % x", p.OOL, prefix)
	}
	fall, fl := decodeJump(t, p.OOL, p.Slot, br.Len)
	if fall != p.Next() {
		t.Errorf("fall-through jump to %#x, want %#x", fall, p.Next())
	}
	taken := br.Len + int(int8(p.OOL[br.Len-1]))
	if taken != br.Len+fl {
		t.Errorf("branch lands at OOL+%d, want OOL+%d", taken, br.Len+fl)
	}
	to, tl := decodeJump(t, p.OOL, p.Slot, taken)
	if to != target {
		t.Errorf("taken jump to %#x, want %#x", to, target)
	}
	if len(p.OOL) != taken+tl {
		t.Errorf("OOL has trailing bytes")
	}
}

// planCase is one instruction PlanAt is tested on, byte-level here and by
// execution in outofline_exec_test.go.
type planCase struct {
	name   string
	code   string
	len    int
	emu    Emu
	ripOff int    // relocated: offset of the rip-relative disp32, -1 none
	target uint64 // EmuCall/EmuJmp: target relative to testAddr+len
	cond   string // conditional branch: expected OOL prefix (hex)
}

var planCases = []planCase{
	{"push rbp", "55", 1, EmuNone, -1, 0, ""},
	{"sub rsp, 0x28", "4883ec28", 4, EmuNone, -1, 0, ""},
	{"mov rax, imm64", "48b88877665544332211", 10, EmuNone, -1, 0, ""},
	{"mov [r12], ax (66+REX)", "6641890424", 5, EmuNone, -1, 0, ""},
	{"mov rax, [rip+0x1234]", "488b0534120000", 7, EmuNone, 3, 0, ""},
	{"lea rdi, [rip-0x100]", "488d3d00ffffff", 7, EmuNone, 3, 0, ""},
	{"cmp dword [rip+x], imm8", "833d1000000005", 7, EmuNone, 2, 0, ""},
	{"cmp dword [rip+x], imm32", "813d1000000078563412", 10, EmuNone, 2, 0, ""},
	{"test byte [rip+x], imm8", "f605f0ffffff05", 7, EmuNone, 2, 0, ""},
	{"mov dword [rip+x], imm32", "c70510000000efbeadde", 10, EmuNone, 2, 0, ""},
	{"mov word [rip+x], imm16 (66)", "66c70510000000 3412", 9, EmuNone, 3, 0, ""},
	{"mov [rip+x], r8w (66+REX)", "664489051000 0000", 8, EmuNone, 4, 0, ""},
	{"push [rip+x]", "ff3510000000", 6, EmuNone, 2, 0, ""},
	{"jmp [rip+x]", "ff2510000000", 6, EmuNone, 2, 0, ""},
	{"jmp rax", "ffe0", 2, EmuNone, -1, 0, ""},
	{"jmp [rbx+8]", "ff6308", 3, EmuNone, -1, 0, ""},
	{"add [rip+x], rax", "48010510000000", 7, EmuNone, 3, 0, ""},
	{"add rax, rbx (flags)", "4801d8", 3, EmuNone, -1, 0, ""},
	{"ret", "c3", 1, EmuNone, -1, 0, ""},
	{"ret 8", "c20800", 3, EmuNone, -1, 0, ""},
	{"bnd ret", "f2c3", 2, EmuNone, -1, 0, ""},
	{"leave", "c9", 1, EmuNone, -1, 0, ""},
	{"pop r15", "415f", 2, EmuNone, -1, 0, ""},
	{"syscall", "0f05", 2, EmuNone, -1, 0, ""},
	{"vmovdqu ymm0, [rip+x]", "c5fe6f0510000000", 8, EmuNone, 4, 0, ""},
	{"vpalignr xmm0, xmm0, [rip+x], imm8", "c4e3790f0510000000ff", 10, EmuNone, 5, 0, ""},
	{"vmovdqu64 zmm0, [rip+x] (EVEX)", "62f1fe486f0510000000", 10, EmuNone, 6, 0, ""},
	{"vpaddd zmm0, zmm1, [rax+0x40] (EVEX disp8)", "62f17548fe4001", 7, EmuNone, -1, 0, ""},
	{"vzeroupper", "c5f877", 3, EmuNone, -1, 0, ""},
	{"endbr64", "f30f1efa", 4, EmuNop, -1, 0, ""},
	{"nop", "90", 1, EmuNop, -1, 0, ""},
	{"nopw", "660f1f440000", 6, EmuNop, -1, 0, ""},
	{"call rel32", "e800010000", 5, EmuCall, -1, 0x100, ""},
	{"call rel32 back", "e800ffffff", 5, EmuCall, -1, 0xffffffffffffff00, ""},
	{"bnd call", "f2e810000000", 6, EmuCall, -1, 0x10, ""},
	{"jmp rel8", "eb05", 2, EmuJmp, -1, 5, ""},
	{"jmp rel32", "e9f0ffffff", 5, EmuJmp, -1, 0xfffffffffffffff0, ""},
	{"call rax", "ffd0", 2, EmuCallIndirect, -1, 0, ""},
	{"call [rip+x]", "ff1510000000", 6, EmuCallIndirect, -1, 0, ""},
	{"call [rsp+8]", "ff542408", 4, EmuCallIndirect, -1, 0, ""},
	{"call [rbx+r9*8+0x10]", "42ff54cb10", 5, EmuCallIndirect, -1, 0, ""},
	{"je rel8", "7410", 2, EmuNone, -1, 0, "74"},
	{"jne rel32", "0f8500010000", 6, EmuNone, -1, 0, "75"},
	{"jl back (hinted)", "3e7cf0", 3, EmuNone, -1, 0, "7c"},
	{"loop", "e2f0", 2, EmuNone, -1, 0, "e2"},
	{"loopne", "e010", 2, EmuNone, -1, 0, "e0"},
	{"jrcxz", "e310", 2, EmuNone, -1, 0, "e3"},
	{"jecxz", "67e310", 3, EmuNone, -1, 0, "67e3"},
}

func TestPlanAt(t *testing.T) {
	for _, tt := range planCases {
		for _, slot := range []uint64{testSlotNear, testSlotFar} {
			if tt.ripOff >= 0 && slot == testSlotFar {
				continue
			}
			code := unhex(t, tt.code)
			full := append(append([]byte{}, code...), 0xcc, 0xcc, 0xcc) // what follows is not part of it
			p, err := PlanAt(full, testAddr, slot)
			if err != nil {
				t.Errorf("%s: PlanAt: %v", tt.name, err)
				continue
			}
			t.Run(tt.name, func(t *testing.T) {
				if p.Len != tt.len || p.Emulate != tt.emu || p.Addr != testAddr || p.Slot != slot {
					t.Fatalf("plan %+v, want len %d emu %v", p, tt.len, tt.emu)
				}
				if len(p.OOL) > SlotSize {
					t.Errorf("OOL of %d bytes", len(p.OOL))
				}
				switch {
				case tt.emu != EmuNone:
					if p.OOL != nil {
						t.Errorf("emulated plan has OOL % x", p.OOL)
					}
					if (tt.emu == EmuCall || tt.emu == EmuJmp) && p.Target != testAddr+uint64(tt.len)+tt.target {
						t.Errorf("target %#x, want %#x", p.Target, testAddr+uint64(tt.len)+tt.target)
					}
				case tt.cond != "":
					checkCond(t, p, code, unhex(t, tt.cond))
				default:
					checkRelocated(t, p, code, tt.ripOff)
				}
			})
		}
	}
}

func TestPlanAtErrors(t *testing.T) {
	tests := []struct {
		name string
		code string
		slot uint64
	}{
		{"empty", "", testSlotNear},
		{"int3", "cc", testSlotNear},
		{"int 0x80", "cd80", testSlotNear},
		{"ud2", "0f0b", testSlotNear},
		{"hlt", "f4", testSlotNear},
		{"xbegin", "c7f810000000", testSlotNear},
		{"far jmp", "ff28", testSlotNear},
		{"rip-relative out of reach", "488b0510000000", testSlotFar},
		{"VEX rip-relative out of reach", "c5fe6f0510000000", testSlotFar},
		{"truncated", "488b05", testSlotNear},
		{"truncated VEX", "c5fe6f05", testSlotNear},
		{"data16 call", "66e80000", testSlotNear},
		{"undefined", "0f04", testSlotNear},
		{"66 before VEX", "66c5fe6f00", testSlotNear},
		{"eip-relative", "67488b0510000000", testSlotNear},
	}
	for _, tt := range tests {
		code := unhex(t, tt.code)
		if _, err := PlanAt(code, testAddr, tt.slot); err == nil || !errors.Is(err, ErrCannotPlan) {
			t.Errorf("%s: PlanAt(% x) = %v, want ErrCannotPlan", tt.name, code, err)
		}
	}
}

func TestIndirectTarget(t *testing.T) {
	regs := unix.PtraceRegs{Rax: 0x1000, Rbx: 0x2000, Rsp: 0x7ff0, R12: 0x3000, R9: 4, Fs_base: 0x70000}
	mem := map[uint64]uint64{
		0x1008:              0xaaaa, // [rax+8]
		0x7ff8:              0xbbbb, // [rsp+8]
		0x3008:              0xcccc, // [r12+8]
		0x2000 + 4*8 + 0x10: 0xdddd, // [rbx+r9*8+0x10]
		testAddr + 6 + 0x10: 0xeeee, // [rip+0x10]
		0x70028:             0xffff, // fs:[0x28]
		0x601000 + 4*8:      0x1212, // [r9*8+0x601000]
	}
	read := func(a uint64) (uint64, error) {
		v, ok := mem[a]
		if !ok {
			return 0, errors.New("unmapped")
		}
		return v, nil
	}
	tests := []struct {
		name string
		code string
		want uint64
	}{
		{"call rax", "ffd0", 0x1000},
		{"call r12", "41ffd4", 0x3000},
		{"call [rax+8]", "ff5008", 0xaaaa},
		{"call [rsp+8]", "ff542408", 0xbbbb},
		{"call [r12+8]", "41ff542408", 0xcccc},
		{"call [rbx+r9*8+0x10]", "42ff54cb10", 0xdddd},
		{"call [rip+0x10]", "ff1510000000", 0xeeee},
		{"call fs:[0x28]", "64ff142528000000", 0xffff},
		{"call [r9*8+disp32]", "42ff14cd00106000", 0x1212},
		{"call [eax+8] (addr32)", "67ff5008", 0xaaaa},
	}
	for _, tt := range tests {
		p, err := PlanAt(unhex(t, tt.code), testAddr, testSlotNear)
		if err != nil || p.Emulate != EmuCallIndirect {
			t.Errorf("%s: plan %+v, %v", tt.name, p, err)
			continue
		}
		got, err := p.IndirectTarget(regs, read)
		if err != nil || got != tt.want {
			t.Errorf("%s: IndirectTarget = %#x, %v; want %#x", tt.name, got, err, tt.want)
		}
	}
	p, _ := PlanAt(unhex(t, "ff5010"), testAddr, testSlotNear)
	if _, err := p.IndirectTarget(regs, read); err == nil {
		t.Errorf("unreadable memory: no error")
	}
	p, _ = PlanAt(unhex(t, "55"), testAddr, testSlotNear)
	if _, err := p.IndirectTarget(regs, read); err == nil {
		t.Errorf("IndirectTarget of a push: no error")
	}
}

func TestEmuString(t *testing.T) {
	for e, want := range map[Emu]string{EmuNone: "out-of-line", EmuNop: "nop", EmuCall: "call", EmuCallIndirect: "call-indirect", EmuJmp: "jmp", 7: "Emu(7)"} {
		if e.String() != want {
			t.Errorf("%d.String() = %q, want %q", e, e.String(), want)
		}
	}
}
