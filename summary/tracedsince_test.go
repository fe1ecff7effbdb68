package summary_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/profile-dev/profile/model"
	"github.com/profile-dev/profile/model/modeltest"
	"github.com/profile-dev/profile/summary"
)

// cppTracedLater is modeltest.CPP with two functions traced only from
// later in the run (record --auto-expand).
func cppTracedLater() *model.Profile {
	p := modeltest.CPP()
	for f := range p.Functions {
		switch p.FuncName(f) {
		case "std::vector<long, std::allocator<long> >::push_back(long const&)":
			p.Functions[f].TracedSinceNs = 1_200_000_000
		case "libstdc++.so.6:operator new(unsigned long)":
			p.Functions[f].TracedSinceNs = 2_504_000_000
		}
	}
	return p
}

func TestTracedSince(t *testing.T) {
	const prefix = "traced only from later in the run (counts from then on): "
	cases := []struct {
		name     string
		p        func() *model.Profile
		opt      summary.Options
		since    map[string]int64 // Function.Name -> TracedSinceNs
		table    string           // the note in the table ("" = none)
		markdown string
	}{
		{"from the start", modeltest.CPP, summary.Options{}, nil, "", ""},
		{"later", cppTracedLater, summary.Options{},
			map[string]int64{"std::vector<long, std::allocator<long> >::push_back(long const&)": 1_200_000_000,
				"operator new(unsigned long)": 2_504_000_000, "main": 0},
			prefix + "std::vector<…>::push_back from +1.20s, operator new from +2.50s",
			prefix + "`std::vector<…>::push_back` from +1.20s, `operator new` from +2.50s"},
		{"full names", cppTracedLater, summary.Options{FullNames: true}, nil,
			prefix + "std::vector<long, std::allocator<long> >::push_back(long const&) from +1.20s, operator new(unsigned long) from +2.50s",
			prefix + "`std::vector<long, std::allocator<long> >::push_back(long const&)` from +1.20s, `operator new(unsigned long)` from +2.50s"},
		// only the listed functions: both fall outside the top 1
		{"not listed", cppTracedLater, summary.Options{Top: 1}, nil, "", ""},
		{"busy", cppTracedLater, summary.Options{Busy: true},
			map[string]int64{"operator new(unsigned long)": 2_504_000_000}, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := mustCompute(t, c.p(), c.opt)
			for _, f := range r.Functions {
				if want, ok := c.since[f.Name]; ok && f.TracedSinceNs != want {
					t.Errorf("%s traced since %d ns, want %d", f.Name, f.TracedSinceNs, want)
				}
			}
			var tb, md bytes.Buffer
			must(t, summary.WriteTable(&tb, r))
			must(t, summary.WriteMarkdown(&md, r))
			for _, x := range []struct {
				format, out, want, before string
			}{{"table", tb.String(), c.table, "\nHottest edges"}, {"markdown", md.String(), c.markdown, "\n## Hottest edges"}} {
				if c.name == "busy" {
					continue // only the numbers: the note is the "later" case's
				}
				i := strings.Index(x.out, prefix)
				if x.want == "" {
					if i >= 0 {
						t.Errorf("%s: unexpected note:\n%s", x.format, x.out)
					}
					continue
				}
				// the note is one line of its own, right after the functions
				// table, a blank line before the next section
				if !strings.Contains(x.out, "\n"+x.want+"\n"+x.before) {
					t.Errorf("%s: want the line\n%s\nbefore %q in\n%s", x.format, x.want, x.before, x.out)
				}
				if j := strings.Index(x.out, "Hottest functions"); j < 0 || j > i {
					t.Errorf("%s: the note is not after the functions table", x.format)
				}
			}
		})
	}
}

// A function whose hot trap probe was taken out is noted with its end,
// after the functions traced from later, and its JSON carries
// traced_until_ns.
func TestTracedUntil(t *testing.T) {
	p := cppTracedLater()
	for f := range p.Functions {
		if p.FuncName(f) == "main" {
			p.Functions[f].TracedUntilNs = 3_000_000_000
		}
	}
	r := mustCompute(t, p, summary.Options{})
	var tb, js bytes.Buffer
	must(t, summary.WriteTable(&tb, r))
	must(t, summary.WriteJSON(&js, r))
	want := "traced only from later in the run (counts from then on): std::vector<…>::push_back from +1.20s, operator new from +2.50s; " +
		"traced only until its probe was taken out (a hot trap probe; counts until then): main until +3.00s\n"
	if !strings.Contains(tb.String(), "\n"+want) {
		t.Errorf("table: want the line\n%s\nin\n%s", want, tb.String())
	}
	if n := strings.Count(js.String(), `"traced_until_ns": 3000000000`); n != 1 {
		t.Errorf("JSON has traced_until_ns %d times, want once:\n%s", n, js.String())
	}
}
