package instrument

import (
	"encoding/binary"
	"testing"

	"golang.org/x/arch/x86/x86asm"
)

// fastInst is one decoded instruction of a fast path: where it is, what it
// is, where it leads (a branch's target, a rip-relative operand's
// address), 0 when nowhere, and its immediate.
type fastInst struct {
	at     uint64
	op     x86asm.Op
	target uint64
	imm    uint64
	stack  bool // it reads the stack
}

func decodeFast(t *testing.T, code []byte, at uint64) map[uint64]fastInst {
	t.Helper()
	out := map[uint64]fastInst{}
	for off := 0; off < len(code); {
		inst, err := x86asm.Decode(code[off:], 64)
		if err != nil {
			t.Fatalf("+%#x: %v", off, err)
		}
		pc := at + uint64(off)
		next := pc + uint64(inst.Len)
		fi := fastInst{at: pc, op: inst.Op}
		for _, a := range inst.Args {
			switch a := a.(type) {
			case x86asm.Rel:
				fi.target = next + uint64(int64(a))
			case x86asm.Mem:
				if a.Base == x86asm.RIP {
					fi.target = next + uint64(int64(int32(a.Disp)))
				}
				fi.stack = a.Base == x86asm.RSP
			case x86asm.Imm:
				fi.imm = uint64(a)
			}
		}
		out[pc] = fi
		off += inst.Len
	}
	return out
}

// A fast path walked as the CPU would, for a caller in each slot and for
// one in none: the slot's counter (whose address is the slot's immediate)
// is the one incremented, the body runs after rax is back, and a miss
// pushes the id and takes the trampoline's call of the counting stub.
func TestFastCount(t *testing.T) {
	const at, tramp, owner = 0x500000, 0x4ff800, 0x5eff00
	// mov rax, [rip+0x100] at 0x400000, moved: the copy reads the same
	// address, then jumps back behind it.
	moved := []byte{0x48, 0x8b, 0x05, 0x00, 0x01, 0x00, 0x00}
	var bodies []uint64
	code, slots, err := FastCount(at, tramp, owner, 0x1234, func(to uint64) ([]byte, error) {
		bodies = append(bodies, to)
		return RelocateMoved(moved, 0x400000, to)
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(bodies) != FastSlots || bodies[0] != at+FastBody {
		t.Fatalf("bodies at %#x, want %d, the first at %#x", bodies, FastSlots, at+FastBody)
	}
	// Slot K's caller returns to 0x7000+K, its counter is at 0x9000+8K;
	// the last slot is left empty.
	ret := func(k int) uint64 { return 0x7000 + uint64(k) }
	counter := func(k int) uint64 { return 0x9000 + 8*uint64(k) }
	for k, s := range slots[:FastSlots-1] {
		binary.LittleEndian.PutUint64(code[s.Ret:], ret(k))
		binary.LittleEndian.PutUint64(code[s.Counter:], counter(k))
	}
	insts := decodeFast(t, code, at)
	for _, b := range bodies {
		if i := insts[b]; i.op != x86asm.MOV || i.target != 0x400000+7+0x100 {
			t.Fatalf("body at %#x starts with %v to %#x, want the moved mov reading %#x", b, i.op, i.target, 0x400000+7+0x100)
		}
		if back := insts[b+7]; back.op != x86asm.JMP || back.target != 0x400007 {
			t.Fatalf("after the body at %#x: %v to %#x, want a jump back to 0x400007", b, back.op, back.target)
		}
	}
	// walk follows the path of a call returning to caller, by the owner
	// or not, reporting which counter it increments and where it leaves
	// the fast path.
	walk := func(caller uint64, byOwner bool) (inc, leave uint64, pushed uint32) {
		pc := uint64(at)
		matched := false
		var rax uint64
		for n := 0; n < 64; n++ {
			i, ok := insts[pc]
			if !ok {
				return inc, pc, pushed // left the fast path
			}
			next := pc
			for off := pc + 1; ; off++ {
				if _, ok := insts[off]; ok || off-pc > 15 {
					next = off
					break
				}
			}
			switch i.op {
			case x86asm.CMP:
				matched = i.stack && rax == caller || i.target == owner && byOwner
			case x86asm.MOV:
				rax = i.imm
			case x86asm.JNE:
				if !matched {
					pc = i.target
					continue
				}
			case x86asm.INC:
				inc = rax
			case x86asm.PUSH:
				if code[pc-at] == 0x68 {
					pushed = binary.LittleEndian.Uint32(code[pc-at+1:])
				}
			case x86asm.JMP:
				if i.target < at || i.target >= at+uint64(len(code)) {
					return inc, i.target, pushed
				}
				pc = i.target
				continue
			}
			pc = next
		}
		t.Fatalf("caller %#x: no way out", caller)
		return
	}
	for k := range FastSlots - 1 {
		inc, leave, pushed := walk(ret(k), true)
		want := uint64(0x400007) // through the fast path's copy of the moved instructions
		if inc != counter(k) || leave != want || pushed != 0 {
			t.Errorf("slot %d: increments %#x, leaves to %#x, pushed %#x; want %#x, %#x, none", k, inc, leave, pushed, counter(k), want)
		}
		if inc, leave, pushed := walk(ret(k), false); inc != 0 || leave != tramp+5 || pushed != 0x1234 {
			t.Errorf("slot %d, not the owner: increments %#x, leaves to %#x, pushed %#x; want nothing, %#x, 0x1234", k, inc, leave, pushed, tramp+5)
		}
	}
	if inc, leave, pushed := walk(0x6000, true); inc != 0 || leave != tramp+5 || pushed != 0x1234 {
		t.Errorf("a caller in no slot: increments %#x, leaves to %#x, pushed %#x; want nothing, %#x, 0x1234", inc, leave, pushed, tramp+5)
	}
}

// A body too long for the short branch over it is refused, not misbuilt.
func TestFastCountBodyTooLong(t *testing.T) {
	long := func(uint64) ([]byte, error) { return make([]byte, 130), nil }
	if _, _, err := FastCount(0x1000, 0x800, 0x8ff8, 1, long); err == nil {
		t.Error("a 130-byte body was taken")
	}
}
