package instrument

import "testing"

func TestSteppable(t *testing.T) {
	for _, c := range []struct {
		name string
		code []byte
		want bool
	}{
		{"prologue", []byte{0xf3, 0x0f, 0x1e, 0xfa, 0x55, 0x48, 0x89, 0xe5}, true},     // endbr64; push rbp; mov rbp, rsp
		{"immediate holding 0f 05 and cd", []byte{0xb8, 0x0f, 0x05, 0xcd, 0x00}, true}, // mov eax, 0xcd050f
		{"syscall", []byte{0x31, 0xc0, 0x0f, 0x05}, false},
		{"sysenter", []byte{0x0f, 0x34}, false},
		{"int3", []byte{0x55, 0xcc}, false},
		{"int 0x80", []byte{0xcd, 0x80}, false},
		{"ud2", []byte{0x0f, 0x0b}, false},
		{"cut short", []byte{0x48, 0x89}, false},
		{"empty", nil, true},
	} {
		if got := Steppable(c.code); got != c.want {
			t.Errorf("%s: Steppable %v, want %v", c.name, got, c.want)
		}
	}
}
