package heal

import (
	"errors"
	"testing"
)

// fakeMem is a process's memory from lo on: the heal area and some text.
type fakeMem struct {
	lo  uint64
	mem []byte
}

var errUnmapped = errors.New("unmapped")

func (m *fakeMem) at(off int64, n int) ([]byte, error) {
	a := uint64(off)
	if a < m.lo || a+uint64(n) > m.lo+uint64(len(m.mem)) {
		return nil, errUnmapped
	}
	return m.mem[a-m.lo : a-m.lo+uint64(n)], nil
}

func (m *fakeMem) ReadAt(p []byte, off int64) (int, error) {
	b, err := m.at(off, len(p))
	if err != nil {
		return 0, err
	}
	return copy(p, b), nil
}

func (m *fakeMem) WriteAt(p []byte, off int64) (int, error) {
	b, err := m.at(off, len(p))
	if err != nil {
		return 0, err
	}
	return copy(b, p), nil
}

// TestMend: what a profiler's death leaves in a table, and what Mend puts
// back from outside: every int3 that cannot run, no byte of a complete
// patch, nothing through dead entries.
func TestMend(t *testing.T) {
	const base, text = 0x10000, 0x10000 + table + 0x1000
	orig := []byte{0x55, 0x48, 0x89, 0xe5, 0x41, 0x57, 0x41, 0x56} // push rbp; mov rbp, rsp; push r15; push r14
	jump := []byte{0xe9, 0x11, 0x22, 0x33, 0x44}
	type ent struct {
		at         int // offset in text
		live, tail bool
	}
	for _, tc := range []struct {
		name string
		now  []byte // text when the profiler died
		ents []ent
		want []byte // text after Mend
		put  int
	}{
		{"breakpoint", []byte{0xcc, 0x48, 0x89, 0xe5, 0x41, 0x57, 0x41, 0x56},
			[]ent{{0, true, false}}, orig, 1},
		{"breakpoint taken back", []byte{0xcc, 0x48, 0x89, 0xe5, 0x41, 0x57, 0x41, 0x56},
			[]ent{{0, false, false}}, []byte{0xcc, 0x48, 0x89, 0xe5, 0x41, 0x57, 0x41, 0x56}, 0},
		{"breakpoint listed, not written yet", orig, []ent{{0, true, false}}, orig, 0},
		{"two breakpoints", []byte{0xcc, 0x48, 0x89, 0xe5, 0xcc, 0x57, 0x41, 0x56},
			[]ent{{0, true, false}, {4, true, false}}, orig, 2},
		{"rewrite guarded", []byte{0xcc, 0x11, 0x22, 0xe5, 0x41, 0x57, 0x41, 0x56},
			[]ent{{4, true, true}, {3, true, true}, {2, true, true}, {1, true, true}, {0, true, false}}, orig, 5},
		{"rewrite complete, its entries still live",
			append(append([]byte(nil), jump...), 0x57, 0x41, 0x56),
			[]ent{{4, true, true}, {3, true, true}, {2, true, true}, {1, true, true}, {0, true, false}},
			append(append([]byte(nil), jump...), 0x57, 0x41, 0x56), 0},
		{"rewrite done, then a breakpoint after it",
			[]byte{0xe9, 0x11, 0x22, 0x33, 0x44, 0xcc, 0x41, 0x56},
			[]ent{{4, false, true}, {3, false, true}, {2, false, true}, {1, false, true}, {0, false, false}, {5, true, false}},
			[]byte{0xe9, 0x11, 0x22, 0x33, 0x44, 0x57, 0x41, 0x56}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &fakeMem{lo: base, mem: make([]byte, text-base+0x1000)}
			copy(m.mem[text-base:], tc.now)
			var ents []Entry
			for _, e := range tc.ents {
				ents = append(ents, Entry{text + uint64(e.at), orig[e.at], e.live, e.tail})
			}
			if err := WriteTable(m, base, ents); err != nil {
				t.Fatal(err)
			}
			put, err := Mend(m, base)
			if err != nil {
				t.Fatal(err)
			}
			if got := m.mem[text-base : text-base+uint64(len(tc.want))]; string(got) != string(tc.want) || put != tc.put {
				t.Errorf("text % x, %d bytes put back; want % x, %d", got, put, tc.want, tc.put)
			}
		})
	}
	// An area that is gone (the process exec'd or exited): an error, no
	// write.
	if _, err := Mend(&fakeMem{lo: 0x90000, mem: make([]byte, 16)}, base); err == nil {
		t.Error("Mend of an unmapped area: no error")
	}
}
