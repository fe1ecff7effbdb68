package diff_test

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/profile-dev/profile/diff"
)

func TestParseGate(t *testing.T) {
	self, calls, total := diff.MetricSelf, diff.MetricCalls, diff.MetricTotal
	cases := []struct {
		expr  string
		scope string // the regexp, "" for none
		conds []diff.Cond
	}{
		{"self>+10%", "", []diff.Cond{{Metric: self, Percent: true, Amount: 10}}},
		{"self>10%", "", []diff.Cond{{Metric: self, Percent: true, Amount: 10}}},
		{" total > +5ms ", "", []diff.Cond{{Metric: total, Amount: 5e6}}},
		{"total>+1.5s", "", []diff.Cond{{Metric: total, Amount: 1.5e9}}},
		{"self>+250us", "", []diff.Cond{{Metric: self, Amount: 250e3}}},
		{"self>+250µs", "", []diff.Cond{{Metric: self, Amount: 250e3}}},
		{"self>+0ns", "", []diff.Cond{{Metric: self}}},
		{"calls>+1000", "", []diff.Cond{{Metric: calls, Amount: 1000}}},
		{"calls>+0.5%", "", []diff.Cond{{Metric: calls, Percent: true, Amount: 0.5}}},
		{"self<-10%", "", []diff.Cond{{Metric: self, Decrease: true, Percent: true, Amount: 10}}},
		{"calls<-3", "", []diff.Cond{{Metric: calls, Decrease: true, Amount: 3}}},
		{"self>+10%&self>+1ms", "", []diff.Cond{{Metric: self, Percent: true, Amount: 10}, {Metric: self, Amount: 1e6}}},
		{"self/call>+20%", "", []diff.Cond{{Metric: diff.MetricSelfPerCall, Percent: true, Amount: 20}}},
		{"total/call > +2us & calls>+0", "", []diff.Cond{{Metric: diff.MetricTotalPerCall, Amount: 2e3}, {Metric: calls}}},
		{"func~::run$:total/call<-1ms", "::run$", []diff.Cond{{Metric: diff.MetricTotalPerCall, Decrease: true, Amount: 1e6}}},
		{"func~^parse:self>+10%", "^parse", []diff.Cond{{Metric: self, Percent: true, Amount: 10}}},
		// the scope ends at the last ':' (C++ and library names hold some)
		{"func~^ns::f|libc.so.6:read$:calls>+1&total>+1ms", "^ns::f|libc.so.6:read$",
			[]diff.Cond{{Metric: calls, Amount: 1}, {Metric: total, Amount: 1e6}}},
	}
	for _, c := range cases {
		g, err := diff.ParseGate(c.expr)
		if err != nil {
			t.Errorf("ParseGate(%q): %v", c.expr, err)
			continue
		}
		scope := ""
		if g.Scope != nil {
			scope = g.Scope.String()
		}
		if scope != c.scope || !reflect.DeepEqual(g.Conds, c.conds) || g.Expr != strings.TrimSpace(c.expr) {
			t.Errorf("ParseGate(%q) = scope %q %+v, want %q %+v", c.expr, scope, g.Conds, c.scope, c.conds)
		}
	}
}

func TestParseGateErrors(t *testing.T) {
	cases := []struct{ expr, want string }{
		{"", "empty condition"},
		{"self", "has no > or <"},
		{"speed>+10%", `unknown metric "speed"`},
		{">+10%", `unknown metric ""`},
		{"self>-10%", "write self<-10% for a decrease"},
		{"self<10%", "write self<-10% for a decrease"},
		{"self<+10%", "would hold for almost every function"},
		{"self>+10", "a time needs a unit"},
		{"self/call>+10", "a time needs a unit"},
		{"calls/call>+1", `unknown metric "calls/call"`},
		{"total>+5", "a time needs a unit"},
		{"total>+5m", "not a duration"},
		{"total>+fastms", "not a duration"},
		{"calls>+5ms", "not a number of calls"},
		{"calls>+1.5", "not a number of calls"},
		{"self>+ten%", "not a percentage"},
		{"self>+%", "not a percentage"},
		{"self>+-5%", "the amount must be a finite number"},
		{"self>+NaN%", "the amount must be a finite number"},
		{"self>+infms", "the amount must be a finite number"},
		{"self>+10%&", "empty condition"},
		{"self>+10%&&calls>+1", "empty condition"},
		{"fn~x:self>+10%", "must be func~REGEX"},
		{"func~:self>+10%", "empty regular expression"},
		{"func~(:self>+10%", "missing closing )"},
		{"func~x:", "empty condition"},
		{"self=+10%", "has no > or <"},
		{"self>>10%", "not a percentage"},
	}
	for _, c := range cases {
		g, err := diff.ParseGate(c.expr)
		if err == nil {
			t.Errorf("ParseGate(%q) = %+v, want an error", c.expr, g)
			continue
		}
		if !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "gate ") {
			t.Errorf("ParseGate(%q): %v, want an error naming the gate and containing %q", c.expr, err, c.want)
		}
	}
}

func TestGateBreaks(t *testing.T) {
	inf := math.Inf(1)
	fn := func(display string, calls, self diff.Delta) *diff.Function {
		return &diff.Function{Name: display, Module: "app", Display: display, Calls: calls, Self: self}
	}
	grew := fn("hot", diff.Delta{Base: 20, New: 20}, diff.Delta{Base: 10e6, New: 80e6, Delta: 70e6, RelPct: 700})
	jitter := fn("tiny", diff.Delta{Base: 1, New: 1}, diff.Delta{Base: 1000, New: 3000, Delta: 2000, RelPct: 200})
	shrank := fn("lib.so:gone", diff.Delta{Base: 10, Delta: -10, RelPct: -100}, diff.Delta{Base: 5e6, Delta: -5e6, RelPct: -100})
	added := fn("fresh", diff.Delta{New: 1000, Delta: 1000, RelPct: inf}, diff.Delta{New: 1, Delta: 1, RelPct: inf})
	// twice the calls at the same time per call; 4ns to 1.28ms in one call
	twice := fn("twice", diff.Delta{Base: 1000, New: 2000, Delta: 1000, RelPct: 100}, diff.Delta{Base: 10e6, New: 20e6, Delta: 10e6, RelPct: 100})
	blip := fn("blip", diff.Delta{Base: 1, New: 1}, diff.Delta{Base: 4, New: 1.28e6, Delta: 1.28e6 - 4, RelPct: 31999900})
	start := &diff.Function{Name: "START", Display: "START", Self: diff.Delta{Base: 1, New: 1e9, Delta: 1e9 - 1, RelPct: 1e11}}
	all := []*diff.Function{grew, jitter, shrank, added, twice, blip, start}
	cases := []struct {
		expr   string
		floor  int64 // noise floor, ns
		breaks string
	}{
		{"self>+50%", 0, "hot tiny fresh twice blip"},
		{"self>+50%&self>+1ms", 0, "hot twice blip"},
		{"self>+700%", 0, "fresh blip"}, // more than 700%: 700 exactly is not; new is infinitely more
		{"self>+699.9%", 0, "hot fresh blip"},
		{"self<-50%", 0, "lib.so:gone"},
		{"self<-5ms", 0, ""},
		{"self<-4.9ms", 0, "lib.so:gone"},
		{"calls>+999", 0, "fresh twice"},
		{"calls>+1000", 0, ""},
		{"calls<-9", 0, "lib.so:gone"},
		{"func~^lib\\.so::self<-10%", 0, "lib.so:gone"},
		{"func~^t:self>+0%", 0, "tiny twice"},
		{"func~h:self>+0%", 0, "hot fresh"},
		{"total>+0ns", 0, ""}, // totals unchanged here
		// per call: twice's time per call did not change; gone's fell to nothing
		{"self/call>+20%", 0, "hot tiny fresh blip"},
		{"self/call<-50%", 0, "lib.so:gone"},
		{"total/call>+0ns", 0, ""},
		// a noise floor: tiny's +2µs and fresh's 1ns are under 1ms, blip's
		// 1.28ms is not and its 4ns base is nothing: new
		{"self>+50%", 1e6, "hot twice blip"},
		{"self>+1000000%", 1e6, "blip"},
		{"self>+50%", 2e6, "hot twice"},
		{"self<-50%", 10e6, ""},
		{"self/call>+20%", 1e6, "hot blip"}, // hot: 3.5ms more a call, 20 calls
		{"self/call>+20%", 80e6, ""},
		{"calls>+999", 1e9, "fresh twice"}, // calls are exact: no floor
	}
	for _, c := range cases {
		g, err := diff.ParseGate(c.expr)
		must(t, err)
		var got []string
		for _, f := range all {
			if g.Breaks(f, c.floor) {
				got = append(got, f.Display)
			}
		}
		if strings.Join(got, " ") != c.breaks {
			t.Errorf("%s (floor %d) broken by %q, want %q", c.expr, c.floor, strings.Join(got, " "), c.breaks)
		}
	}
}
