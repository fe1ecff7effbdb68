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
// followed by the jump back behind them unless their flow ends there (or
// to the call the patch keeps in place, inPlace bytes: Patch.InPlace). It
// is a second copy of a trampoline's body.
func RelocateMoved(moved []byte, at, to uint64, inPlace int) ([]byte, error) {
	var out []byte
	for off := 0; off < len(moved); {
		if inPlace > 0 && off == len(moved)-5 {
			return append(out, relocateInPlace(moved[off:], at+uint64(off), to+uint64(len(out)), inPlace)...), nil
		}
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
	c := &fastCode{at: at}
	notOwner, err := c.ownerCheck(owner)
	if err != nil {
		return nil, err
	}
	c.out = append(c.out, 0x48, 0x8b, 0x44, 0x24, 0x08) // mov rax, [rsp+8]
	for k := range FastSlots {
		if err := c.ripOp([]byte{0x48, 0x3b, 0x05}, line+uint64(8*k)); err != nil { // cmp rax, [retK]
			return nil, err
		}
		c.out = append(c.out, 0x75, 0) // jne 1f
		jne := len(c.out) - 1
		if err := c.count(line+FastSlots*8+uint64(8*k), body); err != nil {
			return nil, err
		}
		d := len(c.out) - (jne + 1)
		if d > 127 {
			return nil, errors.New("fast path: body too long")
		}
		c.out[jne] = byte(d)
	}
	c.land(notOwner)
	c.out = append(c.out, 0x58, 0x68)
	c.out = binary.LittleEndian.AppendUint32(c.out, id)
	return appendJump(c.out, at+uint64(len(c.out)), tramp+5), nil
}

// fastCode is a fast path being built to run at at.
type fastCode struct {
	at  uint64
	out []byte
}

// ripOp appends an instruction of prefix and a rip-relative rel32 to
// target.
func (c *fastCode) ripOp(prefix []byte, target uint64) error {
	c.out = append(c.out, prefix...)
	rel, ok := rel32(c.at+uint64(len(c.out))+4, target)
	if !ok {
		return errors.New("owner word or slots out of reach of the fast path")
	}
	c.out = binary.LittleEndian.AppendUint32(c.out, uint32(rel))
	return nil
}

// ownerCheck appends push rax, the compare of the thread pointer with the
// word at owner, and a jne whose end it returns, for land.
func (c *fastCode) ownerCheck(owner uint64) (int, error) {
	c.out = append(c.out, 0x50, 0x64, 0x48, 0x8b, 0x04, 0x25, 0, 0, 0, 0) // push rax; mov rax, fs:[0]
	if err := c.ripOp([]byte{0x48, 0x3b, 0x05}, owner); err != nil {      // cmp rax, [owner]
		return 0, err
	}
	c.out = append(c.out, 0x0f, 0x85, 0, 0, 0, 0) // jne
	return len(c.out), nil
}

// land aims the jne that ends at notOwner here.
func (c *fastCode) land(notOwner int) {
	binary.LittleEndian.PutUint32(c.out[notOwner-4:], uint32(len(c.out)-notOwner))
}

// count appends the increment through the counter address at counter, rax
// back, and body's copy of the moved instructions.
func (c *fastCode) count(counter uint64, body func(at uint64) ([]byte, error)) error {
	if err := c.ripOp([]byte{0x48, 0x8b, 0x05}, counter); err != nil { // mov rax, [counter]
		return err
	}
	return c.increment(body)
}

// countAt is count with the counter's own address in the code: no word
// to load it from.
func (c *fastCode) countAt(counter uint64, body func(at uint64) ([]byte, error)) error {
	c.out = binary.LittleEndian.AppendUint64(append(c.out, 0x48, 0xb8), counter) // movabs rax, counter
	return c.increment(body)
}

// increment appends the increment through rax, rax back, and body's copy of
// the moved instructions.
func (c *fastCode) increment(body func(at uint64) ([]byte, error)) error {
	c.out = append(c.out, 0x48, 0xff, 0x00, 0x58) // inc qword [rax]; pop rax
	b, err := body(c.at + uint64(len(c.out)))
	if err != nil {
		return err
	}
	c.out = append(c.out, b...)
	return nil
}

// FastBody is where a fast path's first copy of the moved instructions
// starts: the copy its first slot runs.
const FastBody = 48

// FastSite is a counted function's fast path for one call site, to run
// at at: the site's direct call, re-aimed here, by the thread whose thread
// pointer is the word at owner adds one to the counter at counter (the
// site's slot's in the function's fast path: its address is in the code,
// so that the path reads no word of the function's line) and
// runs the function's moved instructions (body makes their copy, as for
// FastCount); any other thread's call goes on to the function's entry,
// whose probe counts it by the same return address. No return address to
// compare and no jump through the trampoline: the call site says which
// slot it is.
//
//	push rax
//	mov  rax, fs:[0]
//	cmp  rax, [owner]
//	jne  1f
//	movabs rax, counter
//	inc  qword [rax]
//	pop  rax
//	body                      ; the moved instructions, the jump back
//	1:
//	pop  rax
//	jmp  entry
func FastSite(at, entry, owner, counter uint64, body func(at uint64) ([]byte, error)) ([]byte, error) {
	c := &fastCode{at: at}
	notOwner, err := c.ownerCheck(owner)
	if err != nil {
		return nil, err
	}
	if err := c.countAt(counter, body); err != nil {
		return nil, err
	}
	c.land(notOwner)
	c.out = append(c.out, 0x58)
	return appendJump(c.out, at+uint64(len(c.out)), entry), nil
}

// FastSiteBody is where a call site's fast path's copy of the moved
// instructions starts.
const FastSiteBody = 37
