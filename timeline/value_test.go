package timeline

import "testing"

func TestShow(t *testing.T) {
	for _, c := range []struct {
		v    uint64
		want string
	}{
		{0, "0"},
		{50, "50"},
		{0x7fffffff, "2147483647"},
		{0x00000000fffffffd, "-3"},          // mov eax, -3: upper half zeroed
		{0xfffffffffffffffd, "-3"},          // sign-extended
		{0x0000000080000000, "-2147483648"}, // an unsigned int of 2^31 reads negative
		{0xffffffff00000005, "5"},           // upper half all ones: an int 5
		{0x100000000, "0x100000000"},        // beyond 32 bits: hex
		{0x7f651150e6d0, "0x7f651150e6d0"},  // a pointer
		{0xdeadbeef00000001, "0xdeadbeef00000001"},
	} {
		if got := Show(c.v); got != c.want {
			t.Errorf("Show(%#x) = %q, want %q", c.v, got, c.want)
		}
	}
}

func TestIntHex(t *testing.T) {
	for _, c := range []struct {
		v   uint64
		i   int32
		hex string
	}{
		{50, 50, "0x32"},
		{0xfffffffd, -3, "0xfffffffd"},
		{0x7f651150e6d0, 0x1150e6d0, "0x7f651150e6d0"},
		{0, 0, "0x0"},
	} {
		if i, h := Int(c.v), Hex(c.v); i != c.i || h != c.hex {
			t.Errorf("Int, Hex(%#x) = %d, %q, want %d, %q", c.v, i, h, c.i, c.hex)
		}
	}
}

func TestTimes(t *testing.T) {
	for _, c := range []struct {
		ns          int64
		offset, dur string
	}{
		{0, "0.000 ms", "0 ns"},
		{812, "0.000 ms", "812 ns"},
		{1250, "0.001 ms", "1.250 µs"},
		{999_999, "0.999 ms", "999.999 µs"},
		{20_312_746, "20.312 ms", "20.312 ms"},
		{1_520_000_000, "1520.000 ms", "1.520  s"},
		{3_723_000_000_000, "3723000.000 ms", "3723.000  s"},
		{-1_500_000, "-1.500 ms", "-1.500 ms"},
	} {
		if o, d := Offset(c.ns), Duration(c.ns); o != c.offset || d != c.dur {
			t.Errorf("Offset, Duration(%d) = %q, %q, want %q, %q", c.ns, o, d, c.offset, c.dur)
		}
	}
}
