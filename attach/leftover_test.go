package attach

import (
	"bytes"
	"testing"

	"github.com/profile-dev/profile/attach/internal/heal"
)

// rewriteEntries is the heal table block heal.Area.Rewrite lists for a
// rewrite of the bytes at addr whose old bytes are old: last byte first,
// the first byte (the guard) last.
func rewriteEntries(addr uint64, old []byte, live bool) []heal.Entry {
	var out []heal.Entry
	for k := len(old) - 1; k >= 0; k-- {
		out = append(out, heal.Entry{Addr: addr + uint64(k), Orig: old[k], Live: live, Tail: k > 0})
	}
	return out
}

// What a later attach writes back of a killed profiler's heal table, on
// the bytes of redis's hi_sdsull2str, whose first instruction is
// movabs $0xcccccccccccccccd,%r10: three of its first five bytes are 0xcc
// and are no guards (a redis under attach+SIGKILL cycles got 0x13 at its
// fourth byte, a byte of a dead profiler's jump, when they were taken for
// guards).
func TestHealUndo(t *testing.T) {
	const fn, other = 0x1000, 0x2000
	orig := []byte{0x49, 0xba, 0xcd, 0xcc, 0xcc}
	patch := []byte{0xe9, 0x78, 0x56, 0x13, 0xf0}
	guarded := func(tail []byte) []byte { return append([]byte{0xcc}, tail[1:]...) }
	bp := func(live bool) heal.Entry { return heal.Entry{Addr: other, Orig: 0x55, Live: live} }
	for _, c := range []struct {
		name        string
		fn, otherAt []byte // memory at fn and the byte at other before
		table       []heal.Entry
		want        []byte // memory at fn after
		wantOther   byte
		blocks      int
	}{
		{"patch taken out, killed before its entries went dead", orig, []byte{0x55}, rewriteEntries(fn, patch, true), orig, 0x55, 0},
		{"patch put in, killed before its entries went dead", patch, []byte{0x55}, rewriteEntries(fn, orig, true), patch, 0x55, 0},
		{"killed taking the patch out, guard and new tail in", guarded(orig), []byte{0x55}, rewriteEntries(fn, patch, true), patch, 0x55, 1},
		{"killed taking the patch out, guard in, old tail", guarded(patch), []byte{0x55}, rewriteEntries(fn, patch, true), patch, 0x55, 1},
		{"killed putting the patch in, guard and new tail in", guarded(patch), []byte{0x55}, rewriteEntries(fn, orig, true), orig, 0x55, 1},
		{"finished rewrite, entries dead", orig, []byte{0x55}, rewriteEntries(fn, patch, false), orig, 0x55, 0},
		{"live breakpoint", orig, []byte{0xcc}, []heal.Entry{bp(true)}, orig, 0x55, 1},
		{"healed breakpoint", orig, []byte{0x55}, []heal.Entry{bp(true)}, orig, 0x55, 0},
		{"dead breakpoint", orig, []byte{0xcc}, []heal.Entry{bp(false)}, orig, 0xcc, 0},
		{"breakpoint then a rewrite after it", guarded(orig), []byte{0xcc}, append([]heal.Entry{bp(true)}, rewriteEntries(fn, patch, true)...), patch, 0x55, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			mem := map[uint64]byte{other: c.otherAt[0]}
			for k, b := range c.fn {
				mem[fn+uint64(k)] = b
			}
			byteAt := func(a uint64) (byte, bool) { b, ok := mem[a]; return b, ok }
			blocks := healUndo(c.table, byteAt)
			for _, b := range blocks {
				for _, ent := range b {
					mem[ent.Addr] = ent.Orig
				}
			}
			got := make([]byte, len(c.fn))
			for k := range got {
				got[k] = mem[fn+uint64(k)]
			}
			if !bytes.Equal(got, c.want) || mem[other] != c.wantOther || len(blocks) != c.blocks {
				t.Errorf("function % x, other %#x, %d blocks; want % x, %#x, %d", got, mem[other], len(blocks), c.want, c.wantOther, c.blocks)
			}
		})
	}
}
