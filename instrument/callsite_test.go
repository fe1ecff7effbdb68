package instrument

import (
	"encoding/binary"
	"os"
	"testing"

	"golang.org/x/arch/x86/x86asm"
)

func TestClassifyCallTable(t *testing.T) {
	const ret = 0x401000
	const stub = 0x400800 // a PLT stub
	const slot = 0x403ff0 // a GOT slot
	isPLT := func(a uint64) bool { return a == stub || a == slot }
	rel := func(to uint64) []byte {
		return binary.LittleEndian.AppendUint32([]byte{0xe8}, uint32(int32(int64(to)-ret)))
	}
	ripSlot := binary.LittleEndian.AppendUint32([]byte{0xff, 0x15}, uint32(int32(int64(slot)-ret)))
	pad := func(b ...[]byte) []byte { // code before the call: nops
		out := []byte{0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90}
		for _, x := range b {
			out = append(out, x...)
		}
		return out
	}
	tests := []struct {
		name string
		code []byte
		want CallKind
		ok   bool
	}{
		{"call rel32", pad(rel(0x401234)), KindDirect, true},
		{"call rel32 backwards", pad(rel(0x400100)), KindDirect, true},
		{"call plt stub", pad(rel(stub)), KindPLT, true},
		{"bnd call plt stub", pad([]byte{0xf2}, rel(stub)), KindPLT, true},
		{"call rax", pad([]byte{0xff, 0xd0}), KindIndirect, true},
		{"notrack call rax", pad([]byte{0x3e, 0xff, 0xd0}), KindIndirect, true},
		{"call r12", pad([]byte{0x41, 0xff, 0xd4}), KindIndirect, true},
		{"call [rax]", pad([]byte{0xff, 0x10}), KindIndirect, true},
		{"call [rax+8]", pad([]byte{0xff, 0x50, 0x08}), KindIndirect, true},
		{"call [r12+8]", pad([]byte{0x41, 0xff, 0x54, 0x24, 0x08}), KindIndirect, true},
		{"call [rbx+rax*8+0x10]", pad([]byte{0xff, 0x54, 0xc3, 0x10}), KindIndirect, true},
		{"call [rax+disp32]", pad([]byte{0xff, 0x90, 0x00, 0x01, 0x00, 0x00}), KindIndirect, true},
		{"call [rax*8+disp32]", pad([]byte{0xff, 0x14, 0xc5, 0x00, 0x10, 0x60, 0x00}), KindIndirect, true},
		{"call [r9*8+disp32]", pad([]byte{0x42, 0xff, 0x14, 0xcd, 0x00, 0x10, 0x60, 0x00}), KindIndirect, true},
		{"call [rip+got] (-fno-plt)", pad(ripSlot), KindPLT, true},
		{"call [rip+var] (function pointer)", pad([]byte{0xff, 0x15, 0x00, 0x01, 0x00, 0x00}), KindIndirect, true},
		{"no call: mov", pad([]byte{0x48, 0x89, 0xc7}), KindUnknown, false},
		{"no call: jmp rax", pad([]byte{0xff, 0xe0}), KindUnknown, false},
		{"no call: far call", pad([]byte{0xff, 0x18}), KindUnknown, false},
		{"too short", []byte{0xd0}, KindUnknown, false},
		{"empty", nil, KindUnknown, false},
		{"only 7 bytes", ripSlot[len(ripSlot)-6:], KindPLT, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ClassifyCall(tt.code, ret, isPLT)
			if got != tt.want || ok != tt.ok {
				t.Errorf("ClassifyCall(% x) = %v, %v; want %v, %v", tt.code, got, ok, tt.want, tt.ok)
			}
		})
	}
	if k, ok := ClassifyCall(pad(rel(stub)), ret, nil); k != KindDirect || !ok {
		t.Errorf("nil isPLT: %v, %v", k, ok)
	}
}

// TestClassifyCallAmbiguous: "mov eax, [rbp-0x18]; call [r8+8]" has an
// 0xe8 five bytes before the end, so it also decodes as call rel32 (and
// with the 0x45 before it as a REX-prefixed one), and its last three bytes
// are call [rax+8].
func TestClassifyCallAmbiguous(t *testing.T) {
	code := []byte{0x8b, 0x45, 0xe8, 0x41, 0xff, 0x50, 0x08}
	const ret = 0x500000
	cands := DecodeCalls(code, ret, nil)
	if len(cands) != 4 || cands[0].Kind != KindIndirect || cands[1].Kind != KindIndirect || !cands[2].Rel || !cands[3].Rel {
		t.Fatalf("DecodeCalls = %+v", cands)
	}
	if k, _ := ClassifyCall(code, ret, nil); k != KindDirect {
		t.Errorf("ClassifyCall = %v, want direct (documented preference)", k)
	}
	if k, _ := ClassifyCallTo(code, ret, 0x12345678, nil); k != KindIndirect {
		t.Errorf("ClassifyCallTo(unrelated callee) = %v, want indirect", k)
	}
	if k, _ := ClassifyCallTo(code, ret, cands[2].Target, nil); k != KindDirect {
		t.Errorf("ClassifyCallTo(rel32 target) = %v, want direct", k)
	}
}

func TestCallKindString(t *testing.T) {
	for k, want := range map[CallKind]string{KindUnknown: "unknown", KindDirect: "direct", KindIndirect: "indirect", KindPLT: "plt", 9: "unknown"} {
		if k.String() != want {
			t.Errorf("%d.String() = %q", k, k.String())
		}
	}
}

// TestClassifyCallSweep disassembles every function of real binaries, and
// for every call instruction found checks the classification of its return
// address from the CallLookback bytes before it against the instruction
// itself.
func TestClassifyCallSweep(t *testing.T) {
	paths := map[string]string{}
	for _, v := range buildVariants {
		paths[v.name] = buildC(t, "calls.c", v.flags...)
	}
	if _, err := os.Stat(libcPath); err == nil {
		paths["libc"] = libcPath
	}
	for name, path := range paths {
		t.Run(name, func(t *testing.T) {
			m := openModule(t, path)
			isPLT := func(a uint64) bool { return m.IsPLT(a) || m.IsGOT(a) }
			var calls, wrong, wrongTo, kinds = 0, 0, 0, map[CallKind]int{}
			for _, s := range m.Symbols {
				code, err := m.Code(s)
				if err != nil || s.Size == 0 {
					continue
				}
				for off := 0; off < len(code); {
					inst, err := decodeInst(code[off:])
					if err != nil {
						break
					}
					off += inst.Len
					if inst.Op != x86asm.CALL {
						continue
					}
					ret := s.Value + uint64(off)
					want, callee := KindIndirect, uint64(0)
					switch a := inst.Args[0].(type) {
					case x86asm.Rel:
						callee = ret + uint64(int64(a))
						want = KindDirect
						if m.IsPLT(callee) {
							want = KindPLT
						}
					case x86asm.Mem:
						if a.Base == x86asm.RIP && m.IsGOT(ret+uint64(int64(int32(a.Disp)))) {
							want = KindPLT
						}
					}
					before, err := m.ReadAt(ret-CallLookback, CallLookback)
					if err != nil {
						t.Fatal(err)
					}
					calls++
					kinds[want]++
					if got, ok := ClassifyCall(before, ret, isPLT); got != want || !ok {
						wrong++
						if wrong < 5 {
							t.Logf("%s+%#x: %v: ClassifyCall = %v, want %v (% x)", s.Name, off, inst, got, want, before)
						}
					}
					if got, ok := ClassifyCallTo(before, ret, callee, isPLT); (got != want || !ok) && callee != 0 {
						wrongTo++
					}
				}
			}
			t.Logf("%d calls %v, %d misclassified, %d with the callee known", calls, kinds, wrong, wrongTo)
			if calls == 0 {
				t.Fatal("no calls found")
			}
			if wrong*1000 > calls || wrongTo > 0 {
				t.Errorf("%d of %d calls misclassified (%d with the callee known)", wrong, calls, wrongTo)
			}
		})
	}
}
