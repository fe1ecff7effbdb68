package instrument

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"golang.org/x/arch/x86/x86asm"

	"github.com/profile-dev/profile/internal/workload"
	"github.com/profile-dev/profile/model"
	"github.com/profile-dev/profile/model/modeltest"
)

func workloadPath(t *testing.T, name string) string {
	t.Helper()
	p, err := workload.Path(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// describe is a callee in one line: kind, "tail", its function's key and
// the split-off part of a site, if any.
func describe(c *Callee) string {
	s := string(c.Kind)
	if c.Tail {
		s += " tail"
	}
	if c.Func != nil {
		s += " " + c.Func.Key()
	}
	for _, site := range c.Sites {
		if site.Part != "" {
			s += " in " + site.Part
			break
		}
	}
	return s
}

func describeAll(cs []*Callee) []string {
	var out []string
	for _, c := range cs {
		out = append(out, describe(c))
	}
	return out
}

// The acceptance workload: C calls x and y directly, z through a pointer
// (one indirect site, z unnamed) and puts through the PLT, found in the C
// library.
func TestDiscoverCallees(t *testing.T) {
	exe := workloadPath(t, "callees")
	d, err := NewExeDiscoverer(exe, nil)
	if err != nil {
		t.Fatal(err)
	}
	disc, err := d.Discover("C", 1)
	if err != nil {
		t.Fatal(err)
	}
	root := disc.Root
	if root.Func.Key() != "callees:C" || !root.Func.Main || root.Level != 0 || !root.Expanded || root.Func.Size == 0 {
		t.Fatalf("root = %+v %+v", root, root.Func)
	}
	want := []string{"direct callees:x", "direct callees:y", "indirect", "plt libc.so.6:puts"}
	if got := describeAll(root.Callees); !slices.Equal(got, want) {
		t.Errorf("callees of C = %q, want %q", got, want)
	}
	for _, c := range root.Callees {
		if c.Level != 1 || c.Expanded || len(c.Callees) > 0 {
			t.Errorf("%s: level %d, expanded %v at depth 1", describe(c), c.Level, c.Expanded)
		}
		for _, s := range c.Sites {
			if s.Part != "" || s.Addr != root.Func.Addr+s.Offset || s.Offset >= root.Func.Size {
				t.Errorf("%s: site %+v not in C (%#x, %d bytes)", describe(c), s, root.Func.Addr, root.Func.Size)
			}
		}
		switch {
		case c.Kind == CalleeIndirect:
			if c.Operand == "" || c.ObservedKnown {
				t.Errorf("indirect site: operand %q, observed known %v without a profile", c.Operand, c.ObservedKnown)
			}
		case c.Func.Key() == "callees:y":
			if len(c.Sites) != 2 {
				t.Errorf("y: sites %+v, want the two calls", c.Sites)
			}
		case c.Func.Key() == "libc.so.6:puts":
			if c.Func.Main || c.Func.Display(false) != "libc.so.6:puts" || c.Func.Addr == 0 || c.Why != "" {
				t.Errorf("puts = %+v, why %q", c.Func, c.Why)
			}
		}
	}
	if disc.IndirectSites() != 1 {
		t.Errorf("IndirectSites() = %d, want 1", disc.IndirectSites())
	}
	var keys []string
	for _, f := range disc.Functions() {
		keys = append(keys, f.Key())
	}
	if want := []string{"callees:C", "callees:x", "callees:y", "libc.so.6:puts"}; !slices.Equal(keys, want) {
		t.Errorf("Functions() = %q, want %q", keys, want)
	}

	// Depth 2: y's call of x is x again, listed but not expanded twice.
	disc, err = d.Discover("callees:C", 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range disc.Root.Callees {
		switch {
		case c.Func == nil:
		case c.Func.Name == "x":
			if !c.Expanded || c.Repeat || len(c.Callees) != 0 {
				t.Errorf("x at level 1: %+v, want expanded without callees", c)
			}
		case c.Func.Name == "y":
			if got := describeAll(c.Callees); !c.Expanded || !slices.Equal(got, []string{"direct callees:x"}) {
				t.Errorf("y's callees = %q (expanded %v)", got, c.Expanded)
			} else if x := c.Callees[0]; x.Level != 2 || !x.Repeat || x.Expanded {
				t.Errorf("x at level 2: level %d, repeat %v, expanded %v; want 2, a repeat of level 1's, not expanded", x.Level, x.Repeat, x.Expanded)
			}
		case c.Func.Name == "puts":
			if !c.Expanded && c.Why == "" {
				t.Errorf("puts at level 1 of 2: neither expanded nor a reason")
			}
		}
	}
	disc, err = d.Discover("A", 3)
	if err != nil {
		t.Fatal(err)
	}
	// A > B > C > {x, y > x}: x is expanded under C (level 3 is the
	// depth: not expanded), so y's x at level 4 is not even reached.
	b := disc.Root.Callees[0]
	if describe(b) != "direct callees:B" || describe(b.Callees[0]) != "direct callees:C" || !b.Callees[0].Expanded {
		t.Fatalf("A's tree: %q > %q", describe(b), describeAll(b.Callees))
	}
	for _, c := range b.Callees[0].Callees {
		if c.Level != 3 || c.Expanded {
			t.Errorf("%s: level %d, expanded %v; want 3, not expanded", describe(c), c.Level, c.Expanded)
		}
	}
}

// A function met again is marked Repeat, not expanded again.
func TestDiscoverRepeat(t *testing.T) {
	d, err := NewExeDiscoverer(workloadPath(t, "callees"), nil)
	if err != nil {
		t.Fatal(err)
	}
	disc, err := d.Discover("D", 3)
	if err != nil {
		t.Fatal(err)
	}
	// D > C (3 sites) > x (expanded at level 2), y > x (at the depth, but
	// marked: its callees are listed above).
	c := disc.Root.Callees[0]
	if describe(c) != "direct callees:C" || len(c.Sites) != 3 {
		t.Fatalf("D's callees: %q", describeAll(disc.Root.Callees))
	}
	var y *Callee
	for _, k := range c.Callees {
		if k.Func != nil && k.Func.Name == "y" {
			y = k
		}
	}
	if y == nil || len(y.Callees) != 1 || !y.Callees[0].Repeat || y.Callees[0].Expanded || y.Callees[0].Level != 3 {
		t.Fatalf("y under C: %+v", y)
	}
}

// The shapes compilers make of calls: tail calls to a function, to a PLT
// stub (or, with -fno-plt, through its GOT slot) and through a pointer; a
// switch's jump table (no call site); calls in the .cold part GCC splits
// off; with and without PIE and CET.
func TestDiscoverShapes(t *testing.T) {
	for _, flags := range [][]string{nil, {"-fcf-protection"}, {"-fno-plt"}, {"-fno-pie", "-no-pie"}, {"-O3"}} {
		t.Run(strings.Join(flags, " "), func(t *testing.T) {
			exe := buildC(t, "discover.c", flags...)
			d, err := NewExeDiscoverer(exe, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				fn   string
				want []string
			}{
				{"tail_direct", []string{"direct tail prog:leaf"}},
				{"tail_plt", []string{"plt tail libc.so.6:puts"}},
				{"tail_ptr", []string{"indirect tail"}},
				{"table", []string{"direct prog:leaf", "direct prog:other"}},
				{"split_cold", []string{"direct prog:leaf", "direct prog:other", "direct prog:rare in split_cold.cold", "plt libc.so.6:abort in split_cold.cold"}},
			} {
				disc, err := d.Discover(c.fn, 1)
				if err != nil {
					t.Fatal(err)
				}
				got := describeAll(disc.Root.Callees)
				slices.Sort(got)
				if !slices.Equal(got, c.want) {
					t.Errorf("%s: %q, want %q", c.fn, got, c.want)
				}
				if len(disc.Root.Notes) > 0 {
					t.Errorf("%s: notes %q", c.fn, disc.Root.Notes)
				}
			}
		})
	}
}

func TestDiscoverErrors(t *testing.T) {
	d, err := NewExeDiscoverer(workloadPath(t, "callees"), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		fn    string
		depth int
		want  string
	}{
		{"nosuch", 1, "nosuch: function not found in callees or its"},
		{"callees:nosuch", 1, "callees:nosuch: function not found in callees"},
		{"C", 0, "depth 0: must be at least 1"},
		{"", 1, "empty function name"},
	} {
		_, err := d.Discover(c.fn, c.depth)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Discover(%q, %d) = %v, want an error with %q", c.fn, c.depth, err, c.want)
		}
		if c.depth > 0 && c.fn != "" && !errors.Is(err, ErrFuncNotFound) {
			t.Errorf("Discover(%q): %v is not ErrFuncNotFound", c.fn, err)
		}
	}
	// A library function, by module:name, is discovered in its library.
	disc, err := d.Discover("libc.so.6:puts", 1)
	if err != nil {
		t.Fatal(err)
	}
	if disc.Root.Func.Key() != "libc.so.6:puts" || disc.Root.Func.Main || !disc.Root.Expanded {
		t.Errorf("libc.so.6:puts: %+v", disc.Root.Func)
	}
	// A stripped executable has nothing to discover.
	_, err = NewExeDiscoverer(workloadPath(t, "stripped"), nil)
	if !errors.Is(err, ErrNoSymbols) {
		t.Errorf("stripped: %v, want ErrNoSymbols", err)
	}
}

// A profile's indirect calls from a function become its indirect site's
// observed targets; a function that never ran says so.
func TestDiscoverObserved(t *testing.T) {
	exe := workloadPath(t, "callees")
	b := modeltest.NewBuilder(exe)
	proc := b.Process(100, model.None, "", 0)
	indirect := func(dt int64, f string) modeltest.Step {
		return modeltest.Step{Dt: dt, Func: f, Kind: model.KindIndirect}
	}
	var script []modeltest.Step
	script = append(script, modeltest.Enter(1, "main"), modeltest.Enter(1, "C"))
	for range 3 {
		script = append(script, indirect(1, "z"), modeltest.Exit(1), modeltest.Enter(1, "x"), modeltest.Exit(1))
	}
	script = append(script, indirect(1, "libc.so.6:qsort"), modeltest.Exit(1), modeltest.Exit(1), indirect(1, "y"), modeltest.Exit(1), modeltest.Exit(1))
	b.Thread(proc, 100, 0, "", 0, nil, script)
	if err := b.P.Validate(); err != nil {
		t.Fatal(err)
	}

	d, err := NewExeDiscoverer(exe, nil)
	if err != nil {
		t.Fatal(err)
	}
	d.UseProfile(b.P)
	disc, err := d.Discover("C", 2)
	if err != nil {
		t.Fatal(err)
	}
	var site *Callee
	for _, c := range disc.Root.Callees {
		ran := !slices.Contains(c.Notes, "not in the profile (not traced, or never ran)")
		switch {
		case c.Kind == CalleeIndirect:
			site = c
		case c.Func.Name == "y" && !ran:
			t.Errorf("y ran (called from main): notes %q", c.Notes)
		case c.Func.Name == "puts" && c.Expanded && ran:
			t.Errorf("puts never ran: notes %q", c.Notes)
		}
	}
	if site == nil {
		t.Fatalf("no indirect site in %q", describeAll(disc.Root.Callees))
	}
	var got []string
	for _, o := range site.Observed {
		got = append(got, fmt.Sprintf("%s %d", o.Func.Display(false), o.Calls))
	}
	want := []string{"z 3", "libc.so.6:qsort 1"}
	if !site.ObservedKnown || site.ObservedShared || !slices.Equal(got, want) {
		t.Errorf("observed = %q (known %v, shared %v), want %q", got, site.ObservedKnown, site.ObservedShared, want)
	}
	if len(disc.Warnings) != 0 {
		t.Errorf("warnings: %q", disc.Warnings)
	}

	// A profile of another build of the executable is a warning.
	for i, m := range b.P.Modules {
		if m.Path == exe {
			b.P.Modules[i].BuildID = "0123"
		}
	}
	d.UseProfile(b.P)
	if disc, err = d.Discover("C", 1); err != nil {
		t.Fatal(err)
	}
	if len(disc.Warnings) != 1 || !strings.Contains(disc.Warnings[0], "another build of callees (build id 0123, not ") {
		t.Errorf("warnings: %q", disc.Warnings)
	}
}

func TestOperandText(t *testing.T) {
	for _, c := range []struct {
		code []byte
		want string
	}{
		{[]byte{0xff, 0xd0}, "rax"},
		{[]byte{0x41, 0xff, 0xd3}, "r11"},
		{[]byte{0xff, 0x50, 0x08}, "[rax+0x8]"},
		{[]byte{0x41, 0xff, 0x54, 0x24, 0xf8}, "[r12-0x8]"},
		{[]byte{0xff, 0x14, 0xc5, 0x00, 0x10, 0x00, 0x00}, "[rax*8+0x1000]"},
		{[]byte{0xff, 0x14, 0xd3}, "[rbx+rdx*8]"},
		{[]byte{0xff, 0x15, 0xf0, 0xff, 0xff, 0xff}, "[0xff6]"}, // rip-relative, at 0x1000: 0x1006-0x10
		{[]byte{0x64, 0xff, 0x14, 0x25, 0x28, 0x00, 0x00, 0x00}, "[fs:0x28]"},
	} {
		inst, err := decodeInst(c.code)
		if err != nil || inst.Op != x86asm.CALL {
			t.Fatalf("% x: %v %v", c.code, inst, err)
		}
		if got := operandText(inst, 0x1000+uint64(inst.Len), c.code); got != c.want {
			t.Errorf("% x: %q, want %q", c.code, got, c.want)
		}
	}
}
