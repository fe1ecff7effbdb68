package unwind

import (
	"errors"
	"testing"
)

func TestLEB128(t *testing.T) {
	// The examples of DWARF 5 §7.6, and the 64-bit extremes.
	uleb := []struct {
		in   []byte
		want uint64
	}{
		{[]byte{0x02}, 2},
		{[]byte{0x7f}, 127},
		{[]byte{0x80, 0x01}, 128},
		{[]byte{0x81, 0x01}, 129},
		{[]byte{0x82, 0x01}, 130},
		{[]byte{0xb9, 0x64}, 12857},
		{[]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, ^uint64(0)},
	}
	for _, c := range uleb {
		r := reader{b: c.in}
		if got := r.uleb(); got != c.want || r.err != nil || r.off != len(c.in) {
			t.Errorf("uleb(% x) = %d (err %v, off %d), want %d", c.in, got, r.err, r.off, c.want)
		}
	}
	sleb := []struct {
		in   []byte
		want int64
	}{
		{[]byte{0x02}, 2},
		{[]byte{0x7e}, -2},
		{[]byte{0xff, 0x00}, 127},
		{[]byte{0x81, 0x7f}, -127},
		{[]byte{0x80, 0x01}, 128},
		{[]byte{0x80, 0x7f}, -128},
		{[]byte{0x81, 0x01}, 129},
		{[]byte{0xff, 0x7e}, -129},
		{[]byte{0x78}, -8},
		{[]byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x7f}, -1 << 63},
	}
	for _, c := range sleb {
		r := reader{b: c.in}
		if got := r.sleb(); got != c.want || r.err != nil || r.off != len(c.in) {
			t.Errorf("sleb(% x) = %d (err %v, off %d), want %d", c.in, got, r.err, r.off, c.want)
		}
	}
	for _, in := range [][]byte{{}, {0x80}, {0xff, 0xff}} {
		r := reader{b: in}
		if r.uleb(); !errors.Is(r.err, errShort) {
			t.Errorf("uleb(% x): err %v, want errShort", in, r.err)
		}
	}
}

func TestPointer(t *testing.T) {
	const at = 0x1000 // link-time address of the data's first byte
	cases := []struct {
		name    string
		enc     byte
		in      []byte
		base    bases
		want    uint64
		n       int // bytes consumed
		wantErr bool
	}{
		{"absptr", peAbsptr, []byte{8, 7, 6, 5, 4, 3, 2, 1}, bases{}, 0x0102030405060708, 8, false},
		{"udata2", peUdata2, []byte{0xfe, 0xff}, bases{}, 0xfffe, 2, false},
		{"sdata2", peSdata2, []byte{0xfe, 0xff}, bases{}, ^uint64(1), 2, false},
		{"udata4", peUdata4, []byte{0xfc, 0xff, 0xff, 0xff}, bases{}, 0xfffffffc, 4, false},
		{"sdata4", peSdata4, []byte{0xfc, 0xff, 0xff, 0xff}, bases{}, ^uint64(3), 4, false},
		{"udata8", peUdata8, []byte{1, 0, 0, 0, 0, 0, 0, 0x80}, bases{}, 0x8000000000000001, 8, false},
		{"sdata8", peSdata8, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, bases{}, ^uint64(0), 8, false},
		{"uleb128", peUleb128, []byte{0x80, 0x01}, bases{}, 128, 2, false},
		{"sleb128", peSleb128, []byte{0x7e}, bases{}, ^uint64(1), 1, false},
		{"pcrel sdata4", pePcrel | peSdata4, []byte{0xf0, 0xff, 0xff, 0xff}, bases{}, at - 0x10, 4, false},
		{"pcrel udata4", pePcrel | peUdata4, []byte{0x10, 0, 0, 0}, bases{}, at + 0x10, 4, false},
		{"datarel sdata4", peDatarel | peSdata4, []byte{0x20, 0, 0, 0}, bases{data: 0x5000}, 0x5020, 4, false},
		{"indirect ignored", peIndirect | pePcrel | peSdata4, []byte{4, 0, 0, 0}, bases{}, at + 4, 4, false},
		{"omit", peOmit, []byte{1, 2}, bases{}, 0, 0, false},
		{"datarel without base", peDatarel | peSdata4, []byte{0, 0, 0, 0}, bases{}, 0, 0, true},
		{"textrel", peTextrel | peUdata4, []byte{0, 0, 0, 0}, bases{}, 0, 0, true},
		{"bad format", 0x05, []byte{0, 0, 0, 0}, bases{}, 0, 0, true},
		{"short", peUdata4, []byte{1, 2}, bases{}, 0, 0, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := reader{b: c.in, addr: at}
			got := r.pointer(c.enc, c.base)
			if c.wantErr {
				if r.err == nil {
					t.Fatalf("pointer = %#x, want an error", got)
				}
				return
			}
			if r.err != nil || got != c.want || r.off != c.n {
				t.Errorf("pointer = %#x (err %v, off %d), want %#x after %d bytes", got, r.err, r.off, c.want, c.n)
			}
		})
	}
}

func TestPointerAligned(t *testing.T) {
	// At 0x1003 the aligned pointer starts at 0x1008, five bytes on.
	in := append(make([]byte, 5), 0x11, 0, 0, 0, 0, 0, 0, 0)
	r := reader{b: in, addr: 0x1003}
	if got := r.pointer(peAligned, bases{}); got != 0x11 || r.err != nil || r.off != len(in) {
		t.Errorf("aligned pointer = %#x (err %v, off %d), want 0x11 after %d bytes", got, r.err, r.off, len(in))
	}
	r = reader{b: in, addr: 0x1003}
	if r.skipPointer(peAligned); r.err != nil || r.off != len(in) {
		t.Errorf("skipPointer(aligned): err %v, off %d, want %d", r.err, r.off, len(in))
	}
}
