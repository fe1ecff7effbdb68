package instrument

import (
	"errors"
	"fmt"
)

// errNotVEX means the instruction is not VEX/EVEX-encoded and is left to
// x86asm.
var errNotVEX = errors.New("not a VEX/EVEX instruction")

// vexInst is what the planner needs of a VEX- or EVEX-encoded (AVX,
// AVX-512) instruction: these are never control transfers, so only their
// length and rip-relative displacement matter.
type vexInst struct {
	len    int
	ripOff int // offset of the rip-relative disp32, -1 if none
}

// decodeVEX measures a VEX/EVEX instruction itself because x86asm either
// rejects it (EVEX) or decodes mod=00 rm=101 as an absolute address instead
// of rip-relative, which would silently break an out-of-line copy.
//
// Layout: [0x67 or segment prefixes] c5 xx | c4 xx xx | 62 xx xx xx, then
// the opcode, ModRM (all but vzeroupper/vzeroall), SIB, displacement and,
// for map 0F3A and a few map 0F opcodes, an imm8.
func decodeVEX(code []byte) (vexInst, error) {
	pos := 0
	addr32, badPrefix := false, false
prefixes:
	for ; pos < len(code) && pos < 14; pos++ {
		switch code[pos] {
		case 0x67:
			addr32 = true
			continue
		case 0x2e, 0x36, 0x3e, 0x26, 0x64, 0x65:
			continue
		case 0x66, 0xf2, 0xf3, 0xf0:
			badPrefix = true
			continue
		}
		break prefixes
	}
	if pos >= len(code) {
		return vexInst{}, errNotVEX
	}
	var mapSel, opPos int
	switch code[pos] {
	case 0xc5:
		mapSel, opPos = 1, pos+2
	case 0xc4:
		if pos+1 >= len(code) {
			return vexInst{}, fmt.Errorf("truncated VEX prefix")
		}
		mapSel, opPos = int(code[pos+1]&0x1f), pos+3
		if mapSel < 1 || mapSel > 3 {
			return vexInst{}, fmt.Errorf("VEX opcode map %d unsupported", mapSel)
		}
	case 0x62:
		if pos+2 >= len(code) {
			return vexInst{}, fmt.Errorf("truncated EVEX prefix")
		}
		mapSel, opPos = int(code[pos+1]&0x07), pos+4
		if mapSel == 0 || mapSel == 4 || mapSel == 7 || code[pos+2]&0x04 == 0 {
			return vexInst{}, fmt.Errorf("invalid EVEX prefix % x", code[pos:pos+3])
		}
	default:
		return vexInst{}, errNotVEX
	}
	if badPrefix {
		return vexInst{}, fmt.Errorf("66/f2/f3/f0 prefix before VEX/EVEX is invalid")
	}
	if opPos >= len(code) {
		return vexInst{}, fmt.Errorf("truncated VEX/EVEX instruction")
	}
	op := code[opPos]
	if code[pos] != 0x62 && mapSel == 1 && op == 0x77 { // vzeroupper, vzeroall
		return vexInst{len: opPos + 1, ripOff: -1}, nil
	}
	p := opPos + 1
	if p >= len(code) {
		return vexInst{}, fmt.Errorf("truncated VEX/EVEX instruction")
	}
	modrm := code[p]
	p++
	mod, rm := modrm>>6, modrm&7
	ripOff := -1
	switch {
	case mod == 3:
	case mod == 0 && rm == 5:
		if addr32 {
			return vexInst{}, fmt.Errorf("eip-relative addressing unsupported")
		}
		ripOff = p
		p += 4
	default:
		if rm == 4 {
			if p >= len(code) {
				return vexInst{}, fmt.Errorf("truncated SIB")
			}
			if mod == 0 && code[p]&7 == 5 {
				p += 4 // SIB with no base: disp32
			}
			p++
		}
		switch mod {
		case 1:
			p++
		case 2:
			p += 4
		}
	}
	if vexHasImm8(mapSel, op) {
		p++
	}
	if p > 15 || p > len(code) {
		return vexInst{}, fmt.Errorf("VEX/EVEX instruction of %d bytes: truncated or too long", p)
	}
	return vexInst{len: p, ripOff: ripOff}, nil
}

// vexHasImm8 reports whether a VEX/EVEX opcode takes an imm8: all of map
// 0F3A, and in map 0F the shifts-by-immediate and shuffles/compares/inserts.
func vexHasImm8(mapSel int, op byte) bool {
	switch mapSel {
	case 3:
		return true
	case 1:
		switch op {
		case 0x70, 0x71, 0x72, 0x73, 0xc2, 0xc4, 0xc5, 0xc6:
			return true
		}
	}
	return false
}
