package instrument

import "testing"

func TestParseContext(t *testing.T) {
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		{"A>B", "A>B", true}, {" A > callees:B ", "A>callees:B", true}, {"A", "A", true},
		{"A>>B", "", false}, {"", "", false}, {"A>", "", false},
		{"a>b>c>d>e>f>g", "a>b>c>d>e>f>g", true}, {"a>b>c>d>e>f>g>h", "", false},
	} {
		ctx, err := ParseContext(c.in)
		if (err == nil) != c.ok || (c.ok && ctx.String() != c.want) {
			t.Errorf("ParseContext(%q) = %v, %v; want %q, ok %v", c.in, ctx, err, c.want, c.ok)
		}
	}
}

func TestContextRole(t *testing.T) {
	ctx, err := ParseContext("A>callees:B")
	if err != nil {
		t.Fatal(err)
	}
	ctx.Gate([]string{"callees:x", "libc.so.6:puts", "callees:A"})
	for _, c := range []struct {
		path, name string
		comp       int
		gated      bool
	}{
		{"/bin/callees", "A", 0, false}, // a component, though Gate named it
		{"/lib/libm.so.6", "A", 0, false},
		{"/bin/callees", "B", 1, false},
		{"/bin/other", "B", -1, false}, // B only in callees
		{"/bin/callees", "x", -1, true},
		{"/lib/x86_64-linux-gnu/libc.so.6", "puts", -1, true},
		{"/bin/callees", "y", -1, false},
	} {
		comp, gated := ctx.Role(c.path, c.name)
		if comp != c.comp || gated != c.gated {
			t.Errorf("Role(%s, %s) = %d, %v; want %d, %v", c.path, c.name, comp, gated, c.comp, c.gated)
		}
	}
	if !ctx.Module("/bin/callees") || ctx.Module("/bin/other") {
		t.Error("Module: only callees is named with a component")
	}
}
