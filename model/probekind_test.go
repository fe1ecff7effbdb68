package model_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/profile-dev/profile/model"
	"github.com/profile-dev/profile/model/modeltest"
)

func TestProbeKindRoundTrip(t *testing.T) {
	p := modeltest.Counted()
	fib := funcIndex(t, p, "fib")
	p.Functions[fib].Probe = model.ProbeTrap
	p.Functions[fib].ProbeNote = "a branch at +0xaa lands inside the first 5 bytes"
	p.Functions[fib].TracedUntilNs = 2_500_000_000
	p.Functions[funcIndex(t, p, "main")].Probe = model.ProbeInline
	if q := roundTrip(t, p); !reflect.DeepEqual(p, q) {
		t.Fatalf("round trip differs:\n got %+v\nwant %+v", q.Functions, p.Functions)
	}
}

// A file written before probe kinds were recorded reads as unknown, and
// lists no function without an inline probe.
func TestProbeKindOldFile(t *testing.T) {
	p, err := model.ReadFile("testdata/sample-v1.data")
	if err != nil {
		t.Fatal(err)
	}
	for f, fn := range p.Functions {
		if fn.Probe != model.ProbeUnknown || fn.ProbeNote != "" || fn.TracedUntilNs != 0 {
			t.Errorf("function %s: probe %v %q until %d, want unknown", p.FuncName(f), fn.Probe, fn.ProbeNote, fn.TracedUntilNs)
		}
	}
	if rows := p.NotInline(); len(rows) != 0 {
		t.Errorf("NotInline = %v, want none", rows)
	}
}

// NotInline lists trap and no-probe functions with their calls summed
// over every thread (fib: 3 on thread 100, 2 in the forked child),
// the most called first.
func TestNotInline(t *testing.T) {
	p := modeltest.Sample()
	set := func(name string, k model.ProbeKind, note string) int {
		f := funcIndex(t, p, name)
		p.Functions[f].Probe, p.Functions[f].ProbeNote = k, note
		return f
	}
	set("main", model.ProbeInline, "")
	set("spawn_workers", model.ProbeTrap, "") // asked for: not listed
	compute := set("compute", model.ProbeTrap, "returns twice")
	fib := set("fib", model.ProbeTrap, "indirect jump in the prologue")
	worker := set("worker", model.ProbeNone, "function of 3 bytes is shorter than the jump")
	set("child_work", model.ProbeCounted, "counted at its call sites") // asked for (--counted): not listed, note or not
	p.Functions[fib].TracedUntilNs = 7
	want := []model.ProbeRow{
		{Func: fib, Probe: model.ProbeTrap, Note: "indirect jump in the prologue", Calls: 5, UntilNs: 7},
		{Func: worker, Probe: model.ProbeNone, Note: "function of 3 bytes is shorter than the jump", Calls: 3},
		{Func: compute, Probe: model.ProbeTrap, Note: "returns twice", Calls: 2},
	}
	if got := p.NotInline(); !reflect.DeepEqual(got, want) {
		t.Fatalf("NotInline =\n%+v\nwant\n%+v", got, want)
	}
}

func TestProbeKindValidate(t *testing.T) {
	cases := []struct {
		name   string
		change func(p *model.Profile)
		want   string // "" = valid
	}{
		{"trap until later", func(p *model.Profile) {
			p.Functions[2].Probe, p.Functions[2].TracedUntilNs = model.ProbeTrap, 5e9
		}, ""},
		{"unknown kind", func(p *model.Profile) { p.Functions[2].Probe = 9 }, "function 2 (fib): unknown probe kind 9"},
		{"counted", func(p *model.Profile) { p.Functions[2].Probe = model.ProbeCounted }, ""},
		{"after counted", func(p *model.Profile) { p.Functions[2].Probe = model.ProbeCounted + 1 }, "function 2 (fib): unknown probe kind 5"},
		{"until before since", func(p *model.Profile) {
			p.Functions[2].TracedSinceNs, p.Functions[2].TracedUntilNs = 10, 5
		}, "traced-until time 5 ns before its traced-since time 10 ns"},
		{"negative until", func(p *model.Profile) { p.Functions[2].TracedUntilNs = -1 }, "traced-until time -1 ns"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := modeltest.Sample()
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

func TestProbeKindString(t *testing.T) {
	for k, want := range map[model.ProbeKind]string{
		model.ProbeUnknown: "unknown", model.ProbeInline: "inline", model.ProbeTrap: "trap", model.ProbeNone: "none",
		model.ProbeCounted: "counted", 7: "probe(7)",
	} {
		if got := k.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", k, got, want)
		}
	}
}
