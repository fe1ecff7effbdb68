package instrument

import (
	"encoding/binary"
	"testing"

	"golang.org/x/arch/x86/x86asm"
)

// fastInst is one decoded instruction of a fast path: where it is, what it
// is, and where it leads (a branch's target, a rip-relative operand's
// address), 0 when nowhere.
type fastInst struct {
	at     uint64
	op     x86asm.Op
	target uint64
	imm    uint64 // an immediate operand (movabs)
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
// one in none: the slot's counter (whose address is the slot's pointer)
// is the one incremented, the body runs after rax is back, and a miss
// pushes the id and takes the trampoline's call of the counting stub.
func TestFastCount(t *testing.T) {
	const at, tramp, line, owner = 0x500000, 0x4ff800, 0x5f0000, 0x5eff00
	// mov rax, [rip+0x100] at 0x400000, moved: the copy reads the same
	// address, then jumps back behind it.
	moved := []byte{0x48, 0x8b, 0x05, 0x00, 0x01, 0x00, 0x00}
	var bodies []uint64
	code, err := FastCount(at, tramp, line, owner, 0x1234, func(to uint64) ([]byte, error) {
		bodies = append(bodies, to)
		return RelocateMoved(moved, 0x400000, to, 0)
	})
	if err != nil {
		t.Fatal(err)
	}
	insts := decodeFast(t, code, at)
	if len(bodies) != FastSlots || bodies[0] != at+FastBody {
		t.Fatalf("bodies at %#x, want %d, the first at %#x", bodies, FastSlots, at+FastBody)
	}
	for _, b := range bodies {
		if i := insts[b]; i.op != x86asm.MOV || i.target != 0x400000+7+0x100 {
			t.Fatalf("body at %#x starts with %v to %#x, want the moved mov reading %#x", b, i.op, i.target, 0x400000+7+0x100)
		}
		if back := insts[b+7]; back.op != x86asm.JMP || back.target != 0x400007 {
			t.Fatalf("after the body at %#x: %v to %#x, want a jump back to 0x400007", b, back.op, back.target)
		}
	}
	// walk follows the path of a call from slot's caller, by the owner or
	// not, reporting which counter pointer it increments through and where
	// it leaves the fast path.
	walk := func(slot int, byOwner bool) (inc, leave uint64, pushed uint32) {
		w := walkFast(t, code, at, func(target uint64) bool {
			return target == line+uint64(8*slot) || target == owner && byOwner
		}, func(target uint64) bool { return target >= line+FastSlots*8 && target < line+FastLine })
		return w.inc, w.leave, w.pushed
	}
	for slot := 0; slot < FastSlots; slot++ {
		inc, leave, pushed := walk(slot, true)
		want := uint64(0x400007) // through the fast path's copy of the moved instructions
		if inc != line+FastSlots*8+uint64(8*slot) || leave != want || pushed != 0 {
			t.Errorf("slot %d: increments through %#x, leaves to %#x, pushed %#x; want %#x, %#x, none", slot, inc, leave, pushed,
				line+FastSlots*8+uint64(8*slot), want)
		}
		if inc, leave, pushed := walk(slot, false); inc != 0 || leave != tramp+5 || pushed != 0x1234 {
			t.Errorf("slot %d, not the owner: increments %#x, leaves to %#x, pushed %#x; want nothing, %#x, 0x1234", slot, inc, leave, pushed, tramp+5)
		}
	}
	if inc, leave, pushed := walk(FastSlots, true); inc != 0 || leave != tramp+5 || pushed != 0x1234 {
		t.Errorf("no slot: increments %#x, leaves to %#x, pushed %#x; want nothing, %#x, 0x1234", inc, leave, pushed, tramp+5)
	}
}

// A body too long for the short branch over it is refused, not misbuilt.
func TestFastCountBodyTooLong(t *testing.T) {
	long := func(uint64) ([]byte, error) { return make([]byte, 130), nil }
	if _, err := FastCount(0x1000, 0x800, 0x9000, 0x8ff8, 1, long); err == nil {
		t.Error("a 130-byte body was taken")
	}
}

// A call site's fast path walked as the CPU would: the owner's call
// increments the slot's counter, whose address is in the code, and runs the moved
// instructions' copy, then jumps back behind them; another thread's goes
// to the function's entry with nothing counted and rax as it was.
func TestFastSite(t *testing.T) {
	const at, entry, owner, counter = 0x500000, 0x400000, 0x5eff00, 0x5f0040
	moved := []byte{0x48, 0x8b, 0x05, 0x00, 0x01, 0x00, 0x00} // mov rax, [rip+0x100] at 0x400000
	var bodies []uint64
	code, err := FastSite(at, entry, owner, counter, func(to uint64) ([]byte, error) {
		bodies = append(bodies, to)
		return RelocateMoved(moved, entry, to, 0)
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(bodies) != 1 || bodies[0] != at+FastSiteBody {
		t.Fatalf("bodies at %#x, want one at %#x", bodies, at+FastSiteBody)
	}
	if i := decodeFast(t, code, at)[bodies[0]]; i.op != x86asm.MOV || i.target != entry+7+0x100 {
		t.Fatalf("body starts with %v to %#x, want the moved mov reading %#x", i.op, i.target, entry+7+0x100)
	}
	walk := func(byOwner bool) (inc, leave uint64, stack int) {
		// No word holds a counter's address: only the code's own
		// (movabs) may aim the increment.
		w := walkFast(t, code, at, func(target uint64) bool { return target == owner && byOwner },
			func(uint64) bool { return false })
		return w.inc, w.leave, w.stack
	}
	if inc, leave, stack := walk(true); inc != counter || leave != entry+7 || stack != 0 {
		t.Errorf("owner: increments %#x, leaves to %#x, stack %+d; want %#x, %#x, 0", inc, leave, stack, uint64(counter), uint64(entry+7))
	}
	if inc, leave, stack := walk(false); inc != 0 || leave != entry || stack != 0 {
		t.Errorf("another thread: increments through %#x, leaves to %#x, stack %+d; want nothing, %#x, 0", inc, leave, stack, uint64(entry))
	}
}

// fastWalk is a path through a fast path: the counter address it
// increments through (0: none), where it leaves, the immediate it pushes
// (0: none) and its pushes less its pops.
type fastWalk struct {
	inc, leave uint64
	pushed     uint32
	stack      int
}

// walkFast follows code at at as the CPU would: a compare matches when
// matches says so of its rip-relative operand's address, and a mov from
// an address counter says holds a counter's address loads it for the next
// increment.
func walkFast(t *testing.T, code []byte, at uint64, matches, counter func(target uint64) bool) fastWalk {
	t.Helper()
	insts := decodeFast(t, code, at)
	var w fastWalk
	pc := at
	matched := false
	var ptr uint64
	for n := 0; n < 64; n++ {
		i, ok := insts[pc]
		if !ok {
			w.leave = pc // left the fast path
			return w
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
			matched = matches(i.target)
		case x86asm.MOV:
			if i.imm != 0 {
				ptr = i.imm // movabs: the counter's own address
			} else if counter(i.target) {
				ptr = i.target
			}
		case x86asm.JNE:
			if !matched {
				pc = i.target
				continue
			}
		case x86asm.INC:
			w.inc = ptr
		case x86asm.PUSH:
			w.stack++
			if code[pc-at] == 0x68 {
				w.pushed = binary.LittleEndian.Uint32(code[pc-at+1:])
			}
		case x86asm.POP:
			w.stack--
		case x86asm.JMP:
			if i.target < at || i.target >= at+uint64(len(code)) {
				w.leave = i.target
				return w
			}
			pc = i.target
			continue
		}
		pc = next
	}
	t.Fatal("no way out of the fast path")
	return w
}
