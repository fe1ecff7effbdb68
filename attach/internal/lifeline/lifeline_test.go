package lifeline

import (
	"encoding/binary"
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The main goroutine keeps the main thread, which the runtime never lets
// exit: the threads of onThread are others.
func init() { runtime.LockOSThread() }

// wordOf reads node i's word in mem.
func wordOf(mem []byte, i int) uint32 {
	return binary.LittleEndian.Uint32(mem[i*NodeSize+WordOffset:])
}

// onThread runs f on a thread of its own and lets the thread exit after:
// a goroutine that ends locked takes its thread with it.
func onThread(t *testing.T, f func() error) {
	t.Helper()
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		errc <- f()
	}()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}

// The kernel marks the words still tied when the thread that registered
// the line exits, and no other.
func TestMarkedWhenTheThreadExits(t *testing.T) {
	cases := []struct {
		name   string
		untie  []int
		close  bool
		marked []bool
	}{
		{"all tied", nil, false, []bool{true, true, true, true}},
		{"first untied", []int{3}, false, []bool{true, true, true, false}},
		{"middle untied", []int{1, 2}, false, []bool{true, false, false, true}},
		{"last untied", []int{0}, false, []bool{false, true, true, true}},
		{"closed", nil, true, []bool{false, false, false, false}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mem, err := unix.Mmap(-1, 0, 4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_ANONYMOUS)
			if err != nil {
				t.Fatal(err)
			}
			defer unix.Munmap(mem)
			node := func(i int) []byte { return mem[i*NodeSize : (i+1)*NodeSize] }
			var tid int
			onThread(t, func() error {
				l, err := Register()
				if err != nil {
					return err
				}
				tid = l.Tid()
				for i := range c.marked {
					l.Tie(node(i)) // tied last, first in the list
				}
				for _, i := range c.untie {
					l.Untie(node(i))
				}
				if c.close {
					l.Close()
				}
				return nil
			})
			// The runtime ends the thread after the goroutine: wait for it
			// to be gone (the kernel walks the list as it exits).
			task := fmt.Sprintf("/proc/self/task/%d", tid)
			for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
				if _, err := os.Stat(task); err != nil {
					break
				}
			}
			if _, err := os.Stat(task); err == nil {
				t.Fatalf("thread %d (pid %d) has not exited", tid, os.Getpid())
			}
			for i, m := range c.marked {
				want := uint32(tid)
				if m {
					want = OwnerDied
				}
				if got := wordOf(mem, i); got != want {
					t.Errorf("word %d: %#x, want %#x", i, got, want)
				}
			}
		})
	}
}
