package unwind

import (
	"encoding/binary"
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"
)

// libcPath is the system C library the tests read as a real-world module.
const libcPath = "/lib/x86_64-linux-gnu/libc.so.6"

// buildC compiles testdata/src with gcc -O2 and extra flags into the test's
// temporary directory and returns the executable's path. Tests that need
// real ELF files skip when gcc is missing.
func buildC(t *testing.T, src string, flags ...string) string {
	t.Helper()
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc not found")
	}
	out := filepath.Join(t.TempDir(), "prog")
	args := append([]string{"-O2", "-o", out, filepath.Join("testdata", src)}, flags...)
	if b, err := exec.Command(gcc, args...).CombinedOutput(); err != nil {
		t.Fatalf("gcc %v: %v\n%s", args, err, b)
	}
	return out
}

// region is a copy of target memory at addr; its read is a Memory that
// fails outside it.
type region struct {
	addr uint64
	data []byte
}

func (r region) read(addr uint64, buf []byte) error {
	if addr < r.addr || addr-r.addr > uint64(len(r.data)) || uint64(len(buf)) > uint64(len(r.data))-(addr-r.addr) {
		return fmt.Errorf("%#x+%d outside the snapshot %#x-%#x", addr, len(buf), r.addr, r.addr+uint64(len(r.data)))
	}
	copy(buf, r.data[addr-r.addr:])
	return nil
}

// words builds a region at addr holding little-endian 64-bit words.
func words(addr uint64, ws ...uint64) region {
	b := make([]byte, 8*len(ws))
	for i, w := range ws {
		binary.LittleEndian.PutUint64(b[8*i:], w)
	}
	return region{addr: addr, data: b}
}
