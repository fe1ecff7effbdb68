package instrument

import (
	"bytes"
	"math"
	"testing"
)

func TestAppendJump(t *testing.T) {
	tests := []struct {
		name     string
		from, to uint64
		want     []byte
	}{
		{"forward rel32", 0x1000, 0x1010, []byte{0xe9, 0x0b, 0, 0, 0}},
		{"backward rel32", 0x1000, 0x1000, []byte{0xe9, 0xfb, 0xff, 0xff, 0xff}},
		{"largest forward", 0x1000, 0x1005 + math.MaxInt32, []byte{0xe9, 0xff, 0xff, 0xff, 0x7f}},
		{"one past the largest", 0x1000, 0x1006 + math.MaxInt32,
			[]byte{0xff, 0x25, 0, 0, 0, 0, 0x05, 0x10, 0, 0x80, 0, 0, 0, 0}},
		{"largest backward", 0x80001000, 0x80001005 - 1<<31, []byte{0xe9, 0, 0, 0, 0x80}},
		{"far", 0x7f0000000000, 0x1000, []byte{0xff, 0x25, 0, 0, 0, 0, 0, 0x10, 0, 0, 0, 0, 0, 0}},
	}
	for _, tt := range tests {
		got := appendJump([]byte{0x90}, tt.from, tt.to)
		if !bytes.Equal(got[1:], tt.want) || got[0] != 0x90 {
			t.Errorf("%s: appendJump = % x, want 90 % x", tt.name, got, tt.want)
		}
		if n := jumpLen(tt.from, tt.to); n != len(tt.want) {
			t.Errorf("%s: jumpLen = %d, want %d", tt.name, n, len(tt.want))
		}
	}
}
