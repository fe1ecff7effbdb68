package instrument

import (
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Module.Sweep finds in every function of a real library the direct
// branches into its first bytes that GNU objdump's disassembly shows:
// libc has thousands of functions, hand-written assembly among them, and
// some that branch back into their first bytes.
func TestSweepMatchesObjdump(t *testing.T) {
	const libc = "/lib/x86_64-linux-gnu/libc.so.6"
	if _, err := os.Stat(libc); err != nil {
		t.Skipf("%s: %v", libc, err)
	}
	out, err := exec.Command("objdump", "-d", "--no-show-raw-insn", libc).Output()
	if err != nil {
		t.Skipf("objdump: %v", err)
	}
	m, err := Open(libc)
	if err != nil {
		t.Fatal(err)
	}
	m.Sweep(2, func(Symbol) bool { return true })
	// Every direct jump, conditional jump, loop and call: address, target.
	direct := regexp.MustCompile(`^\s*([0-9a-f]+):\s+(?:bnd\s+)?(?:j[a-z]+|call|loop[a-z]*|xbegin)\s+([0-9a-f]+) <`)
	want := map[uint64][]EntryBranch{}
	for _, line := range strings.Split(string(out), "\n") {
		f := direct.FindStringSubmatch(line)
		if f == nil {
			continue
		}
		from, _ := strconv.ParseUint(f[1], 16, 64)
		to, _ := strconv.ParseUint(f[2], 16, 64)
		sym, ok := m.Lookup(from)
		if ok && to > sym.Value && to < sym.Value+EntrySpan {
			want[sym.Value] = append(want[sym.Value], EntryBranch{From: int(from - sym.Value), To: int(to - sym.Value)})
		}
	}
	swept, found := 0, 0
	for _, sym := range m.Symbols {
		got, ok, err := m.Swept(sym)
		if !ok || err != nil {
			continue
		}
		swept++
		found += len(got)
		if !slices.Equal(got, want[sym.Value]) {
			t.Errorf("%s: swept %v, objdump %v", sym.Name, got, want[sym.Value])
		}
	}
	if swept < 1000 || found == 0 {
		t.Errorf("%d functions swept, %d branches into first bytes: not the library this test wants", swept, found)
	}
}
