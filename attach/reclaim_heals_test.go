package attach

import (
	"errors"
	"slices"
	"testing"

	"github.com/profile-dev/profile/attach/internal/heal"
	"github.com/profile-dev/profile/instrument"
)

// chunks is memory of heal.Size chunks from base: each starts with the
// bytes its entry gives (nil: zeros); a read past them fails.
type chunks struct {
	base  uint64
	heads [][]byte
}

func (c chunks) Read(a uint64, b []byte) error {
	k := (a - c.base) / heal.Size
	if a < c.base || k >= uint64(len(c.heads)) {
		return errUnmapped
	}
	clear(b)
	copy(b, c.heads[k][min(a-c.base-k*heal.Size, uint64(len(c.heads[k]))):])
	return nil
}

var errUnmapped = errors.New("unmapped")

// Heal areas merged into one mapping, found from its start: a zero area
// (a profiler killed as its mmap returned) below a written one no longer
// hides it (a stress run left a 16 MB mapping after its final clean
// attach).
func TestHealsInMergedMapping(t *testing.T) {
	const base = 0x7f0000000000
	h := heal.Code(0x1000)
	other := []byte{0x0f, 0x05, 0xcc}
	for _, c := range []struct {
		name  string
		heads [][]byte
		want  []int // chunks found as heal areas
		rest  int   // chunk where what follows them begins
	}{
		{"one heal area", [][]byte{h}, []int{0}, 1},
		{"two side by side", [][]byte{h, h}, []int{0, 1}, 2},
		{"zeros below a heal area", [][]byte{nil, h}, []int{1}, 2},
		{"zeros, heal area, zeros, heal area", [][]byte{nil, h, nil, h}, []int{1, 3}, 4},
		{"heal area, then zeros", [][]byte{h, nil}, []int{0}, 1},
		{"zeros alone", [][]byte{nil}, nil, 0},
		{"two zero areas below a heal area", [][]byte{nil, nil, h}, []int{2}, 3},
		{"zeros, then something else", [][]byte{nil, other}, nil, 0},
		{"something else below a heal area", [][]byte{other, h}, nil, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			mem := chunks{base, c.heads}
			got, rest := healsIn(mem, base, base+uint64(len(c.heads))*heal.Size)
			var want []uint64
			for _, k := range c.want {
				want = append(want, base+uint64(k)*heal.Size)
			}
			if !slices.Equal(got, want) || rest != base+uint64(c.rest)*heal.Size {
				t.Errorf("heal areas %x, rest at %x; want %x, %x", got, rest, want, base+uint64(c.rest)*heal.Size)
			}
		})
	}
}

func TestFileOffset(t *testing.T) {
	maps := []instrument.Mapping{
		{Start: 0x1000, End: 0x3000, Offset: 0x5f000, Path: "/usr/bin/redis-check-rdb"},
		{Start: 0x3000, End: 0x4000},
	}
	for _, tc := range []struct {
		addr uint64
		want string
	}{
		{0x1f00, "redis-check-rdb+0x5ff00"},
		{0x1000, "redis-check-rdb+0x5f000"},
		{0x3010, "no file's"},
		{0x9000, "no file's"},
	} {
		if got := fileOffset(maps, tc.addr); got != tc.want {
			t.Errorf("fileOffset(%#x) = %q, want %q", tc.addr, got, tc.want)
		}
	}
}
