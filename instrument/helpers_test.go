package instrument

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// libcPath is the system C library the tests read as a real-world module.
const libcPath = "/lib/x86_64-linux-gnu/libc.so.6"

// buildC compiles testdata/src with gcc and extra flags into the test's
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

func openModule(t *testing.T, path string) *Module {
	t.Helper()
	m, err := Open(path)
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	return m
}

// symbolNamed returns the module's symbol with the given name.
func symbolNamed(t *testing.T, m *Module, name string) Symbol {
	t.Helper()
	for _, s := range m.Symbols {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("%s: no symbol %q", m.Path, name)
	return Symbol{}
}
