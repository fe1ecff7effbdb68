package model_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/profile-dev/profile/model"
	"github.com/profile-dev/profile/model/modeltest"
)

func TestTracedSinceRoundTrip(t *testing.T) {
	p := modeltest.Sample()
	p.Functions[funcIndex(t, p, "compute")].TracedSinceNs = 1_200_000_000
	p.Functions[funcIndex(t, p, "libc.so.6:usleep")].TracedSinceNs = 1
	if q := roundTrip(t, p); !reflect.DeepEqual(p, q) {
		t.Fatalf("round trip differs:\n got %+v\nwant %+v", q.Functions, p.Functions)
	}
}

// A file written before the field existed reads as traced from the start.
func TestTracedSinceOldFile(t *testing.T) {
	p, err := model.ReadFile("testdata/sample-v1.data")
	if err != nil {
		t.Fatal(err)
	}
	for f, fn := range p.Functions {
		if fn.TracedSinceNs != 0 {
			t.Errorf("function %s traced since %d ns, want 0", p.FuncName(f), fn.TracedSinceNs)
		}
	}
	if got := p.TracedLater(); len(got) != 0 {
		t.Errorf("TracedLater = %v, want none", got)
	}
}

func TestTracedSinceValidate(t *testing.T) {
	cases := []struct {
		name   string
		change func(p *model.Profile)
		want   string // "" = valid
	}{
		{"later", func(p *model.Profile) { p.Functions[2].TracedSinceNs = 5e9 }, ""},
		{"negative", func(p *model.Profile) { p.Functions[2].TracedSinceNs = -1 },
			"function 2 (fib): negative traced-since time -1 ns"},
		{"duplicate with another time", func(p *model.Profile) {
			dup := p.Functions[1]
			dup.TracedSinceNs = 7
			p.Functions = append(p.Functions, dup)
		}, `duplicate function "main"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := modeltest.Sample()
			if p.FuncName(1) != "main" || p.FuncName(2) != "fib" {
				t.Fatalf("sample functions moved: %s, %s", p.FuncName(1), p.FuncName(2))
			}
			c.change(p)
			err := p.Validate()
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("Validate() = %v, want valid", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("Validate() = %v, want %q", err, c.want)
			}
		})
	}
}

func TestFormatOffset(t *testing.T) {
	for _, c := range []struct {
		ns   int64
		want string
	}{
		{0, "+0.00s"},
		{1_200_000_000, "+1.20s"},
		{1_204_999_999, "+1.20s"},
		{1_205_000_000, "+1.21s"},
		{999_999_999, "+1.00s"},
		{61_500_000_000, "+61.50s"},
		{-250_000_000, "-0.25s"},
	} {
		if got := model.FormatOffset(c.ns); got != c.want {
			t.Errorf("FormatOffset(%d) = %q, want %q", c.ns, got, c.want)
		}
	}
}

func TestTracedLater(t *testing.T) {
	p := modeltest.Sample()
	set := map[string]int64{"libc.so.6:usleep": 1_200_000_000, "compute": 300, "worker": 1_200_000_000, "fib": 0}
	for name, ns := range set {
		p.Functions[funcIndex(t, p, name)].TracedSinceNs = ns
	}
	var got []string
	for _, f := range p.TracedLater() {
		got = append(got, p.FuncName(f))
	}
	if want := []string{"compute", "libc.so.6:usleep", "worker"}; !slices.Equal(got, want) {
		t.Errorf("TracedLater = %v, want %v", got, want)
	}
}
