package instrument

import "testing"

// CoverLen: the whole instructions a 5-byte jump replaces.
func TestCoverLen(t *testing.T) {
	for _, c := range []struct {
		name string
		code []byte
		want int
	}{
		// sub rsp,8; cmp qword ptr [rip+0x1ab1cc],0 (redis's
		// replicationAttachToNewMaster)
		{"two instructions, the second with a 0xcc byte", []byte{0x48, 0x83, 0xec, 0x08, 0x48, 0x83, 0x3d, 0xcc, 0xb1, 0x1a, 0x00, 0x00, 0x75, 0x13}, 12},
		{"push; mov; sub", []byte{0x55, 0x48, 0x89, 0xe5, 0x48, 0x83, 0xec, 0x10}, 8},
		{"a call, exactly", []byte{0xe8, 1, 2, 3, 4, 0xc3}, 5},
		{"ret and int3 padding", []byte{0xc3, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc}, 5},
		{"undecodable", []byte{0x48, 0x83}, 5},
	} {
		if got := CoverLen(c.code, PatchLen); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}
