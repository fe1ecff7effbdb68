package ptrace

import (
	"bytes"
	"os"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// PokeWhole writes within a page, through the process's memory file (here
// our own), and refuses a write that crosses a page, writing nothing.
func TestPokeWhole(t *testing.T) {
	page := PageSize
	mem, base, text := ownPages(t, 2)
	patch := []byte{0xe9, 1, 2, 3, 4}
	cases := []struct {
		name string
		off  int
		ok   bool
	}{
		{"page start", 0, true},
		{"inside", 100, true},
		{"ends at the page's end", page - len(patch), true},
		{"crosses", page - 2, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			clear(mem)
			err := text.PokeWhole(base+uint64(c.off), patch)
			got := mem[c.off : c.off+len(patch)]
			switch {
			case c.ok && err != nil:
				t.Fatalf("PokeWhole: %v", err)
			case c.ok && !bytes.Equal(got, patch):
				t.Errorf("wrote % x, want % x", got, patch)
			case !c.ok && err == nil:
				t.Error("a write across pages was not refused")
			case !c.ok && !bytes.Equal(mem, make([]byte, len(mem))):
				t.Error("a refused write changed memory")
			}
		})
	}
}

// PokePages writes whole pages only; ReadMemv reads pieces back, many to
// a call, in order; WriteMemv writes pieces at their addresses.
func TestPages(t *testing.T) {
	mem, base, text := ownPages(t, 3)
	for _, c := range []struct {
		name    string
		off, n  int
		refused bool
	}{
		{"two pages", PageSize, 2 * PageSize, false},
		{"not at a page", 8, PageSize, true},
		{"part of a page", 0, PageSize - 8, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			clear(mem)
			buf := bytes.Repeat([]byte{0x5a}, c.n)
			err := text.PokePages(base+uint64(c.off), buf)
			if c.refused {
				if err == nil || !bytes.Equal(mem, make([]byte, len(mem))) {
					t.Errorf("PokePages of %d bytes at +%d: err %v, memory changed: %v", c.n, c.off, err, !bytes.Equal(mem, make([]byte, len(mem))))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(mem[c.off:c.off+c.n], buf) || !bytes.Equal(mem[:c.off], make([]byte, c.off)) {
				t.Errorf("PokePages wrote other bytes than its pages")
			}
		})
	}
	for i := range mem {
		mem[i] = byte(i/PageSize + 1)
	}
	bufs := [][]byte{make([]byte, PageSize), make([]byte, PageSize)}
	if err := ReadMemv(os.Getpid(), []uint64{base + 2*PageSize, base}, bufs); err != nil {
		t.Fatal(err)
	}
	if bufs[0][0] != 3 || bufs[1][PageSize-1] != 1 {
		t.Errorf("ReadMemv read the pages out of order: %d, %d", bufs[0][0], bufs[1][PageSize-1])
	}
	if err := WriteMemv(os.Getpid(), []uint64{base + 10, base + PageSize - 1, base + 40}, [][]byte{{1, 2}, {3, 4}, nil}); err != nil {
		t.Fatal(err)
	}
	if got := []byte{mem[10], mem[11], mem[PageSize-1], mem[PageSize], mem[40]}; !bytes.Equal(got, []byte{1, 2, 3, 4, 1}) {
		t.Errorf("WriteMemv wrote %v, want [1 2 3 4 1]", got)
	}
}

// ownPages maps n pages of this process and opens its memory, as a
// target's: the pages, their address, the open memory.
func ownPages(t *testing.T, n int) ([]byte, uint64, *Text) {
	t.Helper()
	mem, err := unix.Mmap(-1, 0, n*PageSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Munmap(mem) })
	text, err := OpenText(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { text.Close() })
	return mem, uint64(uintptr(unsafe.Pointer(&mem[0]))), text
}
