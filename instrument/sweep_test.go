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
	// The same library unswept: Swept reads each function's branches
	// from its bytes as it is asked, and keeps them.
	lazy, err := Open(libc)
	if err != nil {
		t.Fatal(err)
	}
	swept, found := 0, 0
	for _, sym := range m.Symbols {
		s, ok := m.swept[sym.Value]
		if !ok || s.err != nil {
			continue
		}
		swept++
		found += len(s.branches)
		if !slices.Equal(s.branches, want[sym.Value]) {
			t.Errorf("%s: swept %v, objdump %v", sym.Name, s.branches, want[sym.Value])
		}
		code, err := lazy.ReadAt(sym.Value, int(sym.Size))
		if err != nil {
			t.Fatalf("%s: %v", sym.Name, err)
		}
		if got, err := lazy.Swept(sym, code); err != nil || !slices.Equal(got, s.branches) {
			t.Errorf("%s: unswept, read from its bytes %v (%v), swept %v", sym.Name, got, err, s.branches)
		}
		if _, ok := lazy.swept[sym.Value]; !ok {
			t.Errorf("%s: read from its bytes, not kept", sym.Name)
		}
	}
	if swept < 1000 || found == 0 {
		t.Errorf("%d functions swept, %d branches into first bytes: not the library this test wants", swept, found)
	}
}

// A plan of a function's exits that reads all its instructions gives the
// same entry branches as EntryBranches (ExitFunc.Swept), for every
// function of libc whose walk completes; a function its walk left early
// gives none. The sweep then reads only the functions it was not given
// (KeepSwept): a kept function keeps what it was given.
func TestExitWalkSweeps(t *testing.T) {
	const libc = "/lib/x86_64-linux-gnu/libc.so.6"
	if _, err := os.Stat(libc); err != nil {
		t.Skipf("%s: %v", libc, err)
	}
	m, err := Open(libc)
	if err != nil {
		t.Fatal(err)
	}
	given, notGiven := 0, 0
	for _, sym := range m.Symbols {
		code, err := m.ReadAt(sym.Value, int(sym.Size))
		if err != nil || sym.Size == 0 {
			continue
		}
		var got []EntryBranch
		called := false
		PlanExits(ExitFunc{Code: code, EntryEnd: EntryEnd(code), Addr: sym.Value,
			IsEntry: func(uint64) bool { return false }, Swept: func(b []EntryBranch) { got, called = b, true }})
		if !called {
			notGiven++
			continue
		}
		given++
		want, err := EntryBranches(code)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%s: the exit walk gave %v, EntryBranches %v (%v)", sym.Name, got, want, err)
		}
	}
	if given < 1000 || notGiven == 0 {
		t.Errorf("%d functions walked whole, %d left early: want thousands and some", given, notGiven)
	}
	sym := m.Symbols[len(m.Symbols)/2]
	kept := []EntryBranch{{From: 1, To: 2}}
	m.KeepSwept(sym.Value, kept, nil)
	m.Sweep(2, func(Symbol) bool { return true })
	if got, _ := m.Swept(sym, nil); !slices.Equal(got, kept) {
		t.Errorf("%s: swept again: %v, kept %v", sym.Name, got, kept)
	}
	if len(m.swept) < 1000 {
		t.Errorf("the sweep kept %d functions: want the others too", len(m.swept))
	}
}
