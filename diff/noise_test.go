package diff_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/profile-dev/profile/diff"
)

func TestParseNoise(t *testing.T) {
	cases := []struct {
		in   string
		want diff.Noise
		err  string
	}{
		{"0.1%", diff.Noise{Pct: 0.1}, ""},
		{" 2% ", diff.Noise{Pct: 2}, ""},
		{"0", diff.Noise{}, ""},
		{"0%", diff.Noise{}, ""},
		{"100us", diff.Noise{Ns: 100e3}, ""},
		{"100µs", diff.Noise{Ns: 100e3}, ""},
		{"1.5ms", diff.Noise{Ns: 1.5e6}, ""},
		{"150%", diff.Noise{}, "out of range"},
		{"100", diff.Noise{}, "a time with its unit"},
		{"-1ms", diff.Noise{}, "a time with its unit"},
		{"lots", diff.Noise{}, "a time with its unit"},
		{"", diff.Noise{}, "a time with its unit"},
	}
	for _, c := range cases {
		got, err := diff.ParseNoise(c.in)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("ParseNoise(%q) = %+v, %v; want an error containing %q", c.in, got, err, c.err)
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("ParseNoise(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}
}

// The noise floor of a one-second run, 1ms by default: 4ns → 1.28ms is
// listed as new, not +32079900%; +7.49µs from next to nothing is not
// listed, nor gated; a 2ms change of a function that was already there
// keeps its percentage. --noise 0 lists and gates them all.
func TestNoiseFloor(t *testing.T) {
	fn := func(name string, base, new int64) diff.Function {
		return diff.Function{Name: name, Module: "app", Display: name, Short: name, Status: diff.Both,
			Calls: diff.Delta{Base: 1, New: 1}, Self: delta(base, new), Total: delta(base, new)}
	}
	res := &diff.Result{Base: diff.Side{TracedNs: 1e9}, New: diff.Side{TracedNs: 0.9e9},
		Functions: []diff.Function{fn("blip", 4, 1.28e6), fn("tiny", 10, 7500), fn("steady", 8e6, 10e6)}}
	gate, err := diff.ParseGate("self>+10%")
	must(t, err)
	noise, err := diff.ParseNoise(diff.DefaultNoise)
	must(t, err)
	for _, c := range []struct {
		noise           diff.Noise
		listed, breaks  string
		text, notInText string
	}{
		{noise, "steady blip", "steady blip", "│ new │", "+31999900.00%"},
		{diff.Noise{}, "steady blip tiny", "steady blip tiny", "+31999900.00%", "│ new │"},
	} {
		rep, err := res.Report(diff.Options{Noise: c.noise, Gates: []*diff.Gate{gate}})
		must(t, err)
		var listed, breaks []string
		for _, f := range rep.Functions {
			listed = append(listed, f.Name)
		}
		for _, b := range rep.Breaches {
			breaks = append(breaks, b.Function.Name)
		}
		var buf bytes.Buffer
		must(t, diff.WriteText(&buf, rep))
		s := strings.ReplaceAll(buf.String(), "  ", " ")
		for strings.Contains(s, "  ") {
			s = strings.ReplaceAll(s, "  ", " ")
		}
		if strings.Join(listed, " ") != c.listed || strings.Join(breaks, " ") != c.breaks ||
			!strings.Contains(s, c.text) || strings.Contains(s, c.notInText) {
			t.Errorf("noise %+v: listed %q, breaks %q; want %q, %q; text:\n%s", c.noise, listed, breaks, c.listed, c.breaks, buf.String())
		}
	}
}

func delta(base, new int64) diff.Delta {
	d := diff.Delta{Base: base, New: new, Delta: new - base}
	if base != 0 {
		d.RelPct = 100 * float64(d.Delta) / float64(base)
	}
	return d
}

// Times per call need call counts, which a sampled profile lacks: the view
// and a per-call gate are refused on one, as a calls gate is.
func TestPerCallNeedsCalls(t *testing.T) {
	res := &diff.Result{Base: diff.Side{Sampled: true}, New: diff.Side{Sampled: true}}
	perCall, err := diff.ParseGate("self/call>+20%")
	must(t, err)
	self, err := diff.ParseGate("self>+20%")
	must(t, err)
	for _, c := range []struct {
		opt diff.Options
		err string
	}{
		{diff.Options{PerCall: true}, "per call: the profiles' values are sampled"},
		{diff.Options{Gates: []*diff.Gate{perCall}}, "gate self/call>+20%: the profiles' values are sampled"},
		{diff.Options{Gates: []*diff.Gate{self}}, ""},
	} {
		_, err := res.Report(c.opt)
		if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%+v: %v, want %q", c.opt, err, c.err)
		}
	}
}
