package heal

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestHealAgain runs the handler in a program of its own (testdata/
// healagain.c installs it as the engine installs it in a target, with one
// table entry): an int3 of ours is put back at its trap and the call goes
// on, and so is one written again after that first heal. A handler that
// healed only once rewound the thread onto that int3 for ever.
func TestHealAgain(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("no gcc")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "healagain")
	if out, err := exec.Command("gcc", "-O1", "-o", bin, "testdata/healagain.c").CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	blob := filepath.Join(dir, "heal.bin")
	if err := os.WriteFile(blob, Code(0)[:table], 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, blob, fmt.Sprintf("%#x", count), fmt.Sprintf("%#x", table), fmt.Sprintf("%#x", restorer))
	out, err := cmd.CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "ok" {
		t.Fatalf("healagain: %v: %s", err, out)
	}
}
