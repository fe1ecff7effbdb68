package instrument

import (
	"encoding/binary"
	"errors"
)

// FastSlots is how many callers a counted function's fast path knows: a
// call from one of them is one increment of its counter, a call from any
// other takes the counting stub.
const FastSlots = 8

// FastLine is the size of a fast path's slots: FastSlots return
// addresses, then as many addresses of their counters.
const FastLine = FastSlots * 16

// RelocateMoved copies the instructions a patch moved out of a function
// (moved, the bytes at at that its trampoline relocated) to run at to,
// followed by the jump back behind them unless their flow ends there. It
// is a second copy of a trampoline's body.
func RelocateMoved(moved []byte, at, to uint64) ([]byte, error) {
	var out []byte
	for off := 0; off < len(moved); {
		ins, n, f, err := relocateProbe(moved[off:], at+uint64(off), to+uint64(len(out)))
		if err != nil {
			return nil, err
		}
		out = append(out, ins...)
		off += n
		if f != flowOn {
			return out, nil
		}
	}
	return appendJump(out, to+uint64(len(out)), at+uint64(len(moved))), nil
}

// FastCount is a counted function's fast path, to run at at, entered
// instead of its trampoline at tramp (whose first instruction pushes id):
// a call by the thread whose thread pointer is the word at owner, whose
// return address is slot K of line (FastLine bytes: the return addresses,
// then the addresses of their counters), adds one to slot K's counter and
// runs the function's moved instructions, a copy of them behind each slot
// (body makes the copy that runs at an address: RelocateMoved); any other
// call pushes id and goes on through the trampoline's call of the
// counting stub, as without the fast path. One thread at a time, the
// owner: the increments are plain, not locked; an owner word of 0 (no
// thread's) sends every call the slow way. rax is saved on the stack and
// the flags are not, as at any function's entry.
//
//	push rax
//	mov  rax, fs:[0]          ; the thread pointer
//	cmp  rax, [owner]
//	jne  1f
//	mov  rax, [rsp+8]         ; the caller's return address
//	cmp  rax, [retK]          ; for K = 0 .. FastSlots-1
//	jne  1f
//	mov  rax, [counterK]
//	inc  qword [rax]
//	pop  rax
//	body                      ; the moved instructions, the jump back
//	1:
//	pop  rax
//	push id
//	jmp  tramp+5              ; the trampoline's call of the stub
func FastCount(at, tramp, line, owner uint64, id uint32, body func(at uint64) ([]byte, error)) ([]byte, error) {
	out := []byte{0x50, 0x64, 0x48, 0x8b, 0x04, 0x25, 0, 0, 0, 0} // push rax; mov rax, fs:[0]
	// ripOp appends an instruction of prefix and a rip-relative rel32 to
	// target.
	ripOp := func(prefix []byte, target uint64) error {
		out = append(out, prefix...)
		rel, ok := rel32(at+uint64(len(out))+4, target)
		if !ok {
			return errors.New("slots out of reach of the fast path")
		}
		out = binary.LittleEndian.AppendUint32(out, uint32(rel))
		return nil
	}
	if err := ripOp([]byte{0x48, 0x3b, 0x05}, owner); err != nil { // cmp rax, [owner]
		return nil, err
	}
	out = append(out, 0x0f, 0x85, 0, 0, 0, 0) // jne 1f
	notOwner := len(out)
	out = append(out, 0x48, 0x8b, 0x44, 0x24, 0x08) // mov rax, [rsp+8]
	for k := range FastSlots {
		if err := ripOp([]byte{0x48, 0x3b, 0x05}, line+uint64(8*k)); err != nil { // cmp rax, [retK]
			return nil, err
		}
		out = append(out, 0x75, 0) // jne 1f
		jne := len(out) - 1
		if err := ripOp([]byte{0x48, 0x8b, 0x05}, line+FastSlots*8+uint64(8*k)); err != nil { // mov rax, [counterK]
			return nil, err
		}
		out = append(out, 0x48, 0xff, 0x00, 0x58) // inc qword [rax]; pop rax
		b, err := body(at + uint64(len(out)))
		if err != nil {
			return nil, err
		}
		out = append(out, b...)
		d := len(out) - (jne + 1)
		if d > 127 {
			return nil, errors.New("fast path: body too long")
		}
		out[jne] = byte(d)
	}
	binary.LittleEndian.PutUint32(out[notOwner-4:], uint32(len(out)-notOwner))
	out = append(out, 0x58, 0x68)
	out = binary.LittleEndian.AppendUint32(out, id)
	return appendJump(out, at+uint64(len(out)), tramp+5), nil
}

// FastBody is where a fast path's first copy of the moved instructions
// starts: the copy its first slot runs.
const FastBody = 48
