package attach

import (
	"maps"
	"strings"
	"testing"

	"github.com/profile-dev/profile/instrument"
	"github.com/profile-dev/profile/model"
)

// contextCalls returns the calls of each function by path from the root
// (main>A>B>C>x), summed over threads.
func contextCalls(p *model.Profile) map[string]int64 {
	out := map[string]int64{}
	for _, th := range p.Threads {
		path := make([]string, len(th.Nodes))
		for i, n := range th.Nodes {
			if i == 0 {
				continue
			}
			name := p.Functions[n.Func].Name
			if n.Parent > 0 {
				path[i] = path[n.Parent] + ">" + name
			} else {
				path[i] = name
			}
			out[path[i]] += n.Calls
		}
	}
	return out
}

// The acceptance of issue #13's --context: on testdata/src/callees.c (C
// reached through A>B>C twice a round and D>C three times), C's callees
// x, y and puts, gated by the context A>B, are counted exactly as often
// as they run under A>B (x 60, y 40, puts 20 for 10 rounds) and never
// under D. Their calls outside the context make no ring event (inline:
// the entry stub lets 90 x, 60 y and 30 puts go, counted) and no stop
// (trap: the run stops exactly twice per traced call more than a run
// that does not trace them at all).
func TestContextRecordsOnlyInside(t *testing.T) {
	forEachProbe(t, func(t *testing.T, opt Options) {
		base, err := instrument.NewFilter([]string{"^callees:(main|C|D)$"}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		opt.Filter = base
		plain, _ := recordWorkload(t, "callees", opt)

		if opt.Filter, err = base.WithFunctions([]string{"callees:C", "callees:x", "callees:y", "libc.so.6:puts"}); err != nil {
			t.Fatal(err)
		}
		if opt.Context, err = instrument.ParseContext("A>B"); err != nil {
			t.Fatal(err)
		}
		opt.Context.Gate([]string{"callees:x", "callees:y", "libc.so.6:puts"})
		r, out := recordWorkload(t, "callees", opt)
		if !strings.Contains(out, "callees: rounds=10 ") {
			t.Fatalf("workload output: %q", out)
		}
		want := map[string]int64{
			"main": 1, "main>A": 10, "main>A>B": 10, "main>A>B>C": 20, "main>D": 10, "main>D>C": 30,
			"main>A>B>C>x": 20, "main>A>B>C>y": 40, "main>A>B>C>y>x": 40, "main>A>B>C>puts": 20,
		}
		if s := r.Stats.Context.Spec; s != "A>B" {
			t.Errorf("stats context %q", s)
		}
		if got := contextCalls(r.Profile); !maps.Equal(got, want) {
			t.Errorf("calls by path:\n got %v\nwant %v", got, want)
		}
		s := r.Stats
		switch opt.Probes {
		case ProbesInline:
			if s.Rings.Events != 2*s.TracedCalls || s.Context.OutsideCalls != 90+60+30 {
				t.Errorf("ring events %d for %d traced calls (want twice), calls let go outside the context %d (want 180)",
					s.Rings.Events, s.TracedCalls, s.Context.OutsideCalls)
			}
		case ProbesTrap:
			added := s.TracedCalls - plain.Stats.TracedCalls
			if s.Context.OutsideStops != 0 || s.Stops != plain.Stats.Stops+2*added {
				t.Errorf("stops %d, %d without x, y and puts traced (+2 per each of their %d calls wanted); stops outside the context %d (want 0)",
					s.Stops, plain.Stats.Stops, added, s.Context.OutsideStops)
			}
		}
	})
}
