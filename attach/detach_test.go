package attach

import (
	"bytes"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/profile-dev/profile/instrument"
)

// textMatchesDisk compares every executable file mapping of pid with the
// file's bytes: a breakpoint left behind shows as a difference. It also
// reports any anonymous executable mapping (an out-of-line area left).
func textMatchesDisk(pid int) error {
	maps, err := instrument.ReadMaps(pid)
	if err != nil {
		return err
	}
	for _, m := range maps {
		if m.Exec() && !m.FileBacked() && m.Path == "" {
			return fmt.Errorf("anonymous executable mapping %#x-%#x left behind", m.Start, m.End)
		}
	}
	return compareFiles(pid, maps)
}

// compareFiles compares every executable file mapping with the file.
func compareFiles(pid int, maps []instrument.Mapping) error {
	mem, err := os.Open(fmt.Sprintf("/proc/%d/mem", pid))
	if err != nil {
		return err
	}
	defer mem.Close()
	for _, m := range maps {
		if !m.Exec() || !m.FileBacked() {
			continue // [vdso], [vsyscall], anonymous
		}
		f, err := os.Open(m.Path)
		if err != nil {
			return err
		}
		want := make([]byte, m.End-m.Start)
		n, _ := f.ReadAt(want, int64(m.Offset))
		f.Close()
		want = want[:n] // the last page may extend past the file
		got := make([]byte, n)
		if _, err := mem.ReadAt(got, int64(m.Start)); err != nil {
			return fmt.Errorf("read %s at %#x: %w", m.Path, m.Start, err)
		}
		if !bytes.Equal(got, want) {
			for i := range got {
				if got[i] != want[i] {
					return fmt.Errorf("%s: byte at %#x is %#x in memory, %#x on disk", m.Path, m.Start+uint64(i), got[i], want[i])
				}
			}
		}
	}
	return nil
}

func TestHundredAttachDetachCyclesLeaveNoTrace(t *testing.T) {
	if testing.Short() {
		t.Skip("long")
	}
	args := []string{"--threads", "4", "--seconds", "30"} // outlasts 100 cycles on a loaded machine
	ref, refOut := startLongrun(t, args...)
	target, out := startLongrun(t, args...)
	time.Sleep(300 * time.Millisecond)
	pid := target.Process.Pid
	if err := textMatchesDisk(pid); err != nil {
		t.Fatalf("before tracing: %v", err)
	}
	for i := 0; i < 100; i++ {
		r := attachFor(t, pid, 40*time.Millisecond)
		if r.Stats.Breakpoints == 0 {
			t.Fatalf("cycle %d: no breakpoints inserted", i)
		}
		if err := textMatchesDisk(pid); err != nil {
			target.Wait()
			t.Fatalf("after cycle %d: %v (target: %v, output %q)", i, err, target.ProcessState, out.String())
		}
	}
	if err := target.Wait(); err != nil {
		t.Fatalf("target after 100 cycles: %v", err)
	}
	ref.Wait()
	if got, want := checksum(t, out.String()), checksum(t, refOut.String()); got != want {
		t.Fatalf("checksum %s, untraced %s", got, want)
	}
}
