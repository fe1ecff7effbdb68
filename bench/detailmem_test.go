package main

import "testing"

func TestParseMemory(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		rss, hwm int64
		err      bool
	}{
		{"status", "Name:\tprofile\nVmPeak:\t 1300000 kB\nVmHWM:\t   32736 kB\nVmRSS:\t   32584 kB\nRssAnon:\t 9000 kB\n", 32584, 32736, false},
		{"kernel thread", "Name:\tkworker\nState:\tI (idle)\n", 0, 0, true},
		{"no HWM", "VmRSS:\t 100 kB\n", 0, 0, true},
		{"garbled", "VmHWM:\t 1 kB\nVmRSS:\t x kB\n", 0, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rss, hwm, err := parseMemory(tc.in)
			if (err != nil) != tc.err || rss != tc.rss || hwm != tc.hwm {
				t.Errorf("parseMemory = %d, %d, %v; want %d, %d, error %v", rss, hwm, err, tc.rss, tc.hwm, tc.err)
			}
		})
	}
}

func TestMemGoal(t *testing.T) {
	for _, tc := range []struct {
		early, end int64
		want       bool
	}{
		{32000, 32000, true},
		{32000, 35200, true},  // exactly 10% more
		{32000, 35201, false}, // just over
		{32000, 20000, true},  // shrinking is not growing
		{0, 100, false},       // no early figure
	} {
		if got := memGoal(tc.early, tc.end); got != tc.want {
			t.Errorf("memGoal(%d, %d) = %v, want %v", tc.early, tc.end, got, tc.want)
		}
	}
}

func TestDetailCostRatio(t *testing.T) {
	for _, tc := range []struct {
		rounds     []float64
		ratio, met string
	}{
		{[]float64{1.10}, "1.10×", "met"},
		{[]float64{1.30, 1.20, 1.05}, "1.20×", "met"},
		{[]float64{1.39, 1.0, 1.5}, "1.39×", "**not met**"},
		{nil, "n/a", "n/a (plain ≤ 0)"},
	} {
		r, met := ratioOf(tc.rounds)
		if r != tc.ratio || met != tc.met {
			t.Errorf("ratioOf(%v) = %q, %q; want %q, %q", tc.rounds, r, met, tc.ratio, tc.met)
		}
	}
}
