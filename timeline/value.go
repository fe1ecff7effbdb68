package timeline

import (
	"strconv"

	"github.com/profile-dev/profile/model"
)

// Show formats a register value as the text output shows it: a C int in
// decimal (model.RegisterInt), anything else in hex. A long in [-2^32,
// -2^31) thus shows as a small int: rare, and the hex form is in the JSON.
func Show(v uint64) string {
	if n, ok := model.RegisterInt(v); ok {
		return strconv.FormatInt(int64(n), 10)
	}
	return Hex(v)
}

// Int is a register read as a C int: its low 32 bits, signed.
func Int(v uint64) int32 { return int32(v) }

// Hex is a register's 64 bits in hex, 0x-prefixed.
func Hex(v uint64) string { return "0x" + strconv.FormatUint(v, 16) }
