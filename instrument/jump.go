package instrument

import (
	"encoding/binary"
	"math"
)

// Sizes of the two jumps the out-of-line sequences use.
const (
	jmpRel32Len = 5  // e9 rel32
	jmpAbsLen   = 14 // ff 25 00000000 (jmp [rip+0]) followed by the 8-byte target
)

// appendJump appends a jump from runtime address from (where the jump
// starts) to runtime address to. It uses jmp rel32 when the target is in
// reach and otherwise jmp [rip+0] with the target stored right after it,
// which reaches anywhere and clobbers neither registers nor flags.
func appendJump(out []byte, from, to uint64) []byte {
	if rel, ok := rel32(from+jmpRel32Len, to); ok {
		out = append(out, 0xe9)
		return binary.LittleEndian.AppendUint32(out, uint32(rel))
	}
	out = append(out, 0xff, 0x25, 0, 0, 0, 0)
	return binary.LittleEndian.AppendUint64(out, to)
}

// jumpLen is the length appendJump will use.
func jumpLen(from, to uint64) int {
	if _, ok := rel32(from+jmpRel32Len, to); ok {
		return jmpRel32Len
	}
	return jmpAbsLen
}

// rel32 returns to - next as a 32-bit displacement, where next is the
// address of the instruction after the one holding it.
func rel32(next, to uint64) (int32, bool) {
	d := int64(to - next) // two's complement difference, right for any wrap
	if d < math.MinInt32 || d > math.MaxInt32 {
		return 0, false
	}
	return int32(d), true
}
