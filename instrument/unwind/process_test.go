package unwind

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/profile-dev/profile/instrument"
)

// snapshot is what testdata/chain.c dumps of itself.
type snapshot struct {
	regs  Regs
	want  map[string][2]uint64 // function -> {return address, CFA}
	stack region
	maps  []instrument.Mapping
}

func parseSnapshot(t *testing.T, out []byte) snapshot {
	t.Helper()
	s := snapshot{want: make(map[string][2]uint64)}
	hex := func(f string) uint64 {
		v, err := strconv.ParseUint(f, 16, 64)
		if err != nil {
			t.Fatalf("snapshot: %v", err)
		}
		return v
	}
	var maps strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		kind, rest, _ := strings.Cut(sc.Text(), " ")
		f := strings.Fields(rest)
		switch kind {
		case "reg":
			v := hex(f[1])
			for name, p := range map[string]*uint64{
				"rip": &s.regs.RIP, "rsp": &s.regs.RSP, "rbp": &s.regs.RBP, "rbx": &s.regs.RBX,
				"r12": &s.regs.R12, "r13": &s.regs.R13, "r14": &s.regs.R14, "r15": &s.regs.R15,
			} {
				if name == f[0] {
					*p = v
				}
			}
		case "want":
			s.want[f[0]] = [2]uint64{hex(f[1]), hex(f[2])}
		case "map":
			maps.WriteString(rest + "\n")
		case "stack":
			s.stack.addr = hex(f[0])
			n := hex(f[1])
			s.stack.data = make([]byte, 0, 8*n)
			for range n {
				if !sc.Scan() {
					t.Fatal("snapshot: stack cut short")
				}
				s.stack.data = binary.LittleEndian.AppendUint64(s.stack.data, hex(sc.Text()))
			}
		}
	}
	var err error
	if s.maps, err = instrument.ParseMaps(strings.NewReader(maps.String())); err != nil {
		t.Fatal(err)
	}
	if s.regs.RSP != s.stack.addr || len(s.stack.data) == 0 {
		t.Fatalf("snapshot: rsp %#x, stack at %#x (%d bytes)", s.regs.RSP, s.stack.addr, len(s.stack.data))
	}
	return s
}

// placed is a loaded file of the snapshot's process: its symbols, bias and
// runtime range.
type placed struct {
	syms   *instrument.Module
	bias   uint64
	lo, hi uint64
}

// placeFiles opens the executable files mapped in the snapshot's process.
func placeFiles(t *testing.T, s snapshot) []placed {
	t.Helper()
	var out []placed
	for _, path := range instrument.LoadedPaths(s.maps) {
		syms, err := instrument.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		bias, err := syms.Bias(s.maps)
		if err != nil {
			t.Fatal(err)
		}
		p := placed{syms: syms, bias: bias, lo: ^uint64(0)}
		for _, m := range s.maps {
			if m.Path == path {
				p.lo, p.hi = min(p.lo, m.Start), max(p.hi, m.End)
			}
		}
		out = append(out, p)
	}
	return out
}

// name returns "file:function" for the runtime address pc.
func name(files []placed, pc uint64) string {
	for _, f := range files {
		if pc >= f.lo && pc < f.hi {
			base := filepath.Base(f.syms.Path)
			if strings.HasPrefix(base, "libc.so") {
				base = "libc"
			}
			if s, ok := f.syms.Lookup(pc - f.bias); ok {
				return base + ":" + s.Name
			}
			return base + ":?"
		}
	}
	return "?"
}

func TestUnwindRealProcess(t *testing.T) {
	cases := []struct {
		name  string
		flags []string
		arg   string
		cfi   bool // load the modules' CFI; false: frame pointers only
		// The functions of the first frames, "prog:" being the test program;
		// "libc:*" stands for one or more frames in libc.
		chain []string
	}{
		{"CFI pie", []string{"-fomit-frame-pointer"}, "direct", true,
			[]string{"prog:c", "prog:b", "prog:a", "prog:main"}},
		{"CFI no-pie", []string{"-fomit-frame-pointer", "-no-pie"}, "direct", true,
			[]string{"prog:c", "prog:b", "prog:a", "prog:main"}},
		{"CFI through libc", []string{"-fomit-frame-pointer"}, "qsort", true,
			[]string{"prog:cmp", "libc:*", "prog:c", "prog:b", "prog:a", "prog:main"}},
		{"CFI through a signal frame", []string{"-fomit-frame-pointer"}, "signal", true,
			[]string{"prog:handler", "libc:*", "prog:c", "prog:b", "prog:a", "prog:main"}},
		{"frame pointers", []string{"-fno-omit-frame-pointer"}, "direct", false,
			[]string{"prog:c", "prog:b", "prog:a", "prog:main"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := buildC(t, "chain.c", c.flags...)
			out, err := exec.Command(path, c.arg).Output()
			if err != nil {
				t.Fatalf("%s %s: %v", path, c.arg, err)
			}
			s := parseSnapshot(t, out)
			files := placeFiles(t, s)
			var mods []*Module
			if c.cfi {
				for _, f := range files {
					m, err := Load(f.syms.Path, f.bias, f.lo, f.hi)
					if err != nil {
						t.Fatal(err)
					}
					mods = append(mods, m)
				}
			}
			frames := Unwind(mods, s.regs, s.stack.read, 64)
			t.Logf("frames:\n%s", describe(files, frames))
			checkChain(t, files, frames, c.chain)
			checkFrames(t, files, mods, frames, s)
			if c.cfi {
				// All the way out: _start's CFI marks the return address undefined.
				last := frames[len(frames)-1]
				if got := name(files, last.PC-1); last.RA != 0 || got != "prog:_start" {
					t.Errorf("outermost frame in %s with RA %#x, want prog:_start with RA 0", got, last.RA)
				}
			}
		})
	}
}

// isSignalFrame reports whether f is a signal trampoline's frame.
func isSignalFrame(mods []*Module, f Frame) bool {
	m := moduleFor(mods, f.PC-1)
	if m == nil {
		return false
	}
	d := m.fdeFor(f.PC - 1 - m.bias)
	return d != nil && d.cie.signal
}

// lookupPC is the address that names a frame: a return address may lie
// just past its function.
func lookupPC(i int, f Frame) uint64 {
	if i == 0 {
		return f.PC
	}
	return f.PC - 1
}

func describe(files []placed, frames []Frame) string {
	var b strings.Builder
	for i, f := range frames {
		fmt.Fprintf(&b, "  #%d %s pc %#x cfa %#x ra %#x\n", i, name(files, lookupPC(i, f)), f.PC, f.CFA, f.RA)
	}
	return b.String()
}

// checkChain matches the frames' functions against chain.
func checkChain(t *testing.T, files []placed, frames []Frame, chain []string) {
	t.Helper()
	i := 0
	for _, want := range chain {
		if want == "libc:*" {
			n := 0
			for ; i < len(frames) && strings.HasPrefix(name(files, lookupPC(i, frames[i])), "libc:"); i++ {
				n++
			}
			if n == 0 {
				t.Fatalf("frame %d: want frames in libc", i)
			}
			continue
		}
		if i >= len(frames) {
			t.Fatalf("%d frames, want %s next", len(frames), want)
		}
		if got := name(files, lookupPC(i, frames[i])); got != want {
			t.Fatalf("frame %d in %s, want %s", i, got, want)
		}
		i++
	}
}

// checkFrames checks each frame's return address against the stack (it
// lies at CFA-8, except in signal frames) and the next frame's pc, and the
// frames of the recording functions against what they recorded.
func checkFrames(t *testing.T, files []placed, mods []*Module, frames []Frame, s snapshot) {
	t.Helper()
	seen := make(map[string]bool)
	for i, f := range frames {
		if f.RA != 0 {
			// Where the return address was read: a signal frame's saved
			// pc too, which a tracer may rewrite.
			var b [8]byte
			if err := s.stack.read(f.RAAt, b[:]); err != nil || binary.LittleEndian.Uint64(b[:]) != f.RA {
				t.Errorf("frame %d: [RAAt %#x] = %#x (%v), RA %#x", i, f.RAAt, binary.LittleEndian.Uint64(b[:]), err, f.RA)
			}
		}
		if f.RA == 0 || isSignalFrame(mods, f) {
			continue
		}
		var b [8]byte
		if err := s.stack.read(f.CFA-8, b[:]); err != nil || binary.LittleEndian.Uint64(b[:]) != f.RA {
			t.Errorf("frame %d: [CFA-8] = %#x (%v), RA %#x", i, binary.LittleEndian.Uint64(b[:]), err, f.RA)
		}
		if i+1 < len(frames) && frames[i+1].PC != f.RA {
			t.Errorf("frame %d: RA %#x, next frame's PC %#x", i, f.RA, frames[i+1].PC)
		}
		fn := strings.TrimPrefix(name(files, lookupPC(i, f)), "prog:")
		if want, ok := s.want[fn]; ok && !seen[fn] {
			seen[fn] = true
			if f.RA != want[0] || f.CFA != want[1] {
				t.Errorf("frame %d (%s): RA %#x CFA %#x, recorded RA %#x CFA %#x", i, fn, f.RA, f.CFA, want[0], want[1])
			}
		}
	}
	for fn := range s.want {
		if !seen[fn] {
			t.Errorf("no frame of %s, which recorded RA %#x CFA %#x", fn, s.want[fn][0], s.want[fn][1])
		}
	}
}
