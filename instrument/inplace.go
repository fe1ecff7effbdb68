package instrument

import (
	"bytes"
	"encoding/binary"
)

// A direct call among a function's first bytes (dictFetchValue: sub rsp,8;
// call dictFind) ends the bytes its entry patch replaces. Relocated into
// the trampoline (probeCall), it costs a mispredicted return on every
// call, and the time lands in the function's own code right behind it.
// When the call starts far enough past the jump, it stays in the
// function's own bytes instead, as an indirect call ending where the
// original ends, so that the CPU's return prediction holds the original
// return address: the trampoline loads r11 with the callee and jumps to
// that call.
//
//	entry:  jmp  tramp          ; the patch's jump
//	        int3 ...            ; (never run)
//	        call r11            ; ends where the original call ended
//	tramp:  <header, the instructions before the call>
//	        lea  r11, [rip+callee]  (or mov r11, imm64)
//	        jmp  entry's call r11
//
// r11 is free at any call: the psABI makes it a temporary that passes no
// argument, and linker stubs (the PLT) clobber it on the way to a callee.
// A function built for CET (an endbr64 at its entry) gets the notrack
// form, which indirect branch tracking lets reach a callee without an
// endbr64.
var (
	callR11        = []byte{0x41, 0xff, 0xd3}
	notrackCallR11 = []byte{0x3e, 0x41, 0xff, 0xd3}
)

// inPlaceCall is the in-place form of the call at off in code, the bytes
// from a patch's first (At), or nil when it keeps probeCall's: the call
// must be a rel32 call whose in-place form starts past the patch's jump.
// cet: the function starts with an endbr64.
func inPlaceCall(code []byte, off int, cet bool) []byte {
	if off+5 > len(code) || code[off] != 0xe8 {
		return nil
	}
	form := callR11
	if cet {
		form = notrackCallR11
	}
	if off+5-len(form) < PatchLen {
		return nil
	}
	return form
}

// relocateInPlace is the trampoline's end for the call at at (code, a rel32
// call) kept in place as an n-byte form: r11 loaded with the callee, a
// jump to the form's address.
func relocateInPlace(code []byte, at, slot uint64, n int) []byte {
	end := at + 5
	callee := end + uint64(int64(int32(binary.LittleEndian.Uint32(code[1:5]))))
	var out []byte
	if rel, ok := rel32(slot+7, callee); ok {
		out = binary.LittleEndian.AppendUint32([]byte{0x4c, 0x8d, 0x1d}, uint32(rel)) // lea r11, [rip+rel]
	} else {
		out = binary.LittleEndian.AppendUint64([]byte{0x49, 0xbb}, callee) // mov r11, imm64
	}
	return appendJump(out, slot+uint64(len(out)), end-uint64(n))
}

// InPlaceLen is the length of the in-place call form b starts with (a
// patch's last bytes), 0 if none: what a patch left by a killed profiler
// holds after its jump and int3s.
func InPlaceLen(b []byte) int {
	for _, form := range [][]byte{callR11, notrackCallR11} {
		if bytes.HasPrefix(b, form) {
			return len(form)
		}
	}
	return 0
}

// ReaimLastJump is, for code at runtime address at that ends in a rel32
// jump to from, that jump's 5 bytes aimed at to; false for other code.
// The trampoline and the fast paths of a patch that keeps a call in place
// end in a jump to that call: a thread a signal handler holds
// inside them when the function gets its bytes back (a detach leaving
// them mapped for it) must go to the original call instead, not into its
// middle.
func ReaimLastJump(code []byte, at, from, to uint64) ([]byte, bool) {
	off := len(code) - jmpRel32Len
	if off < 0 || code[off] != 0xe9 {
		return nil, false
	}
	next := at + uint64(off) + jmpRel32Len
	old, ok1 := rel32(next, from)
	rel, ok2 := rel32(next, to)
	if !ok1 || !ok2 || int32(binary.LittleEndian.Uint32(code[off+1:])) != old {
		return nil, false
	}
	return binary.LittleEndian.AppendUint32([]byte{0xe9}, uint32(rel)), true
}
