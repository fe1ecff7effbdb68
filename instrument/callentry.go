package instrument

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// A function whose first instructions are a call, or one push and a call
// (keyIsExpired: push rbx; call getExpire), has no room for an entry jump
// before the call, nor for the call in place behind one (inPlaceCall).
// Its probe can be that call instead: re-aimed at a trampoline that takes
// what the function pushed off the stack, so that the caller's return
// address is where the entry stub looks for it, records the entry as an
// entry trampoline does, puts the words back and jumps to the callee. The
// callee returns into the function by the call's own return address, as
// the CPU predicts; the function's first bytes stay as they are.
//
//	tramp:  pop  r11            ; the call's return address
//	        pop  r10            ; the word the function pushed, if any
//	hdr:    push $id            ; as at an entry (trampHeader)
//	        call entry
//	        je   via
//	        push r10
//	        push r11
//	        jmp  callee
//
// r10 and r11 carry no argument at a call, and the stubs keep them.

// CallEntry is how to give a function its entry probe at the call among
// its first bytes.
type CallEntry struct {
	Site  SiteBytes // the call, re-aimed at the trampoline
	Tramp []byte
	Hdr   int // where the trampoline's header starts: its id and stub call
}

// ErrNoCallEntry: the function does not start so (PlanCallEntry).
var ErrNoCallEntry = errors.New("no call among its first bytes to take the probe")

// PlanCallEntry plans the probe at the call that starts a function (after
// its endbr64, and one push), whose code is at runtime address addr, with
// the trampoline at tramp; branches are the function's branches into its
// first bytes (EntryBranches). A branch landing after the entry and up to
// the call would run the call without the entry: refused.
func PlanCallEntry(code []byte, addr, tramp uint64, stubs Stubs, id uint32, branches []EntryBranch) (CallEntry, error) {
	start := EntryPad(code)
	off, words := start, 0
	switch {
	case off < len(code) && code[off]&0xf8 == 0x50:
		off, words = off+1, 1
	case off+1 < len(code) && code[off] == 0x41 && code[off+1]&0xf8 == 0x50:
		off, words = off+2, 1
	}
	if off+5 > len(code) || code[off] != 0xe8 || inPlaceCall(code[start:], off-start, start > 0) != nil {
		return CallEntry{}, ErrNoCallEntry
	}
	for _, b := range branches {
		if b.To > start && b.To <= off {
			return CallEntry{}, fmt.Errorf("%w: a branch at +%#x lands before its call", ErrCannotPatch, b.From)
		}
	}
	at, end := addr+uint64(off), addr+uint64(off+5)
	callee := end + uint64(int64(int32(binary.LittleEndian.Uint32(code[off+1:]))))
	out := []byte{0x41, 0x5b} // pop r11
	if words == 1 {
		out = append(out, 0x41, 0x5a) // pop r10
	}
	hdr := len(out)
	h, err := trampHeader(tramp+uint64(hdr), stubs, id)
	if err != nil {
		return CallEntry{}, fmt.Errorf("%w: %w", ErrCannotPatch, err)
	}
	out = append(out, h...)
	if words == 1 {
		out = append(out, 0x41, 0x52) // push r10
	}
	out = append(out, 0x41, 0x53) // push r11
	out = appendJump(out, tramp+uint64(len(out)), callee)
	rel, ok := rel32(end, tramp)
	if !ok {
		return CallEntry{}, fmt.Errorf("%w: trampoline out of reach of the call", ErrCannotPatch)
	}
	orig := append([]byte(nil), code[off:off+5]...)
	site := binary.LittleEndian.AppendUint32([]byte{0xe8}, uint32(rel))
	return CallEntry{Site: SiteBytes{At: at, Orig: orig, New: site}, Tramp: out, Hdr: hdr}, nil
}
