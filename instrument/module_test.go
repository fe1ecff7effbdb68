package instrument

import (
	"bufio"
	"bytes"
	"debug/elf"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/arch/x86/x86asm"
)

const testBuildID = "0123456789abcdef"

var buildVariants = []struct {
	name  string
	flags []string
	pie   bool
	noPLT bool // calls go through GOT slots, not PLT stubs
}{
	{"pie", nil, true, false},
	{"nopie", []string{"-no-pie"}, false, false},
	{"fno-plt", []string{"-fno-plt"}, true, true},
	{"ibt", []string{"-fcf-protection", "-Wl,-z,ibtplt"}, true, false},
	{"now", []string{"-Wl,-z,now"}, true, false},
}

func TestOpenCompiled(t *testing.T) {
	for _, v := range buildVariants {
		t.Run(v.name, func(t *testing.T) {
			path := buildC(t, "calls.c", append([]string{"-Wl,--build-id=0x" + testBuildID}, v.flags...)...)
			m := openModule(t, path)
			if m.PIE != v.pie {
				t.Errorf("PIE = %v, want %v", m.PIE, v.pie)
			}
			if m.BuildID != testBuildID {
				t.Errorf("BuildID = %q, want %q", m.BuildID, testBuildID)
			}
			checkSorted(t, m)
			for _, name := range []string{"main", "leaf", "aliased", "ns::f(int)", "_start", "frame_dummy"} {
				symbolNamed(t, m, name)
			}
			for _, gone := range []string{"aliased_impl", "_a", "w"} {
				for _, s := range m.Symbols {
					if s.Name == gone {
						t.Errorf("alias %q not collapsed into %q", gone, "aliased")
					}
				}
			}
			if s := symbolNamed(t, m, "ns::f(int)"); s.Raw != "_ZN2ns1fEi" {
				t.Errorf("ns::f(int) Raw = %q", s.Raw)
			}
			checkLookupAndCode(t, m, symbolNamed(t, m, "main"))
			checkPLT(t, m, v.noPLT)
		})
	}
}

func checkSorted(t *testing.T, m *Module) {
	t.Helper()
	for i := 1; i < len(m.Symbols); i++ {
		if m.Symbols[i-1].Value >= m.Symbols[i].Value {
			t.Fatalf("symbols not strictly sorted: %+v then %+v", m.Symbols[i-1], m.Symbols[i])
		}
	}
}

func checkLookupAndCode(t *testing.T, m *Module, main Symbol) {
	t.Helper()
	if main.Size == 0 {
		t.Fatalf("main has size 0")
	}
	for _, addr := range []uint64{main.Value, main.Value + main.Size/2, main.Value + main.Size - 1} {
		if got, ok := m.Lookup(addr); !ok || got.Name != "main" {
			t.Errorf("Lookup(%#x) = %+v, %v; want main", addr, got, ok)
		}
	}
	if got, ok := m.Lookup(0x10); ok {
		t.Errorf("Lookup(0x10) = %+v, want nothing", got)
	}
	code, err := m.Code(main)
	if err != nil {
		t.Fatalf("Code(main): %v", err)
	}
	if uint64(len(code)) != main.Size {
		t.Errorf("Code(main) has %d bytes, want %d", len(code), main.Size)
	}
	if _, err := decodeInst(code); err != nil {
		t.Errorf("first instruction of main: %v", err)
	}
	// Code must agree with the section contents.
	f, err := elf.Open(m.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	text := f.Section(".text")
	data, err := text.Data()
	if err != nil {
		t.Fatal(err)
	}
	if want := data[main.Value-text.Addr:][:main.Size]; !bytes.Equal(code, want) {
		t.Errorf("Code(main) differs from .text contents")
	}
	if _, err := m.ReadAt(1<<40, 4); err == nil {
		t.Errorf("ReadAt outside every segment succeeded")
	}
}

// checkPLT compares the PLT map with objdump's "<name@plt>" labels and
// checks usleep is reachable through a PLT stub or, with -fno-plt, a GOT
// slot.
func checkPLT(t *testing.T, m *Module, noPLT bool) {
	t.Helper()
	for addr, name := range m.PLT {
		if name == "" || !m.IsPLT(addr) {
			t.Errorf("PLT[%#x] = %q outside a PLT section", addr, name)
		}
	}
	found := false
	for addr, name := range m.PLT {
		found = found || name == "usleep"
		_ = addr
	}
	if !noPLT && !found {
		t.Errorf("no PLT stub for usleep in %v", m.PLT)
	}
	slot := uint64(0)
	for a, name := range m.GOT {
		if name == "usleep" {
			slot = a
		}
	}
	if slot == 0 || !m.IsGOT(slot) {
		t.Errorf("no GOT slot for usleep in %v", m.GOT)
	}
	for addr, name := range objdumpPLT(t, m.Path) {
		if m.PLT[addr] != name {
			t.Errorf("PLT[%#x] = %q, objdump says %q", addr, m.PLT[addr], name)
		}
	}
}

// objdumpPLT returns objdump's PLT stub labels, or nothing without objdump.
func objdumpPLT(t *testing.T, path string) map[uint64]string {
	t.Helper()
	out := make(map[uint64]string)
	objdump, err := exec.LookPath("objdump")
	if err != nil {
		return out
	}
	b, err := exec.Command(objdump, "-d", "-j", ".plt", "-j", ".plt.sec", "-j", ".plt.got", path).Output()
	if err != nil {
		t.Logf("objdump: %v", err)
		return out
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		addr, label, ok := strings.Cut(sc.Text(), " <")
		if !ok || !strings.HasSuffix(label, "@plt>:") {
			continue
		}
		a, err := strconv.ParseUint(addr, 16, 64)
		if err != nil {
			continue
		}
		name := strings.TrimSuffix(label, "@plt>:")
		name, _, _ = strings.Cut(name, "@") // versioned labels
		out[a] = name
	}
	return out
}

func TestOpenLibc(t *testing.T) {
	if _, err := os.Stat(libcPath); err != nil {
		t.Skip("no", libcPath)
	}
	m := openModule(t, libcPath)
	if !m.PIE {
		t.Errorf("libc not ET_DYN")
	}
	if len(m.BuildID) != 40 {
		t.Errorf("BuildID %q is not a 20-byte hex string", m.BuildID)
	}
	checkSorted(t, m)
	for _, name := range []string{"usleep", "nanosleep", "read", "write", "pthread_cond_wait", "pread", "recv", "wait", "malloc"} {
		s := symbolNamed(t, m, name)
		if s.Size == 0 {
			t.Errorf("%s has size 0", name)
		}
		if got, ok := m.Lookup(s.Value + s.Size - 1); !ok || got.Name != name {
			t.Errorf("Lookup(end of %s) = %v, %v", name, got.Name, ok)
		}
	}
	for _, s := range m.Symbols {
		switch s.Name {
		case "__read", "__nanosleep", "__libc_pread", "pread64", "__recv":
			t.Errorf("alias %q was not collapsed into the public name", s.Name)
		}
	}
	// Every default-blocking function libc exports must come out under a
	// default-blocking name, or the filter would miss it.
	f, err := elf.Open(libcPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dyn, err := f.DynamicSymbols()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range dyn {
		if elf.ST_TYPE(s.Info) != elf.STT_FUNC || !defined(s) || !isDefaultBlocking(s.Name) {
			continue
		}
		got, ok := m.Lookup(s.Value)
		if !ok || !isDefaultBlocking(got.Name) {
			t.Errorf("blocking %s at %#x comes out as %q", s.Name, s.Value, got.Name)
		}
	}
	if len(m.PLT) == 0 {
		t.Errorf("libc has no PLT stubs")
	}
	for addr, name := range objdumpPLT(t, libcPath) {
		if !strings.HasPrefix(name, "*ABS*") && m.PLT[addr] != name {
			t.Errorf("PLT[%#x] = %q, objdump says %q", addr, m.PLT[addr], name)
		}
	}
	code, err := m.Code(symbolNamed(t, m, "usleep"))
	if err != nil {
		t.Fatal(err)
	}
	if inst, err := x86asm.Decode(code, 64); err != nil && !isEndbr(code) {
		t.Errorf("usleep starts with %v: %v", inst, err)
	}
}

func TestOpenErrors(t *testing.T) {
	stripped := buildC(t, "calls.c", "-s")
	if _, err := Open(stripped); !errors.Is(err, ErrNoSymbols) || !strings.Contains(err.Error(), stripped) {
		t.Errorf("Open(stripped) = %v, want ErrNoSymbols naming the path", err)
	}
	notELF := filepath.Join(t.TempDir(), "text")
	if err := os.WriteFile(notELF, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(notELF); err == nil {
		t.Errorf("Open(text file) succeeded")
	}
	if _, err := Open(filepath.Join(t.TempDir(), "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Open(missing) = %v, want ErrNotExist", err)
	}
}

func TestCollapse(t *testing.T) {
	c := func(name string, bind elf.SymBind, size uint64) candidate {
		return candidate{Symbol{Name: name, Raw: name, Value: 0x100, Size: size}, bind}
	}
	tests := []struct {
		name string
		in   []candidate
		want string
	}{
		{"no underscore wins", []candidate{c("__read", elf.STB_GLOBAL, 8), c("read", elf.STB_WEAK, 8)}, "read"},
		{"global beats weak", []candidate{c("pread64", elf.STB_WEAK, 8), c("pread", elf.STB_LOCAL, 8), c("preadx", elf.STB_GLOBAL, 8)}, "preadx"},
		{"shortest", []candidate{c("pread64", elf.STB_WEAK, 8), c("pread", elf.STB_WEAK, 8)}, "pread"},
		{"lexicographic", []candidate{c("bb", elf.STB_GLOBAL, 8), c("ab", elf.STB_GLOBAL, 8)}, "ab"},
		{"sized beats size 0", []candidate{c("label", elf.STB_GLOBAL, 0), c("_impl", elf.STB_LOCAL, 8)}, "_impl"},
		{"size 0 alone kept", []candidate{c("label", elf.STB_GLOBAL, 0)}, "label"},
		{"unique is global", []candidate{c("u", stbGNUUnique, 8), c("a", elf.STB_WEAK, 8)}, "u"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := collapse(tt.in)
			if len(got) != 1 || got[0].Name != tt.want {
				t.Errorf("collapse = %+v, want one symbol %q", got, tt.want)
			}
		})
	}
}

func TestLookupSizeZero(t *testing.T) {
	m := &Module{Symbols: []Symbol{{Name: "a", Value: 0x10, Size: 0x10}, {Name: "z", Value: 0x30}, {Name: "b", Value: 0x40, Size: 4}}}
	tests := []struct {
		addr uint64
		want string
	}{
		{0x0f, ""}, {0x10, "a"}, {0x1f, "a"}, {0x20, ""}, {0x30, "z"}, {0x31, ""}, {0x43, "b"}, {0x44, ""},
	}
	for _, tt := range tests {
		got, ok := m.Lookup(tt.addr)
		if ok != (tt.want != "") || got.Name != tt.want {
			t.Errorf("Lookup(%#x) = %q, %v; want %q", tt.addr, got.Name, ok, tt.want)
		}
	}
}

func TestFindBuildID(t *testing.T) {
	note := func(name string, typ uint32, desc []byte) []byte {
		var b []byte
		le := func(v uint32) { b = append(b, byte(v), byte(v>>8), byte(v>>16), byte(v>>24)) }
		le(uint32(len(name)))
		le(uint32(len(desc)))
		le(typ)
		b = append(b, name...)
		for len(b)%4 != 0 {
			b = append(b, 0)
		}
		b = append(b, desc...)
		for len(b)%4 != 0 {
			b = append(b, 0)
		}
		return b
	}
	abi := note("GNU\x00", 1, []byte{0, 0, 0, 0, 3, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0})
	id := note("GNU\x00", ntGNUBuildID, []byte{0xde, 0xad, 0xbe, 0xef, 0x01})
	tests := []struct {
		name string
		data []byte
		want string
		ok   bool
	}{
		{"after another note", append(abi, id...), "deadbeef01", true},
		{"other owner", note("Go\x00\x00", ntGNUBuildID, []byte{1}), "", false},
		{"truncated", id[:len(id)-4], "", false},
		{"empty", nil, "", false},
	}
	for _, tt := range tests {
		got, ok := findBuildID(tt.data)
		if got != tt.want || ok != tt.ok {
			t.Errorf("%s: findBuildID = %q, %v; want %q, %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}

// TestLoadCode: once LoadCode has read a module's code, ReadAt serves it
// from memory, as the exit planning's many readers need (each ReadAt of
// a file opened it before): the same bytes with the file gone.
func TestLoadCode(t *testing.T) {
	path := buildC(t, "calls.c")
	m := openModule(t, path)
	main := symbolNamed(t, m, "main")
	want, err := m.ReadAt(main.Value, int(main.Size))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.LoadCode(); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	got, err := m.ReadAt(main.Value, int(main.Size))
	if err != nil {
		t.Fatalf("ReadAt after LoadCode, the file gone: %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("ReadAt after LoadCode = % x, want % x", got, want)
	}
}
