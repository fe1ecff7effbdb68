package instrument

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
)

// testStubs: where the trampolines of these tests find the stubs.
var testStubs = Stubs{Entry: 0x10000000, Via: 0x10000cbc}

func TestPlanPatch(t *testing.T) {
	const addr, tramp = 0x401000, 0x10001000
	cases := []struct {
		name   string
		code   []byte
		pad    []byte // padding after the function
		at     uint64 // where the jump goes
		len    int
		refuse string // a word of the reason, "" if patched
	}{
		{"frame setup", []byte{0x55, 0x48, 0x89, 0xe5, 0x48, 0x83, 0xec, 0x10, 0xc9, 0xc3}, nil, addr, 8, ""},
		{"after endbr64", []byte{0xf3, 0x0f, 0x1e, 0xfa, 0x55, 0x48, 0x89, 0xe5, 0x53, 0x5b, 0x5d, 0xc3}, nil, addr + 4, 5, ""},
		{"rip-relative load", []byte{0x48, 0x8b, 0x05, 0x10, 0x00, 0x00, 0x00, 0xc3}, nil, addr, 7, ""},
		{"short jcc widened", []byte{0x85, 0xff, 0x74, 0x03, 0x31, 0xc0, 0xc3, 0xb8, 1, 0, 0, 0, 0xc3}, nil, addr, 6, ""},
		{"jump as last", []byte{0xe9, 0x10, 0x00, 0x00, 0x00}, nil, addr, 5, ""},
		{"call first", []byte{0xe8, 0x10, 0x00, 0x00, 0x00, 0xc3}, nil, addr, 5, ""},
		{"call before the fifth byte", []byte{0xff, 0xd0, 0x90, 0x90, 0x90, 0xc3}, nil, 0, 0, "before the fifth byte"},
		{"call through rsp", []byte{0xff, 0x14, 0x24, 0x90, 0x90, 0xc3}, nil, 0, 0, "call"},
		// ret ends the flow: the bytes after it are the function's, no
		// branch reaches them.
		{"return early", []byte{0x31, 0xc0, 0xc3, 0x90, 0x90, 0x90}, nil, addr, 5, ""},
		{"too short", []byte{0x31, 0xc0, 0xc3}, nil, 0, 0, "shorter"},
		{"short with padding", []byte{0x31, 0xc0, 0xc3}, []byte{0x66, 0x90, 0xcc}, addr, 5, ""},
		{"short with code after", []byte{0x31, 0xc0, 0xc3}, []byte{0x55, 0x48}, 0, 0, "fifth byte"},
		{"syscall", []byte{0x31, 0xc0, 0x0f, 0x05, 0x90, 0xc3}, nil, 0, 0, "syscall"},
		// An indirect jump ends the flow, as ret does.
		{"indirect jump", []byte{0xff, 0xe0, 0x90, 0x90, 0x90, 0x90}, nil, addr, 5, ""},
		{"virtual tail call", []byte{0x48, 0x8b, 0x07, 0xff, 0x60, 0x20}, nil, addr, 6, ""},
		{"notrack jump", []byte{0x48, 0x89, 0xf8, 0x3e, 0xff, 0xe0}, nil, addr, 6, ""},
		{"jump through the GOT", []byte{0x31, 0xc0, 0xff, 0x25, 0x10, 0x00, 0x00, 0x00}, nil, addr, 8, ""},
		{"short indirect jump with code after", []byte{0xff, 0xe0}, []byte{0x55, 0x48, 0x89}, 0, 0, "fifth byte"},
		// A loop back to the second instruction: half of the jump would run.
		{"branch into the jump", []byte{0x55, 0x48, 0x89, 0xe5, 0x48, 0x83, 0xec, 0x10, 0xeb, 0xf7}, nil, 0, 0, "lands inside"},
		// rdsspq rax (CET, unknown to x86asm) is measured, not refused.
		{"shadow-stack instruction", []byte{0x55, 0x48, 0x89, 0xe5, 0x53, 0xf3, 0x48, 0x0f, 0x1e, 0xc8, 0x5b, 0x5d, 0xc3}, nil, addr, 5, ""},
		{"branch to the entry is fine", []byte{0x55, 0x48, 0x89, 0xe5, 0x48, 0x83, 0xec, 0x10, 0xeb, 0xf6}, nil, addr, 8, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := PlanPatch(c.code, c.pad, addr, tramp, testStubs, 7)
			if c.refuse != "" {
				if err == nil || !errors.Is(err, ErrCannotPatch) || !strings.Contains(err.Error(), c.refuse) {
					t.Fatalf("err = %v, want a refusal naming %q", err, c.refuse)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.At != c.at || p.Len != c.len {
				t.Fatalf("at %#x len %d, want %#x %d", p.At, p.Len, c.at, c.len)
			}
			off := int(p.At - addr)
			if full := append(c.code, c.pad...); !bytes.Equal(p.Orig, full[off:off+p.Len]) {
				t.Errorf("orig % x", p.Orig)
			}
			if p.Jump[0] != 0xe9 || uint64(int64(int32(binary.LittleEndian.Uint32(p.Jump[1:]))))+p.At+5 != tramp {
				t.Errorf("jump % x does not reach the trampoline", p.Jump)
			}
			if p.Tramp[0] != 0x68 || binary.LittleEndian.Uint32(p.Tramp[1:]) != 7 || p.Tramp[5] != 0xe8 ||
				uint64(int64(int32(binary.LittleEndian.Uint32(p.Tramp[6:]))))+tramp+10 != testStubs.Entry ||
				p.Tramp[10] != 0x0f || p.Tramp[11] != 0x84 ||
				uint64(int64(int32(binary.LittleEndian.Uint32(p.Tramp[12:]))))+tramp+16 != testStubs.Via {
				t.Errorf("trampoline header % x: want push 7, call the entry stub, je via", p.Tramp[:trampHdr])
			}
		})
	}
}

// An indirect jump that ends the replaced bytes is copied as it is, its
// rip-relative operand re-aimed at the same slot of memory, and nothing
// follows it in the trampoline.
func TestPlanPatchIndirectJump(t *testing.T) {
	const addr, tramp = 0x401000, 0x10001000
	ripDisp := int32(0x401018 - (tramp + trampHdr + 2 + 6))
	cases := []struct {
		name string
		code []byte
		copy []byte // the instructions after the header
	}{
		{"register", []byte{0x48, 0x89, 0xf8, 0xff, 0xe0}, []byte{0x48, 0x89, 0xf8, 0xff, 0xe0}},
		{"memory", []byte{0x48, 0x8b, 0x07, 0xff, 0x60, 0x20}, []byte{0x48, 0x8b, 0x07, 0xff, 0x60, 0x20}},
		// jmp [rip+0x10] at +2 reads 0x401018; from the trampoline the
		// disp32 is 0x401018 - (tramp+trampHdr+2+6).
		{"rip-relative", []byte{0x31, 0xc0, 0xff, 0x25, 0x10, 0x00, 0x00, 0x00},
			append([]byte{0x31, 0xc0, 0xff, 0x25}, binary.LittleEndian.AppendUint32(nil, uint32(ripDisp))...)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := PlanPatch(c.code, nil, addr, tramp, testStubs, 1)
			if err != nil {
				t.Fatal(err)
			}
			if got := p.Tramp[trampHdr:]; !bytes.Equal(got, c.copy) {
				t.Errorf("trampoline body % x, want % x", got, c.copy)
			}
		})
	}
}

// A relocated conditional branch goes to its target when taken and on to
// the next relocated instruction when not: never back into the jump.
func TestPlanPatchBranch(t *testing.T) {
	const addr, tramp = 0x401000, 0x10001000
	// test esi,esi; js +0x24; cmp [rip+0x1b302e],esi  (redis's selectDb)
	code := []byte{0x85, 0xf6, 0x78, 0x24, 0x39, 0x35, 0x2e, 0x30, 0x1b, 0x00, 0x7e, 0x1c, 0xc3}
	p, err := PlanPatch(code, nil, addr, tramp, testStubs, 1)
	if err != nil {
		t.Fatal(err)
	}
	const at = trampHdr + 2 // after the header and test esi,esi
	b := p.Tramp[at:]
	if b[0] != 0x78 || b[1] != 2 || b[2] != 0xeb {
		t.Fatalf("branch % x", b[:4])
	}
	taken := uint64(tramp + at + 4)
	if got := taken + 5 + uint64(int64(int32(binary.LittleEndian.Uint32(b[5:])))); b[4] != 0xe9 || got != addr+4+0x24 {
		t.Errorf("taken goes to %#x, want %#x", got, addr+4+0x24)
	}
	if over := tramp + at + 4 + uint64(b[3]); over != tramp+at+9 || p.Tramp[at+9] != 0x39 {
		t.Errorf("not taken goes to %#x (% x), want the relocated cmp at %#x", over, p.Tramp[at+9:at+11], tramp+at+9)
	}
}

// A call that ends the replaced bytes pushes the original return address
// (behind the patch) as one 8-byte store, after a real call whose entry on
// the return stack buffer the callee's ret takes, and jumps to the callee.
// A call that ends the replaced bytes far enough past the jump stays in
// the function (an indirect call through r11 ending where it ended, loaded
// by the trampoline); nearer, the trampoline runs it (probeCall).
func TestPlanPatchCall(t *testing.T) {
	const tramp = 0x10001000
	subRsp := []byte{0x48, 0x83, 0xec, 0x18}
	call := []byte{0xe8, 0x00, 0x01, 0x00, 0x00} // call +0x100
	epi := []byte{0x48, 0x83, 0xc4, 0x18, 0xc3}
	endbr := []byte{0xf3, 0x0f, 0x1e, 0xfa}
	cat := func(bs ...[]byte) []byte { return bytes.Join(bs, nil) }
	cases := []struct {
		name  string
		code  []byte
		addr  uint64
		start int    // the patch's first byte
		form  []byte // the call kept in place, nil: relocated
	}{
		{"sub rsp; call", cat(subRsp, call, epi), 0x401000, 0, []byte{0x41, 0xff, 0xd3}},
		// The function at the far end of the trampoline's reach, the
		// callee past it.
		{"callee out of the trampoline's reach", cat(subRsp, call, epi), tramp + 0x7fffff80, 0, []byte{0x41, 0xff, 0xd3}},
		{"endbr64; sub rsp; call", cat(endbr, subRsp, call, epi), 0x401000, 4, []byte{0x3e, 0x41, 0xff, 0xd3}},
		{"endbr64; 3 bytes; call", cat(endbr, []byte{0x48, 0x89, 0xfb}, call, epi), 0x401000, 4, nil},
		{"push rbx; call", cat([]byte{0x53}, call, []byte{0x5b, 0xc3}), 0x401000, 0, nil},
		{"3 bytes; call", cat([]byte{0x48, 0x89, 0xfb}, call, epi), 0x401000, 0, []byte{0x41, 0xff, 0xd3}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := PlanPatch(c.code, nil, c.addr, tramp, testStubs, 1)
			if err != nil {
				t.Fatal(err)
			}
			callAt := bytes.Index(c.code, call)
			ret := c.addr + uint64(callAt+5)
			callee := ret + 0x100
			if p.Len != callAt+5-c.start || p.InPlace != len(c.form) {
				t.Fatalf("len %d, in place %d: want %d, %d", p.Len, p.InPlace, callAt+5-c.start, len(c.form))
			}
			body := p.Tramp[trampHdr+callAt-c.start:]
			bodyAt := tramp + uint64(trampHdr+callAt-c.start)
			if c.form == nil {
				checkProbeCall(t, body, ret, callee, bodyAt)
				return
			}
			if !bytes.Equal(p.Jump[p.Len-len(c.form):], c.form) || p.Jump[0] != 0xe9 {
				t.Fatalf("jump % x: want it to end with % x", p.Jump, c.form)
			}
			for _, b := range p.Jump[PatchLen : p.Len-len(c.form)] {
				if b != 0xcc {
					t.Fatalf("jump % x: want int3 between the jump and the call", p.Jump)
				}
			}
			// lea r11, [rip+rel32] or mov r11, imm64; then jmp to the call.
			var loaded uint64
			n := 0
			switch {
			case bytes.HasPrefix(body, []byte{0x4c, 0x8d, 0x1d}):
				n = 7
				loaded = bodyAt + 7 + uint64(int64(int32(binary.LittleEndian.Uint32(body[3:]))))
			case bytes.HasPrefix(body, []byte{0x49, 0xbb}):
				n = 10
				loaded = binary.LittleEndian.Uint64(body[2:])
			default:
				t.Fatalf("body % x: want r11 loaded", body)
			}
			if far := c.addr > tramp+0x7f000000; far != (n == 10) {
				t.Errorf("body % x: want mov r11, imm64 exactly when the callee is out of reach", body)
			}
			if loaded != callee {
				t.Errorf("r11 = %#x, want the callee %#x", loaded, callee)
			}
			if body[n] != 0xe9 || bodyAt+uint64(n)+5+uint64(int64(int32(binary.LittleEndian.Uint32(body[n+1:])))) != ret-uint64(len(c.form)) {
				t.Errorf("body % x: want a jump to the call at %#x", body, ret-uint64(len(c.form)))
			}
			if len(body) != n+5 {
				t.Errorf("body % x: %d bytes after the jump", body, len(body)-n-5)
			}
			// Aimed back at the original call (a detach leaving the
			// trampoline mapped): the same jump, to the call's first byte.
			kept, orig := ret-uint64(len(c.form)), ret-5
			jump, ok := ReaimLastJump(p.Tramp, tramp, kept, orig)
			if end := tramp + uint64(len(p.Tramp)); !ok || jump[0] != 0xe9 || end+uint64(int64(int32(binary.LittleEndian.Uint32(jump[1:])))) != orig {
				t.Errorf("ReaimLastJump: % x, %v: want a jump to %#x", jump, ok, orig)
			}
			if _, ok := ReaimLastJump(p.Tramp, tramp, kept+1, orig); ok {
				t.Errorf("ReaimLastJump: a jump not to the call re-aimed")
			}
			moved, err := RelocateMoved(p.Orig, p.At, bodyAt-uint64(callAt-c.start), p.InPlace)
			if err != nil || !bytes.Equal(moved, p.Tramp[trampHdr:]) {
				t.Errorf("RelocateMoved: % x, %v: want the trampoline's body % x", moved, err, p.Tramp[trampHdr:])
			}
		})
	}
}

// checkProbeCall checks a relocated call at bodyAt: it pushes the return
// address ret and jumps to callee.
func checkProbeCall(t *testing.T, c []byte, ret, callee, bodyAt uint64) {
	t.Helper()
	if !bytes.Equal(c[:13], []byte{0xe8, 1, 0, 0, 0, 0xcc, 0x48, 0x8d, 0x64, 0x24, 0x08, 0xff, 0x35}) {
		t.Fatalf("% x: want call over an int3, lea rsp,[rsp+8], push qword [rip+...]", c[:13])
	}
	lit := 17 + int(int32(binary.LittleEndian.Uint32(c[13:])))
	if lit+8 != len(c) || binary.LittleEndian.Uint64(c[lit:]) != ret {
		t.Errorf("pushes the word at +%d of %d bytes (% x), want the return address %#x last", lit, len(c), c, ret)
	}
	jmpAt := bodyAt + 17
	if c[17] != 0xe9 || jmpAt+5+uint64(int64(int32(binary.LittleEndian.Uint32(c[18:])))) != callee {
		t.Errorf("jumps % x, want the callee %#x", c[17:22], callee)
	}
	if lit != 22 {
		t.Errorf("%d bytes between the jump and the return address: nothing goes after the call's jump", lit-22)
	}
}

// The relocated rip-relative load reads the same address from the
// trampoline, and the trampoline ends by jumping behind the patch.
func TestPlanPatchRelocates(t *testing.T) {
	const addr, tramp = 0x401000, 0x10001000
	code := []byte{0x48, 0x8b, 0x05, 0x10, 0x00, 0x00, 0x00, 0xc3}
	p, err := PlanPatch(code, nil, addr, tramp, testStubs, 1)
	if err != nil {
		t.Fatal(err)
	}
	ins := p.Tramp[trampHdr : trampHdr+7]
	target := tramp + trampHdr + 7 + uint64(int64(int32(binary.LittleEndian.Uint32(ins[3:]))))
	if target != addr+7+0x10 {
		t.Errorf("relocated load reads %#x, want %#x", target, addr+7+0x10)
	}
	back := p.Tramp[trampHdr+7:]
	if back[0] != 0xe9 || tramp+trampHdr+12+uint64(int64(int32(binary.LittleEndian.Uint32(back[1:])))) != addr+7 {
		t.Errorf("jump back % x", back)
	}
}
