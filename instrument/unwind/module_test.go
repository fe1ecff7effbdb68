package unwind

import (
	"bytes"
	"debug/elf"
	"errors"
	"os"
	"reflect"
	"testing"

	"github.com/profile-dev/profile/instrument"
)

func TestLoadRealFiles(t *testing.T) {
	cases := []struct {
		name       string
		path       func(t *testing.T) string
		covered    []string // functions whose whole code must be covered by one FDE
		minChecked int      // at least this many function entries checked
		noRA       []string // functions whose entry has no return address (process entry points)
	}{
		{"libc", func(t *testing.T) string {
			if _, err := os.Stat(libcPath); err != nil {
				t.Skip(err)
			}
			return libcPath
		}, []string{"qsort", "malloc", "clock_nanosleep", "nanosleep", "sleep"}, 1500, nil},
		{"gcc -O2 pie", func(t *testing.T) string {
			return buildC(t, "chain.c", "-fomit-frame-pointer")
		}, []string{"main", "a", "b", "c", "cmp", "dump"}, 6, []string{"_start"}},
		{"gcc -O2 no-pie", func(t *testing.T) string {
			return buildC(t, "chain.c", "-fomit-frame-pointer", "-no-pie")
		}, []string{"main", "a", "b", "c", "cmp", "dump"}, 6, []string{"_start"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := c.path(t)
			m, err := Load(path, 0, 0, ^uint64(0))
			if err != nil {
				t.Fatal(err)
			}
			starts := checkAgainstHdr(t, path, m)
			syms, err := instrument.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			checked := make(map[string]bool)
			for _, s := range syms.Symbols {
				if !starts[s.Value] {
					continue // the linker lists no FDE starting here
				}
				f := m.fdeFor(s.Value)
				if f == nil || f.lo != s.Value {
					t.Errorf("%s at %#x: FDE %+v, want one starting there", s.Name, s.Value, f)
					continue
				}
				checkEntryRow(t, s.Name, f, contains(c.noRA, s.Name))
				checked[s.Name] = true
				if contains(c.covered, s.Name) && s.Size > 0 && m.fdeFor(s.Value+s.Size-1) != f {
					t.Errorf("%s [%#x,%#x): FDE %#x-%#x does not cover its last byte", s.Name, s.Value, s.Value+s.Size, f.lo, f.hi)
				}
			}
			t.Logf("%d FDEs, %d function entries checked", len(m.fdes), len(checked))
			if len(checked) < c.minChecked {
				t.Errorf("checked %d function entries, want at least %d", len(checked), c.minChecked)
			}
			for _, name := range append(c.covered, c.noRA...) {
				if !checked[name] {
					t.Errorf("%s: no FDE starts at its entry", name)
				}
			}
		})
	}
}

// checkEntryRow checks the rule at a function's first instruction: the call
// just pushed the return address, so CFA = rsp+8 and RA is at CFA-8 (or
// undefined in an entry point such as _start).
func checkEntryRow(t *testing.T, name string, f *fde, noRA bool) {
	t.Helper()
	rw, err := f.rowAt(f.lo)
	if err != nil {
		t.Errorf("%s: %v", name, err)
		return
	}
	wantRA := rule{kind: ruleOffset, off: -8}
	if noRA {
		wantRA = rule{kind: ruleUndefined}
	}
	if !reflect.DeepEqual(rw.cfa, cfaRule{reg: regRSP, off: 8}) || !reflect.DeepEqual(rw.regs[regRIP], wantRA) {
		t.Errorf("%s at entry: CFA %+v, RA %+v; want rsp+8, %+v", name, rw.cfa, rw.regs[regRIP], wantRA)
	}
}

// checkAgainstHdr compares the FDEs parsed from .eh_frame with the linker's
// .eh_frame_hdr table and with the FDEs found through it (the path for files
// without section headers), and returns the table's start addresses.
func checkAgainstHdr(t *testing.T, path string, m *Module) map[uint64]bool {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	hs, eh := f.Section(".eh_frame_hdr"), f.Section(".eh_frame")
	if hs == nil || eh == nil {
		t.Fatalf("%s: no .eh_frame_hdr or .eh_frame", path)
	}
	data, err := hs.Data()
	if err != nil {
		t.Fatal(err)
	}
	h, err := parseEHFrameHdr(data, hs.Addr)
	if err != nil {
		t.Fatal(err)
	}
	if h.ehFrame != eh.Addr {
		t.Errorf(".eh_frame_hdr points at %#x, .eh_frame is at %#x", h.ehFrame, eh.Addr)
	}
	if len(h.table) != len(m.fdes) {
		t.Fatalf(".eh_frame_hdr lists %d FDEs, parsed %d", len(h.table), len(m.fdes))
	}
	starts := make(map[uint64]bool)
	for i, e := range h.table {
		if e.start != m.fdes[i].lo {
			t.Fatalf("FDE %d: .eh_frame_hdr start %#x, parsed %#x", i, e.start, m.fdes[i].lo)
		}
		starts[e.start] = true
	}
	viaHdr, err := fdesFromSegments(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(viaHdr) != len(m.fdes) {
		t.Fatalf("%d FDEs through PT_GNU_EH_FRAME, %d through .eh_frame", len(viaHdr), len(m.fdes))
	}
	for i := range viaHdr {
		if viaHdr[i].lo != m.fdes[i].lo || viaHdr[i].hi != m.fdes[i].hi || string(viaHdr[i].ins) != string(m.fdes[i].ins) {
			t.Fatalf("FDE %d: %#x-%#x through PT_GNU_EH_FRAME, %#x-%#x through .eh_frame", i, viaHdr[i].lo, viaHdr[i].hi, m.fdes[i].lo, m.fdes[i].hi)
		}
	}
	return starts
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestLoadErrors(t *testing.T) {
	cases := []struct {
		name string
		path func(t *testing.T) string
		want error // nil: any error
	}{
		{"missing file", func(t *testing.T) string { return "/nonexistent/lib.so" }, os.ErrNotExist},
		{"not ELF", func(t *testing.T) string { return "testdata/chain.c" }, nil},
		{"no CFI", func(t *testing.T) string {
			return buildC(t, "chain.c", "-fno-asynchronous-unwind-tables", "-fno-unwind-tables", "-nostartfiles", "-e", "main")
		}, ErrNoCFI},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := Load(c.path(t), 0, 0, 1)
			if err == nil || (c.want != nil && !errors.Is(err, c.want)) {
				t.Fatalf("Load = %v, %v; want error %v", m, err, c.want)
			}
		})
	}
}

// TestLoadReaderVDSO loads the CFI of this process's [vdso], which is not a
// file: the tracer copies it out of the target's memory the same way.
func TestLoadReaderVDSO(t *testing.T) {
	maps, err := instrument.ReadMaps(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	var vdso *instrument.Mapping
	for i := range maps {
		if maps[i].Path == "[vdso]" {
			vdso = &maps[i]
		}
	}
	if vdso == nil {
		t.Skip("no [vdso] mapping")
	}
	mem, err := os.Open("/proc/self/mem")
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	img := make([]byte, vdso.End-vdso.Start)
	if _, err := mem.ReadAt(img, int64(vdso.Start)); err != nil {
		t.Skipf("read [vdso]: %v", err)
	}
	f, err := elf.NewFile(bytes.NewReader(img))
	if err != nil {
		t.Fatal(err)
	}
	syms, err := f.DynamicSymbols()
	if err != nil {
		t.Fatal(err)
	}
	m, err := LoadImage(img, vdso.Start, vdso.End)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) != elf.STT_FUNC || s.Value == 0 {
			continue
		}
		fd := m.fdeFor(s.Value)
		if fd == nil || fd.lo != s.Value {
			t.Errorf("%s at %#x: FDE %+v, want one starting there", s.Name, s.Value, fd)
			continue
		}
		checkEntryRow(t, s.Name, fd, false)
		checked++
	}
	if checked == 0 {
		t.Error("no vDSO function checked")
	}
	t.Logf("%d FDEs, %d vDSO functions checked", len(m.fdes), checked)
}

// Range: the FDE around a link-time address is the function's own range,
// as its symbol gives it (chain.c built without split-off parts), from
// its first byte to its last; past the last, not that range; no code, no
// range.
func TestRange(t *testing.T) {
	path := buildC(t, "chain.c", "-fno-reorder-blocks-and-partition")
	m, err := Load(path, 0, 0, ^uint64(0))
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, s := range syms {
		switch s.Name {
		case "dump", "cmp", "handler", "c", "b", "a", "main":
		default:
			continue
		}
		found++
		for _, pc := range []uint64{s.Value, s.Value + s.Size/2, s.Value + s.Size - 1} {
			if lo, hi, ok := m.Range(pc); !ok || lo != s.Value || hi != s.Value+s.Size {
				t.Errorf("%s: Range(%#x) = %#x, %#x, %v; want %#x, %#x", s.Name, pc, lo, hi, ok, s.Value, s.Value+s.Size)
			}
		}
		if lo, _, ok := m.Range(s.Value + s.Size); ok && lo == s.Value {
			t.Errorf("%s: Range past its end is its own", s.Name)
		}
	}
	if found != 7 {
		t.Fatalf("%d of chain.c's 7 functions found", found)
	}
	if _, _, ok := m.Range(0); ok {
		t.Errorf("Range(0): a range")
	}
}
