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
	page := os.Getpagesize()
	mem, err := unix.Mmap(-1, 0, 2*page, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(mem)
	text, err := OpenText(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	defer text.Close()
	base := uint64(uintptr(unsafe.Pointer(&mem[0])))
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
