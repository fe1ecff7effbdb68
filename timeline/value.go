package timeline

import "strconv"

// A register holds a C int in its low 32 bits; the upper half is whatever
// the instruction that set it left there: zero after a 32-bit move (mov
// eax, -3 leaves 0x00000000fffffffd), all ones after a sign extension. So
// a register whose upper half is 0 or all ones is shown as its low 32
// bits, signed, in decimal (as --detail-if reads it by default); anything
// else (a pointer, a 64-bit value) in hex. An unsigned int of 2^31 or more
// thus shows negative, and a long in [-2^32, -2^31) as a small int: rare,
// and the hex form is in the JSON.

// Show formats a register value as the text output shows it.
func Show(v uint64) string {
	if hi := v >> 32; hi == 0 || hi == 0xffffffff {
		return strconv.FormatInt(int64(int32(v)), 10)
	}
	return Hex(v)
}

// Int is a register read as a C int: its low 32 bits, signed.
func Int(v uint64) int32 { return int32(v) }

// Hex is a register's 64 bits in hex, 0x-prefixed.
func Hex(v uint64) string { return "0x" + strconv.FormatUint(v, 16) }
