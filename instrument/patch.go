package instrument

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/arch/x86/x86asm"
)

// An inline probe (docs/design.md, Inline probes) replaces a function's
// first instructions by a jmp rel32 to its trampoline:
//
//	tramp:  push $id            ; the function's id for the entry stub
//	        call entry          ; records the entry; hijacking the return, ZF and ret $16, else ret $8
//	        je   via            ; via calls body, its return address the return stub's
//	body:   <relocated prologue>
//	        jmp  At+Len         ; back behind the patch
const (
	// PatchLen is the length of the jump written over the prologue.
	PatchLen = 5
	// TrampMax bounds a trampoline: the header, at most PatchLen+14 bytes of
	// instructions (each short branch widened to 2+5+5 or 2+14+14 bytes) and
	// the jump back.
	TrampMax = 128
	trampHdr = 16 // push imm32 (5) + call rel32 (5) + je rel32 (6)
	// TrampBody is where a trampoline's relocated instructions start:
	// code of the function, run there.
	TrampBody = trampHdr
)

// Stubs are the addresses in the stub copy a trampoline uses: the entry
// stub (or the counting stub) it calls, and the call that runs a function
// whose return the entry stub hijacked.
type Stubs struct{ Entry, Via uint64 }

// ErrCannotPatch is wrapped by PlanPatch's errors: the function keeps (or
// gets) a trap probe. The text after it is the reason, for --stats.
var ErrCannotPatch = errors.New("no inline probe")

// Patch is how to give one function an inline probe.
type Patch struct {
	Addr  uint64 // the function's entry
	At    uint64 // where the jump goes: Addr, or past an endbr64 (indirect calls still land on one)
	Len   int    // bytes replaced at At: whole instructions, at least PatchLen
	Orig  []byte // the original bytes at At
	Jump  []byte // the Len bytes written at At: jmp rel32 to the trampoline, int3 padding
	Tramp []byte // the trampoline, to be written at its address
	// InPlace: the length of the call Jump ends with, kept in the
	// function's bytes (inPlaceCall); the trampoline jumps back to it. 0
	// when there is none.
	InPlace int
}

// PlanPatch plans the inline probe of a function whose code (the whole
// function, size from the symbol table) is at runtime address addr. Its
// trampoline goes at tramp and calls the entry stub of stubs with id. A
// function is refused when its first instructions cannot move: a system
// call, a 16-bit branch, an instruction that must not run elsewhere, or a call before the fifth byte (it would return into
// the jump; a call that ends the replaced bytes is relocated); or when a
// branch of the function lands inside the replaced bytes, which would
// then execute half of the jump. pad holds the bytes
// between the function and the next symbol: if they are all alignment
// padding (int3, nops), a function shorter than the jump whose flow ends
// (ret, jmp) before it may take them.
func PlanPatch(code, pad []byte, addr, tramp uint64, stubs Stubs, id uint32) (Patch, error) {
	branches, err := EntryBranches(code)
	return PlanPatchSwept(code, pad, addr, tramp, stubs, id, branches, err)
}

// PlanPatchSwept is PlanPatch with the sweep of the function's branches
// done before (EntryBranches, Module.Sweep): the sweep reads the whole
// function, and done while the target runs it does not hold the target.
func PlanPatchSwept(code, pad []byte, addr, tramp uint64, stubs Stubs, id uint32, branches []EntryBranch, swept error) (Patch, error) {
	p, err := planPatch(code, pad, addr, tramp, stubs, id, branches, swept)
	if err != nil {
		return Patch{}, fmt.Errorf("%w: %w", ErrCannotPatch, err)
	}
	return p, nil
}

func planPatch(code, pad []byte, addr, tramp uint64, stubs Stubs, id uint32, branches []EntryBranch, swept error) (Patch, error) {
	start := 0
	if isEndbr(code) {
		start = len(endbr64)
	}
	full := append(code[:len(code):len(code)], pad...)
	if len(full) < start+PatchLen {
		return Patch{}, fmt.Errorf("function of %d bytes is shorter than the jump", len(code))
	}
	p := Patch{Addr: addr, At: addr + uint64(start)}
	out, err := trampHeader(tramp, stubs, id)
	if err != nil {
		return Patch{}, err
	}
	off, ended := start, false
	for off < start+PatchLen {
		if ended {
			// The flow has left (ret, jmp, a call returning behind the
			// patch): the rest of the jump's bytes never run. Past the
			// function they must be padding; inside it, no branch may
			// land there (EntryBranches).
			if lo := max(off, len(code)); lo < start+PatchLen && !padding(pad) {
				return Patch{}, errors.New("jump or return before the fifth byte, code after it")
			}
			off = start + PatchLen
			break
		}
		if off >= len(code) {
			return Patch{}, fmt.Errorf("function of %d bytes is shorter than the jump", len(code))
		}
		at := addr + uint64(off)
		slot := tramp + uint64(len(out))
		if form := inPlaceCall(full[start:], off-start, start > 0); form != nil {
			out = append(out, relocateInPlace(full[off:], at, slot, len(form))...)
			off += 5
			ended = true
			p.InPlace = len(form)
			continue
		}
		ins, n, f, err := relocateProbe(code[off:], at, slot)
		if err != nil {
			return Patch{}, err
		}
		out = append(out, ins...)
		off += n
		ended = f != flowOn
		if f == flowCall && off < start+PatchLen {
			// It would return into the middle of the jump.
			return Patch{}, errors.New("call before the fifth byte")
		}
	}
	p.Len = off - start
	if !ended {
		out = appendJump(out, tramp+uint64(len(out)), p.At+uint64(p.Len))
	}
	if len(out) > TrampMax {
		return Patch{}, fmt.Errorf("trampoline of %d bytes", len(out))
	}
	if swept != nil {
		return Patch{}, swept
	}
	if p.At+uint64(p.Len) > addr+EntrySpan {
		return Patch{}, fmt.Errorf("%d bytes replaced, past the first %d", p.Len, EntrySpan)
	}
	for _, b := range branches {
		if to := addr + uint64(b.To); to >= p.At+1 && to < p.At+uint64(p.Len) {
			return Patch{}, fmt.Errorf("a branch at +%#x lands inside the first %d bytes", b.From, PatchLen)
		}
	}
	p.Orig = append([]byte(nil), full[start:off]...)
	p.Jump = make([]byte, p.Len)
	p.Jump[0] = 0xe9
	rel, ok := rel32(p.At+PatchLen, tramp)
	if !ok {
		return Patch{}, errors.New("trampoline out of reach of the function")
	}
	binary.LittleEndian.PutUint32(p.Jump[1:], uint32(rel))
	for i := PatchLen; i < p.Len; i++ {
		p.Jump[i] = 0xcc
	}
	if p.InPlace > 0 {
		copy(p.Jump[p.Len-p.InPlace:], inPlaceCall(full[start:], p.Len-5, start > 0))
	}
	p.Tramp = out
	return p, nil
}

// trampHeader is a trampoline's first instructions: push the function's
// id, call the entry stub, and go to via if it hijacked the return.
func trampHeader(tramp uint64, stubs Stubs, id uint32) ([]byte, error) {
	out := make([]byte, trampHdr, TrampMax)
	out[0] = 0x68
	binary.LittleEndian.PutUint32(out[1:], id)
	out[5] = 0xe8
	rel, ok := rel32(tramp+10, stubs.Entry)
	if !ok {
		return nil, errors.New("entry stub out of reach of the trampoline")
	}
	binary.LittleEndian.PutUint32(out[6:], uint32(rel))
	out[10], out[11] = 0x0f, 0x84
	if rel, ok = rel32(tramp+trampHdr, stubs.Via); !ok {
		return nil, errors.New("entry stub out of reach of the trampoline")
	}
	binary.LittleEndian.PutUint32(out[12:], uint32(rel))
	return out, nil
}

// SitePatch is how to give a function an inline probe at its call sites
// (Module.CallSites): a trampoline that jumps to its untouched entry, and
// each branch to the entry re-aimed at the trampoline.
type SitePatch struct {
	Tramp []byte
	Sites []SiteBytes
}

// SiteBytes is one branch's bytes at runtime address At, as they are and
// as the probe has them.
type SiteBytes struct {
	At        uint64
	Orig, New []byte
}

// PlanSites plans the probe at the call sites of the function at runtime
// address addr: sites are its branches (link-time, bias added here) with
// their current bytes in code (read from the target, same order); the
// trampoline goes at tramp and calls the entry stub of stubs with id.
func PlanSites(addr, bias, tramp uint64, stubs Stubs, id uint32, sites []BranchSite, code [][]byte) (SitePatch, error) {
	out, err := trampHeader(tramp, stubs, id)
	if err != nil {
		return SitePatch{}, fmt.Errorf("%w: %w", ErrCannotPatch, err)
	}
	p := SitePatch{Tramp: appendJump(out, tramp+trampHdr, addr)}
	for i, s := range sites {
		at := s.At + bias
		cur := code[i]
		if len(cur) != s.Len || s.Disp+4 != s.Len {
			return SitePatch{}, fmt.Errorf("%w: branch at %#x of %d bytes", ErrCannotPatch, at, len(cur))
		}
		if to := at + uint64(s.Len) + uint64(int64(int32(binary.LittleEndian.Uint32(cur[s.Disp:])))); to != addr {
			return SitePatch{}, fmt.Errorf("%w: branch at %#x goes to %#x, not the function", ErrCannotPatch, at, to)
		}
		rel, ok := rel32(at+uint64(s.Len), tramp)
		if !ok {
			return SitePatch{}, fmt.Errorf("%w: trampoline out of reach of the branch at %#x", ErrCannotPatch, at)
		}
		nb := append([]byte(nil), cur...)
		binary.LittleEndian.PutUint32(nb[s.Disp:], uint32(rel))
		p.Sites = append(p.Sites, SiteBytes{At: at, Orig: append([]byte(nil), cur...), New: nb})
	}
	return p, nil
}

// flow is where control goes after a relocated instruction.
type flow int

const (
	flowOn   flow = iota // to the next instruction
	flowEnds             // elsewhere (ret, jmp): the trampoline needs no jump back
	flowCall             // a call: back behind it, which must be behind the patch
)

// relocateProbe copies one prologue instruction at at to slot: re-aimed
// when it addresses memory relative to rip, widened when it is a short
// branch.
func relocateProbe(code []byte, at, slot uint64) (out []byte, n int, f flow, err error) {
	if v, err := decodeVEX(code); !errors.Is(err, errNotVEX) {
		if err != nil {
			return nil, 0, flowOn, err
		}
		ins := append([]byte(nil), code[:v.len]...)
		if v.ripOff >= 0 {
			if err := reaim(ins, v.ripOff, at, slot); err != nil {
				return nil, 0, flowOn, err
			}
		}
		return ins, v.len, flowOn, nil
	}
	inst, err := decodeInst(code)
	if err != nil {
		return nil, 0, flowOn, err
	}
	// Reasons name the instruction, not its operands: --stats groups them.
	name := strings.ToLower(inst.Op.String())
	_, isRel := inst.Args[0].(x86asm.Rel)
	switch op := inst.Op; {
	case op == x86asm.CALL:
		ins, err := probeCall(code[:inst.Len], inst, at, slot)
		if err != nil {
			return nil, 0, flowOn, fmt.Errorf("%s in the prologue: %w", name, err)
		}
		return ins, inst.Len, flowCall, nil
	case op == x86asm.RET:
		// Position independent, and the flow ends: the trampoline needs
		// no jump back.
		return append([]byte(nil), code[:inst.Len]...), inst.Len, flowEnds, nil
	case refused(op), op == x86asm.SYSCALL, op == x86asm.INT:
		return nil, 0, flowOn, fmt.Errorf("%s in the prologue", name)
	case op == x86asm.JMP && isRel:
		target := at + uint64(inst.Len) + uint64(pcRel(code, inst))
		return appendJump(nil, slot, target), inst.Len, flowEnds, nil
	case op == x86asm.JMP:
		// An indirect jump is a tail call (a virtual call's forwarding
		// function: mov rax, [rdi]; jmp [rax+0x20]) or a switch's
		// dispatch: either way the flow ends, and the copy runs as the
		// original but for a rip-relative operand, re-aimed.
		ins, err := relocate(code[:inst.Len], inst, at, slot)
		if err != nil {
			return nil, 0, flowOn, fmt.Errorf("%s: %w", name, err)
		}
		return ins[:inst.Len], inst.Len, flowEnds, nil
	case isRel && inst.DataSize == 16:
		return nil, 0, flowOn, errors.New("16-bit branch in the prologue")
	case isRel && isShortCond(op):
		ins, err := probeBranch(code[:inst.Len], inst, at, slot)
		return ins, inst.Len, flowOn, err
	case isRel:
		return nil, 0, flowOn, fmt.Errorf("%s: unexpected relative operand", name)
	}
	ins, err := relocate(code[:inst.Len], inst, at, slot)
	if err != nil {
		return nil, 0, flowOn, fmt.Errorf("%s: %w", name, err)
	}
	return ins[:inst.Len], inst.Len, flowOn, nil // relocate appends a jump back: not wanted here
}

// probeCall relocates a call that ends the replaced bytes: it pushes the
// original return address (the instruction behind the patch, so the
// callee returns into the original code and unwinders see the original
// address) and jumps to the callee.
//
// Two costs of doing so are avoided. A call pushes its return address on
// the return stack buffer too: pushed and jumped without one, the
// callee's ret is mispredicted and leaves the buffer one behind, so that
// every return above it (the function's own, its caller's, ...) is
// mispredicted as well. Here a real call (not to the next instruction,
// which CPUs leave out of the buffer) pushes an entry that the callee's
// ret takes: that one return is still mispredicted, those above it are
// not. And the address is pushed as one 8-byte store: one written as two
// halves cannot be forwarded to the 8-byte load that reads it (a counted
// callee's fast path reading its return address, the ret), which waits
// for the stores to reach the cache.
//
//	call 1f               ; an entry for the callee's ret
//	int3                  ; (never runs)
//	1: lea rsp, [rsp+8]   ; that push undone; lea leaves the flags alone
//	push qword [rip+ret]  ; the original return address
//	jmp callee            ; rel32 or [rip+0] abs64; or the call's own
//	                      ; operand: jmp [rip+disp'], jmp reg
//	ret: dq return address
func probeCall(code []byte, inst x86asm.Inst, addr, slot uint64) ([]byte, error) {
	ret := addr + uint64(inst.Len)
	out := []byte{0xe8, 1, 0, 0, 0, 0xcc, 0x48, 0x8d, 0x64, 0x24, 0x08, 0xff, 0x35, 0, 0, 0, 0}
	here := slot + uint64(len(out))
	switch a := inst.Args[0].(type) {
	case x86asm.Rel:
		out = appendJump(out, here, ret+uint64(pcRel(code, inst)))
	case x86asm.Mem:
		if a.Base != x86asm.RIP || inst.PCRel != 4 || len(code) != 6 || code[0] != 0xff || code[1] != 0x15 {
			return nil, errors.New("memory operand")
		}
		jmp := []byte{0xff, 0x25, code[2], code[3], code[4], code[5]}
		if err := reaim(jmp, 2, addr, here); err != nil {
			return nil, err
		}
		out = append(out, jmp...)
	case x86asm.Reg:
		switch {
		case len(code) == 2 && code[0] == 0xff && code[1]&0xf8 == 0xd0: // call r64
			out = append(out, 0xff, 0xe0|code[1]&7)
		case len(code) == 3 && code[0] == 0x41 && code[1] == 0xff && code[2]&0xf8 == 0xd0: // call r8-r15
			out = append(out, 0x41, 0xff, 0xe0|code[2]&7)
		default:
			return nil, errors.New("operand")
		}
	default:
		return nil, errors.New("operand")
	}
	binary.LittleEndian.PutUint32(out[probeCallPush:], uint32(len(out)-probeCallPush-4))
	return binary.LittleEndian.AppendUint64(out, ret), nil
}

// probeCallPush is where probeCall's push holds its rip-relative offset.
const probeCallPush = 13

// probeBranch relocates a conditional branch of a prologue: taken, it
// goes to its original target; not taken, on to the next relocated
// instruction (unlike condBranch's, whose fall-through is the original
// code, here the middle of the jump):
//
//	[67] cond rel8 → taken   ; the same condition
//	jmp  short over          ; not taken
//	taken: jmp target
//	over:
func probeBranch(code []byte, inst x86asm.Inst, addr, slot uint64) ([]byte, error) {
	br, err := shortCond(code, inst)
	if err != nil {
		return nil, err
	}
	br[len(br)-1] = 2 // over the short jump
	target := addr + uint64(inst.Len) + uint64(pcRel(code, inst))
	taken := slot + uint64(len(br)) + 2
	jmp := appendJump(nil, taken, target)
	out := append(br, 0xeb, byte(len(jmp)))
	return append(out, jmp...), nil
}

// EntryBranch is a direct branch (or call) of a function at offset From
// that lands at offset To, within its first EntrySpan bytes: where an
// inline patch's jump may go, whose middle no branch may reach.
type EntryBranch struct{ From, To int }

// EntrySpan bounds the bytes a patch replaces: an endbr64 and whole
// instructions covering the jump's five bytes.
const EntrySpan = 32

// EntryBranches sweeps a function's instructions and returns its direct
// branches into its first EntrySpan bytes, past its first byte. An
// undecodable byte is an error: the sweep could not vouch for the
// function.
func EntryBranches(code []byte) ([]EntryBranch, error) {
	var out []EntryBranch
	err := walkCode(code, func(off int, inst *x86asm.Inst, _ int) error {
		if b, ok := entryBranchAt(code, off, inst); ok {
			out = append(out, b)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// entryBranchAt tells whether the instruction inst at off in code (nil:
// one x86asm does not know) is a branch into the function's first
// EntrySpan bytes (its own start apart), and which.
func entryBranchAt(code []byte, off int, inst *x86asm.Inst) (EntryBranch, bool) {
	if inst == nil {
		return EntryBranch{}, false
	}
	if _, isRel := inst.Args[0].(x86asm.Rel); isRel && inst.PCRel > 0 {
		if to := int64(off+inst.Len) + pcRel(code[off:], *inst); to >= 1 && to < EntrySpan {
			return EntryBranch{From: off, To: int(to)}, true
		}
	}
	return EntryBranch{}, false
}

// cetLen measures the register forms of the CET shadow-stack instructions
// x86asm does not know (rdssp, incssp, saveprevssp, setssbsy), which
// unwinders use: F3 [REX] 0F 1E /1, F3 [REX] 0F AE /5, F3 0F 01 EA/E8. It
// returns 0 for anything else. They never branch.
func cetLen(code []byte) int {
	if len(code) < 4 || code[0] != 0xf3 {
		return 0
	}
	i := 1
	if code[i]&0xf0 == 0x40 { // REX
		i++
	}
	if len(code) < i+3 || code[i] != 0x0f {
		return 0
	}
	op, modrm := code[i+1], code[i+2]
	reg := modrm >> 3 & 7
	switch {
	case op == 0x1e && modrm>>6 == 3 && reg == 1, op == 0xae && modrm>>6 == 3 && reg == 5:
		return i + 3
	case op == 0x01 && (modrm == 0xea || modrm == 0xe8) && i == 1:
		return 4
	}
	return 0
}

// padding tells alignment filler: int3 and nop encodings only.
func padding(b []byte) bool {
	for len(b) > 0 {
		if b[0] == 0xcc {
			b = b[1:]
			continue
		}
		inst, err := decodeInst(b)
		if err != nil || inst.Op != x86asm.NOP {
			return false
		}
		b = b[inst.Len:]
	}
	return true
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// EntryEnd is where the bytes an entry patch replaces end in a function's
// code: whole instructions past its endbr64 covering the jump's PatchLen
// bytes (what planPatch replaces); at most the longest instruction past
// them when they cannot be decoded.
func EntryEnd(code []byte) int {
	start := EntryPad(code)
	off := start
	for off < start+PatchLen && off < len(code) {
		n := instLen(code[off:])
		if n == 0 {
			return start + PatchLen + 14
		}
		off += n
	}
	return off
}

// InstAt is the start and length of the instruction holding byte off of
// code, decoding from code's first byte; false if an instruction up to
// it cannot be decoded. A pc saved inside a patch's bytes (a signal
// frame's, at a call the patch kept in place) resumes at that start once
// the patch is undone.
func InstAt(code []byte, off int) (start, n int, ok bool) {
	for at := 0; at <= off && at < len(code); at += n {
		if n = instLen(code[at:]); n == 0 {
			return 0, 0, false
		}
		if off < at+n {
			return at, n, true
		}
	}
	return 0, 0, false
}

// instLen is the length of the instruction code begins with, VEX-encoded
// or not; 0 if it cannot be decoded.
func instLen(code []byte) int {
	v, err := decodeVEX(code)
	switch {
	case err == nil:
		return v.len
	case errors.Is(err, errNotVEX):
		if inst, err := decodeInst(code); err == nil {
			return inst.Len
		}
	}
	return 0
}
