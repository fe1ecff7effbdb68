package calib

import (
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/profile-dev/profile/attach/internal/stubasm"
)

// calib.bin is calibcode/calib.S built.
func TestBlobMatchesSource(t *testing.T) {
	stubasm.Blob(t, "calib.bin", "calibcode/calib.S", program, []string{"ld", "-static", "-nostdlib", "--build-id=none", "-o", "BIN", "OBJ"})
}

// The calibration program has the batches Cost reads by name:
// calib_outer_K and calib_inner_K for each K below Batches and no more,
// and the warm-up pair.
func TestProgramHasTheBatches(t *testing.T) {
	f, err := elf.NewFile(bytes.NewReader(program))
	if err != nil {
		t.Fatal(err)
	}
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) == elf.STT_FUNC {
			have[s.Name] = true
		}
	}
	for k := 0; k <= Batches; k++ {
		for _, name := range []string{fmt.Sprintf("calib_outer_%d", k), Inner(k)} {
			if have[name] != (k < Batches) {
				t.Errorf("calib.bin: function %s present %v, Batches is %d", name, have[name], Batches)
			}
		}
	}
	for _, name := range []string{"calib_warm", "calib_warm_inner"} {
		if !have[name] {
			t.Errorf("calib.bin: no function %s", name)
		}
	}
}

func TestWriter(t *testing.T) {
	for _, c := range []struct {
		name string
		pid  int
		ok   bool
	}{
		{"profile-calib-4242-1234567", 4242, true},
		{"profile-calib-1234567", 0, false}, // an older version's: no writer
		{"profile-calib-x-1", 0, false},
		{"profile-calib-0-1", 0, false},
		{"other-4242-1", 0, false},
	} {
		if pid, ok := writer(c.name); pid != c.pid || ok != c.ok {
			t.Errorf("writer(%q) = %d, %v; want %d, %v", c.name, pid, ok, c.pid, c.ok)
		}
	}
}

// A killed profiler's calibration program goes at the next calibration;
// a running profiler's, and a file not named by a writer, stay.
func TestRemoveStalePrograms(t *testing.T) {
	dir := t.TempDir()
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	stale := fmt.Sprintf("%s/%s%d-1", dir, prefix, gone.Process.Pid)
	live := fmt.Sprintf("%s/%s%d-2", dir, prefix, os.Getppid())
	other := dir + "/" + prefix + "123"
	for _, p := range []string{stale, live, other} {
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	removeStale(dir)
	for p, want := range map[string]bool{stale: false, live: true, other: true} {
		if _, err := os.Stat(p); (err == nil) != want {
			t.Errorf("%s: present %v, want %v", p, err == nil, want)
		}
	}
}
