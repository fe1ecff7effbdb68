package instrument

import (
	"bytes"
	"encoding/binary"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// Hand-assembled pieces of functions.
var (
	movEax1   = []byte{0xb8, 0x01, 0x00, 0x00, 0x00} // mov eax, 1
	nop4      = []byte{0x0f, 0x1f, 0x40, 0x00}       // nopl 0(rax)
	xorEax    = []byte{0x31, 0xc0}                   // xor eax, eax
	movRbx    = []byte{0x48, 0x8b, 0x5d, 0xf8}       // mov rbx, [rbp-8]
	leave     = []byte{0xc9}
	ret       = []byte{0xc3}
	int3s     = []byte{0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc}
	jmpRax    = []byte{0xff, 0xe0}
	retImm    = []byte{0xc2, 0x08, 0x00}
	shortOut  = []byte{0xeb, 0x40} // jmp +0x40: past the end
	jleToLeav = []byte{0x7e, 0x09} // jle +9: from 2 to 11, the leave below
)

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// relTo is op followed by the displacement from next to target.
func relTo(op []byte, next, target uint64) []byte {
	return binary.LittleEndian.AppendUint32(slices.Clone(op), uint32(int32(int64(target)-int64(next))))
}

// jmpTo is a jmp rel32 at off in a function at addr to target.
func jmpTo(addr uint64, off int, target uint64) []byte {
	return relTo([]byte{0xe9}, addr+uint64(off)+5, target)
}

func TestPlanExits(t *testing.T) {
	const addr = 0x401000
	const callee = 0x402000
	isEntry := func(a uint64) bool { return a == callee }
	cases := []struct {
		name     string
		code     []byte
		pad      []byte
		entryEnd int
		want     ExitPlan
		err      string
	}{
		{"ret and padding after it, in the function and past its end", cat(movEax1, ret, nop4, xorEax, ret), int3s, 5,
			ExitPlan{Regions: []ExitRegion{{Off: 5, Len: 5, Ret: 5}, {Off: 12, Len: 5, Ret: 12}}}, ""},
		{"the epilogue before a ret moves", cat(movEax1, movRbx, leave, ret, xorEax), nil, 5,
			ExitPlan{Regions: []ExitRegion{{Off: 5, Len: 6, Ret: 10}}}, ""},
		{"a branch lands inside the epilogue", cat(jleToLeav, movEax1, movRbx, leave, ret, xorEax), nil, 2,
			ExitPlan{}, "no room for an exit"},
		{"a ret among the entry's bytes", cat(xorEax, ret, nop4, int3s), nil, 5, ExitPlan{}, "among the entry's bytes"},
		{"a ret with an immediate", cat(movEax1, retImm, int3s), nil, 5, ExitPlan{}, "ret with an immediate"},
		{"a tail jump to a function", cat(movEax1, jmpTo(addr, 5, callee)), int3s, 5,
			ExitPlan{Tails: []TailSite{{Off: 5, Len: 5, To: callee}}}, ""},
		{"a jump out to no function's entry", cat(movEax1, jmpTo(addr, 5, callee+1)), int3s, 5, ExitPlan{}, "leaves the function"},
		{"a short jump out", cat(movEax1, shortOut), int3s, 5, ExitPlan{}, "leaves the function"},
		{"an indirect jump, not a switch's", cat(movEax1, jmpRax), int3s, 5, ExitPlan{}, "an indirect jump"},
		{"no way out", cat(movEax1, movEax1), int3s, 5, ExitPlan{}, "no ret"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			checkPlan(t, ExitFunc{Code: c.code, Pad: c.pad, EntryEnd: c.entryEnd, Addr: addr, IsEntry: isEntry}, c.want, c.err)
		})
	}
}

// checkPlan plans f's exit probes: want, or an error saying wantErr.
func checkPlan(t *testing.T, f ExitFunc, want ExitPlan, wantErr string) {
	t.Helper()
	got, err := PlanExits(f)
	if wantErr != "" {
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Fatalf("error %v, want one saying %q", err, wantErr)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("plan %+v, want %+v", got, want)
	}
}

func TestExitTramp(t *testing.T) {
	const addr, tramp, exitStub = 0x401000, 0x500000, 0x501000
	code := cat(movEax1, movRbx, leave, ret, xorEax)
	tr, jump, err := ExitTramp(code, addr, ExitRegion{Off: 5, Len: 6, Ret: 10}, tramp, exitStub)
	if err != nil {
		t.Fatal(err)
	}
	// the moved epilogue, call exitStub, ret
	want := cat(movRbx, leave, relTo([]byte{0xe8}, tramp+10, exitStub), ret)
	if !bytes.Equal(tr, want) {
		t.Errorf("trampoline % x, want % x", tr, want)
	}
	if wantJump := cat(jmpTo(addr, 5, tramp), []byte{0xcc}); !bytes.Equal(jump, wantJump) {
		t.Errorf("jump % x, want % x", jump, wantJump)
	}
}

func TestTailTramp(t *testing.T) {
	const addr, callee, tramp, tailStub = 0x401000, 0x402000, 0x500000, 0x501000
	jcc := relTo([]byte{0x0f, 0x84}, addr+11, callee) // je callee, at +5
	code := cat(movEax1, jcc, ret)
	tr, jump, err := TailTramp(code, addr, TailSite{Off: 5, Len: 6, To: callee}, tramp, tailStub)
	if err != nil {
		t.Fatal(err)
	}
	want := cat(relTo([]byte{0xe8}, tramp+5, tailStub), relTo([]byte{0xe9}, tramp+10, callee))
	if !bytes.Equal(tr, want) {
		t.Errorf("trampoline % x, want % x", tr, want)
	}
	// the same je, to the trampoline
	if wantJump := relTo([]byte{0x0f, 0x84}, addr+11, tramp); !bytes.Equal(jump, wantJump) {
		t.Errorf("jump % x, want % x", jump, wantJump)
	}
}

// A function that jumps into a part split off it (GCC's "f.cold"): the
// part counts as the function's own when it only jumps back or calls,
// and its jumps back are branch targets like the function's own.
func TestPlanExitsColdParts(t *testing.T) {
	const addr, cold, callee = 0x401000, 0x400100, 0x402000
	jeCold := relTo([]byte{0x0f, 0x84}, addr+11, cold) // je cold, at +5
	// The function: mov eax, 1; je cold; mov rbx, [rbp-8]; leave; ret.
	fn := cat(movEax1, jeCold, movRbx, leave, ret)
	back := func(off int, to int) []byte { return jmpTo(cold, off, addr+uint64(to)) }
	call := func(off int) []byte { return relTo([]byte{0xe8}, cold+uint64(off)+5, callee) }
	ud2 := []byte{0x0f, 0x0b}
	cases := []struct {
		name string
		part []byte // at cold; nil: no part there
		want ExitPlan
		err  string
	}{
		{"jumps back before the epilogue", cat(xorEax, back(2, 5)), ExitPlan{Regions: []ExitRegion{{Off: 11, Len: 6, Ret: 16}}}, ""},
		{"jumps back into the epilogue", cat(xorEax, back(2, 11+4)), ExitPlan{}, "no room for an exit"},
		{"jumps back among the entry's bytes", cat(xorEax, back(2, 2)), ExitPlan{}, "among the entry's bytes"},
		{"calls what never returns", cat(xorEax, call(2), ud2), ExitPlan{Regions: []ExitRegion{{Off: 11, Len: 6, Ret: 16}}}, ""},
		{"ends in a call", cat(xorEax, call(2)), ExitPlan{Regions: []ExitRegion{{Off: 11, Len: 6, Ret: 16}}}, ""},
		{"returns", cat(xorEax, ret), ExitPlan{}, "a ret in the part split off"},
		{"tail-calls", cat(xorEax, jmpTo(cold, 2, callee)), ExitPlan{}, "leaves the function"},
		{"jumps through a register", cat(xorEax, jmpRax), ExitPlan{}, "an indirect jump in the part"},
		{"runs off its end", cat(xorEax, movEax1), ExitPlan{}, "runs off its end"},
		{"no part there", nil, ExitPlan{}, "leaves the function"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := ExitFunc{Code: fn, EntryEnd: 5, Addr: addr,
				IsEntry: func(a uint64) bool { return a == callee },
				Cold: func(to uint64) (ColdPart, bool) {
					if c.part == nil || to < cold || to >= cold+uint64(len(c.part)) {
						return ColdPart{}, false
					}
					return ColdPart{Addr: cold, Code: c.part}, true
				}}
			checkPlan(t, f, c.want, c.err)
		})
	}
}

// EntryEnd: whole instructions past the endbr64 covering the entry
// jump's five bytes, as the entry patch replaces them.
func TestEntryEnd(t *testing.T) {
	endbr := []byte{0xf3, 0x0f, 0x1e, 0xfa}
	push, movRbp, subRsp := []byte{0x55}, []byte{0x48, 0x89, 0xe5}, []byte{0x48, 0x83, 0xec, 0x10}
	for _, c := range []struct {
		name string
		code []byte
		want int
	}{
		{"one instruction of five bytes", cat(movEax1, ret), 5},
		{"a ret among them", cat(xorEax, ret, nop4), 7},
		{"after an endbr64", cat(endbr, push, movRbp, subRsp, ret), 12},
		{"vzeroupper among them", cat(vzeroupper, xorEax, ret), 5},
		{"undecodable", []byte{0x0f, 0x0b + 0x30, 0xff, 0xff, 0xff, 0xff}, 19},
	} {
		if got := EntryEnd(c.code); got != c.want {
			t.Errorf("%s: EntryEnd(% x) = %d, want %d", c.name, c.code, got, c.want)
		}
	}
}

// InstAt: the instruction holding a byte, decoding from the first (wrap
// of testdata/src/inplace.c: sub rsp,8; call leaf; add rsp,8; ret).
func TestInstAt(t *testing.T) {
	wrap := []byte{0x48, 0x83, 0xec, 0x08, 0xe8, 0x10, 0x20, 0x30, 0x40, 0x48, 0x83, 0xc4, 0x08, 0xc3}
	for _, c := range []struct {
		code   []byte
		off    int
		start  int
		n      int
		wantOK bool
	}{
		{wrap, 0, 0, 4, true},
		{wrap, 3, 0, 4, true},
		{wrap, 4, 4, 5, true},
		{wrap, 6, 4, 5, true}, // where an in-place call r11 begins
		{wrap, 8, 4, 5, true},
		{wrap, 9, 9, 4, true},
		{wrap, 13, 13, 1, true},
		{wrap, 14, 0, 0, false},
		{cat(vzeroupper, xorEax, ret), 3, 3, 2, true},
		{[]byte{0x0f, 0x0b + 0x30, 0xff, 0xff, 0xff, 0xff}, 2, 0, 0, false},
	} {
		if start, n, ok := InstAt(c.code, c.off); start != c.start || n != c.n || ok != c.wantOK {
			t.Errorf("InstAt(% x, %d) = %d, %d, %v; want %d, %d, %v", c.code, c.off, start, n, ok, c.start, c.n, c.wantOK)
		}
	}
}
