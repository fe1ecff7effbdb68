// Package proctext checks, for tests, that a process's code in memory is
// the code of its files: a breakpoint left behind shows as a difference,
// an injected area as an anonymous executable mapping.
package proctext

import (
	"bytes"
	"debug/elf"
	"fmt"
	"os"

	"github.com/profile-dev/profile/instrument"
)

// MatchesDisk reports the first difference between pid's executable file
// mappings and their files, every byte of them, or else any anonymous
// executable mapping.
func MatchesDisk(pid int) error {
	if err := compareText(pid, false); err != nil {
		return err
	}
	anon, err := AnonExec(pid)
	if err != nil {
		return err
	}
	if len(anon) > 0 {
		return fmt.Errorf("anonymous executable mapping %s left behind", anon[0])
	}
	return nil
}

// FileText compares the code of every executable file mapping of pid with
// the file: the bytes of the file's PT_LOAD segments. The tail of a last
// page past its segment is not code; a profiler killed while it kept its
// injection code there may leave it behind.
func FileText(pid int) error { return compareText(pid, true) }

// FileBytes compares every byte of every executable file mapping of pid
// with the file, the tail of a last page too; anonymous mappings are not
// looked at.
func FileBytes(pid int) error { return compareText(pid, false) }

func compareText(pid int, codeOnly bool) error {
	maps, err := instrument.ReadMaps(pid)
	if err != nil {
		return err
	}
	mem, err := os.Open(fmt.Sprintf("/proc/%d/mem", pid))
	if err != nil {
		return err
	}
	defer mem.Close()
	for _, m := range maps {
		if !m.Exec() || !m.FileBacked() {
			continue
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
		if codeOnly {
			maskNonCode(m, got, want)
		}
		if i := firstDiff(got, want); i >= 0 {
			return fmt.Errorf("%s: byte at %#x is %#x in memory, %#x on disk", m.Path, m.Start+uint64(i), got[i], want[i])
		}
	}
	return nil
}

// maskNonCode makes got equal want outside the file's PT_LOAD segments
// (file offsets m.Offset onwards). A file that is not ELF is compared whole.
func maskNonCode(m instrument.Mapping, got, want []byte) {
	f, err := elf.Open(m.Path)
	if err != nil {
		return
	}
	defer f.Close()
	masked := append([]byte(nil), want...)
	for _, p := range f.Progs {
		if p.Type != elf.PT_LOAD {
			continue
		}
		lo := max(p.Off, m.Offset) - m.Offset
		hi := min(p.Off+p.Filesz, m.Offset+uint64(len(got)))
		if hi > m.Offset && lo < hi-m.Offset {
			copy(masked[lo:hi-m.Offset], got[lo:hi-m.Offset])
		}
	}
	copy(got, masked)
}

// AnonExec lists pid's anonymous executable mappings as lo-hi ranges
// ([vdso] and the like are named, not anonymous).
func AnonExec(pid int) ([]string, error) {
	maps, err := instrument.ReadMaps(pid)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, m := range maps {
		if m.Exec() && m.Path == "" {
			out = append(out, fmt.Sprintf("%#x-%#x", m.Start, m.End))
		}
	}
	return out, nil
}

func firstDiff(a, b []byte) int {
	if bytes.Equal(a, b) {
		return -1
	}
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return -1
}

// Memfds counts pid's mappings of memfds named name.
func Memfds(pid int, name string) (int, error) {
	maps, err := instrument.ReadMaps(pid)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, m := range maps {
		if m.Path == "/memfd:"+name+" (deleted)" || m.Path == "/memfd:"+name {
			n++
		}
	}
	return n, nil
}
