package attach

import (
	"bytes"
	"os"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/profile-dev/profile/attach/internal/ptrace"
)

// TestPendingOverlay: reads see the pending writes over memory, the later
// of two overlapping writes winning, a write across a page seen from
// either page.
func TestPendingOverlay(t *testing.T) {
	const pg = ptrace.PageSize
	p := newPending()
	p.put(0x10000+10, []byte{1, 2, 3, 4})
	p.put(0x10000+12, []byte{9, 9})
	p.put(0x10000+pg-2, []byte{5, 6, 7, 8}) // across pages
	cases := []struct {
		name string
		addr uint64
		n    int
		want []byte
	}{
		{"later wins", 0x10000 + 9, 6, []byte{0, 1, 2, 9, 9, 0}},
		{"part of a write", 0x10000 + 11, 1, []byte{2}},
		{"untouched", 0x10000 + 100, 3, []byte{0, 0, 0}},
		{"across from the first page", 0x10000 + pg - 3, 3, []byte{0, 5, 6}},
		{"across from the second page", 0x10000 + pg, 3, []byte{7, 8, 0}},
		{"the whole write", 0x10000 + pg - 2, 4, []byte{5, 6, 7, 8}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			buf := make([]byte, c.n)
			p.overlay(c.addr, buf)
			if !bytes.Equal(buf, c.want) {
				t.Errorf("overlay at %#x = %v, want %v", c.addr, buf, c.want)
			}
		})
	}
}

// TestFlushPending writes a batch into this process's own memory, as into
// a target's: text pages read-only (written through /proc/PID/mem),
// an area writable; reads during the batch see it, a direct write made
// after a pending one over the same bytes stays, and nothing but the
// written bytes changes.
func TestFlushPending(t *testing.T) {
	const pg = ptrace.PageSize
	text := mapPages(t, 4, unix.PROT_READ|unix.PROT_WRITE)
	code := mapPages(t, 2, unix.PROT_READ|unix.PROT_WRITE)
	for i := range text {
		text[i] = byte(i * 7)
	}
	orig := bytes.Clone(text)
	code[100] = 0xaa // written before the batch, by no write of it
	if err := unix.Mprotect(text, unix.PROT_READ|unix.PROT_EXEC); err != nil {
		t.Fatal(err)
	}
	tb, ab := addrOf(text), addrOf(code)
	pid := os.Getpid()
	as := newSpace()
	defer as.closeText()
	as.areas = []*area{{base: ab, size: 2 * pg}}
	as.sole = true
	as.batch = newPending()

	want := bytes.Clone(orig)
	patch := func(off uint64, b []byte) {
		if !as.putText(tb+off, b) {
			t.Fatalf("a patch at +%#x of %d bytes not held", off, len(b))
		}
		copy(want[off:], b)
	}
	patch(16, []byte{0xe9, 1, 2, 3, 4})
	patch(pg+40, []byte{0xe9, 5, 6, 7, 8})
	patch(3*pg+8, []byte{0xeb, 0x10})
	if as.putText(tb+pg-2, []byte{0xe9, 0, 0, 0, 0}) {
		t.Errorf("a patch across two pages was held: it must go in guarded, not with its pages")
	}
	// Read back before the flush: the pending bytes, memory elsewhere.
	got := make([]byte, 8)
	if err := as.readText(pid, tb+14, got); err != nil {
		t.Fatal(err)
	}
	if w := want[14:22]; !bytes.Equal(got, w) {
		t.Errorf("readText before the flush = %v, want %v", got, w)
	}
	// A direct write after a pending one over the same bytes.
	patch(pg+40, []byte{0x0f, 0x0b})
	if err := as.pokeText(pid, tb+pg+41, []byte{0x90}); err != nil {
		t.Fatal(err)
	}
	want[pg+41] = 0x90
	if !bytes.Equal(text, func() []byte { b := bytes.Clone(orig); b[pg+41] = 0x90; return b }()) {
		t.Errorf("text changed before the flush but for the direct write")
	}
	// Trampolines with a gap between them.
	if err := as.writeCode(pid, ab+64, []byte{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	if err := as.writeCode(pid, ab+80, []byte{4, 5}); err != nil {
		t.Fatal(err)
	}
	if err := as.writeCode(pid, ab+pg-1, []byte{6, 7}); err != nil {
		t.Fatal(err)
	}
	if code[64] != 0 {
		t.Errorf("a trampoline written before the flush")
	}
	if err := as.flushPending(pid); err != nil {
		t.Fatal(err)
	}
	if as.batch != nil {
		t.Errorf("the batch stays after its flush")
	}
	if !bytes.Equal(text, want) {
		for i := range text {
			if text[i] != want[i] {
				t.Fatalf("text at +%#x = %#x after the flush, want %#x", i, text[i], want[i])
			}
		}
	}
	wantArea := make([]byte, 2*pg)
	wantArea[100] = 0xaa
	copy(wantArea[64:], []byte{1, 2, 3})
	copy(wantArea[80:], []byte{4, 5})
	copy(wantArea[pg-1:], []byte{6, 7})
	if !bytes.Equal(code, wantArea) {
		t.Errorf("the area after the flush differs from its trampolines")
	}
}

func mapPages(t *testing.T, n int, prot int) []byte {
	t.Helper()
	b, err := unix.Mmap(-1, 0, n*ptrace.PageSize, prot, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Munmap(b) })
	return b
}

func addrOf(b []byte) uint64 { return uint64(uintptr(unsafe.Pointer(&b[0]))) }
