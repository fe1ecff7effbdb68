package guard

import (
	"fmt"
	"os"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/profile-dev/profile/attach/internal/heal"
)

// fakeTarget is a heal area with one live breakpoint, and its "text", in
// this process's own memory (anonymous mappings: Go's collector never
// moves them): the watcher, this test binary run again, mends it through
// /proc/PID/mem as it would a target's.
type fakeTarget struct {
	area, text []byte
}

func newFakeTarget(t *testing.T) *fakeTarget {
	t.Helper()
	area, err := unix.Mmap(-1, 0, heal.TableSize(1), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	text, err := unix.Mmap(-1, 0, 4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Munmap(area); unix.Munmap(text) })
	copy(text, []byte{0xcc, 0x48, 0x89, 0xe5})
	mem, err := os.OpenFile(fmt.Sprintf("/proc/%d/mem", os.Getpid()), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	if err := heal.WriteTable(mem, addr(area), []heal.Entry{{Addr: addr(text), Orig: 0x55, Live: true}}); err != nil {
		t.Fatal(err)
	}
	return &fakeTarget{area, text}
}

func addr(b []byte) uint64 { return uint64(uintptr(unsafe.Pointer(&b[0]))) }

// waitGone waits for the watcher to exit (it is ours to reap here).
func waitGone(t *testing.T, g *Guard) {
	t.Helper()
	done := make(chan error, 1)
	go func() { _, err := g.proc.Wait(); done <- err }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		g.proc.Kill()
		t.Fatal("the watcher did not end within 10 s")
	}
}

// TestWatcher: the socket's end without the clean word is the profiler's
// death: the watcher mends what it watches, and only that; a clean end
// mends nothing.
func TestWatcher(t *testing.T) {
	for _, tc := range []struct {
		name          string
		forget, clean bool
		want          byte
	}{
		{"profiler dies", false, false, 0x55},
		{"process forgotten, then the profiler dies", true, false, 0xcc},
		{"clean end", false, true, 0xcc},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ft := newFakeTarget(t)
			g, err := Start()
			if err != nil {
				t.Fatal(err)
			}
			id, err := g.Watch(os.Getpid(), addr(ft.area))
			if err != nil {
				t.Fatal(err)
			}
			if tc.forget {
				if err := g.Forget(id); err != nil {
					t.Fatal(err)
				}
			}
			if tc.clean {
				g.send(opDone, 0, 0, 0, 0, nil)
			}
			unix.Close(g.fd) // as a death would
			waitGone(t, g)
			if ft.text[0] != tc.want {
				t.Errorf("first byte %#x after the watcher, want %#x", ft.text[0], tc.want)
			}
		})
	}
}
