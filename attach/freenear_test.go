package attach

import (
	"testing"

	"github.com/profile-dev/profile/instrument"
)

func TestFreeNear(t *testing.T) {
	const mib = 1 << 20
	m := func(lo, hi uint64) instrument.Mapping { return instrument.Mapping{Start: lo, End: hi} }
	cases := []struct {
		name string
		maps []instrument.Mapping
		addr uint64
		want uint64
		ok   bool
	}{
		{"gap right above the code", []instrument.Mapping{m(0x400000, 0x500000), m(0x900000, 0xa00000)}, 0x450000,
			0x501000, true},
		{"leftover areas fill the neighbourhood: the next gap",
			[]instrument.Mapping{m(0x10000, 0x10100000), m(0x10101000, 0x20000000), m(0x20100000, 0x30000000)}, 0x10050000,
			0x30001000, true},
		{"nothing within 2 GiB", []instrument.Mapping{m(0x10000, 0x200000000)}, 0x100000000, 0, false},
	}
	for _, c := range cases {
		got, ok := freeNear(c.maps, c.addr, mib)
		if got != c.want || ok != c.ok {
			t.Errorf("%s: freeNear = %#x, %v; want %#x, %v", c.name, got, ok, c.want, c.ok)
		}
	}
}
