package attach

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/profile-dev/profile/instrument/unwind"
	"github.com/profile-dev/profile/internal/workload"
)

// TestCFICacheByFile: a file's call-frame information is parsed once and
// placed anew for each mapping; a file changed in place is parsed again.
func TestCFICacheByFile(t *testing.T) {
	exe, err := workload.Path("recursion")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "copy")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	c := cfiCache{}
	a, err := c.load(path, 0x1000, 0x1000, 0x100000000)
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.load(path, 0x7000_0000_0000, 0x7000_0000_0000, 0x7000_1000_0000)
	if err != nil {
		t.Fatal(err)
	}
	if len(c) != 1 {
		t.Fatalf("%d entries after two loads of one file, want 1", len(c))
	}
	if a.Bias() != 0x1000 || b.Bias() != 0x7000_0000_0000 {
		t.Errorf("biases %#x and %#x, want 0x1000 and 0x700000000000", a.Bias(), b.Bias())
	}
	if a.Contains(0x7000_0000_0000) || !b.Contains(0x7000_0000_0000) || b.Contains(0x1000) {
		t.Error("a placement covers the other's addresses")
	}
	// The same FDEs either way: the workload's code has one at its
	// link-time address.
	pc := uint64(0)
	for lo := uint64(0x1000); lo < 0x10000000 && pc == 0; lo += 0x10 {
		if _, _, ok := a.Range(lo); ok {
			pc = lo
		}
	}
	if pc == 0 {
		t.Fatal("no FDE in the workload's first 256 MiB")
	}
	alo, ahi, _ := a.Range(pc)
	if blo, bhi, ok := b.Range(pc); !ok || blo != alo || bhi != ahi {
		t.Errorf("FDE at %#x: [%#x, %#x) and [%#x, %#x) %v", pc, alo, ahi, blo, bhi, ok)
	}
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
	if _, err := c.load(path, 0x1000, 0x1000, 0x100000000); err != nil {
		t.Fatal(err)
	}
	if len(c) != 2 {
		t.Errorf("%d entries after the file changed, want 2", len(c))
	}
	// A file without call-frame information (a Go program: this test's)
	// is remembered as such: parsed once.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := c.load(self, 0, 0, 1); !errors.Is(err, unwind.ErrNoCFI) {
			t.Fatalf("the test binary: %v, want %v", err, unwind.ErrNoCFI)
		}
	}
	if len(c) != 3 {
		t.Errorf("%d entries after the test binary twice, want 3 (one of them empty)", len(c))
	}
}
