package summary_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/profile-dev/profile/merge"
	"github.com/profile-dev/profile/model"
	"github.com/profile-dev/profile/model/modeltest"
	"github.com/profile-dev/profile/summary"
)

// cpuMerged is two runs of modeltest.CPUSampled merged, the second
// sampled at another period and with a thread it could not sample.
func cpuMerged(t *testing.T) *model.Profile {
	t.Helper()
	second := modeltest.CPUSampled()
	second.Processes[0].Pid = 2
	second.Meta.CPUSamples.PeriodNs = 20
	second.Meta.CPUSamples.NotSampled = "perf_event_open: permission denied"
	m, err := merge.Merge(modeltest.CPUSampled(), second)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// busyTimesText is the profile table's "busy times" row for c.
func busyTimesText(c *summary.CPUSamples, busy bool) string {
	s := (&model.CPUSamples{PeriodNs: c.PeriodNs, Samples: c.Samples, Kernel: c.Kernel, InProbes: c.InProbes, Lost: c.Lost,
		WithKernel: c.WithKernel, NotSampled: c.NotSampled}).String()
	if busy {
		return "sampled: " + s
	}
	return "sampled (not shown: --scope wall): " + s
}

// funcRow is a function of a report as the tests compare it.
type funcRow struct {
	calls, self, total int64
	counted            bool
}

// With CPU samples, busy times are the samples' (modeltest.CPUSampled,
// 10ns a sample): a waiting call on a CPU keeps its time, a counted
// function sampled has its sampled time, one never sampled stays
// counted; --scope wall keeps the measured times, where both counted
// functions are counted.
func TestCPUSampledSummary(t *testing.T) {
	for _, c := range []struct {
		name        string
		opt         summary.Options
		traced      int64
		busySampled bool
		funcs       map[string]funcRow
		counted     int
		note        string
	}{
		{"busy", summary.Options{Busy: true}, 260, true, map[string]funcRow{
			"hash":     {11, 60, 60, false}, // 3 + 1 + 2 samples, in its three sample-only contexts
			"checksum": {2, 0, 0, true},
			"read":     {1, 20, 20, false},
			"usleep":   {1, 0, 0, false},
			"fib":      {3, 60, 60, false},
			"main":     {1, 40, 160, false},
			"START":    {0, 10, 260, false},
		}, 1, "1 function only counted (--counted): exact calls, no CPU sample in its code"},
		{"wall", summary.Options{}, 1_448, false, map[string]funcRow{
			"hash":     {11, 0, 0, true},
			"checksum": {2, 0, 0, true},
			"read":     {1, 500, 500, false},
			"usleep":   {1, 300, 300, false},
		}, 2, "2 functions only counted (--counted): exact calls, their time is in their callers' self time"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := mustCompute(t, modeltest.CPUSampled(), c.opt)
			if r.Totals.TracedNs != c.traced || r.Totals.BusySampled != c.busySampled || r.Totals.WallNs != 1_448 {
				t.Errorf("traced %d, busy sampled %v, wall %d; want %d, %v, 1448", r.Totals.TracedNs, r.Totals.BusySampled,
					r.Totals.WallNs, c.traced, c.busySampled)
			}
			if cs := r.Meta.CPUSamples; cs == nil || cs.Samples != 26 || cs.PeriodNs != 10 || cs.InProbesPct != 100.0/27 {
				t.Errorf("cpu samples %+v, want 26 every 10ns, 1 in the probes", cs)
			}
			got := map[string]funcRow{}
			for _, f := range r.Functions {
				got[f.Name] = funcRow{f.Calls, f.SelfNs, f.TotalNs, f.Counted}
			}
			for name, want := range c.funcs {
				if got[name] != want {
					t.Errorf("%s: %+v, want %+v", name, got[name], want)
				}
			}
			if r.CountedFuncs != c.counted {
				t.Errorf("%d functions counted, want %d", r.CountedFuncs, c.counted)
			}
			var tb bytes.Buffer
			must(t, summary.WriteTable(&tb, r))
			for _, want := range []string{c.note, busyTimesText(r.Meta.CPUSamples, c.opt.Busy)} {
				if !strings.Contains(tb.String(), want) {
					t.Errorf("table lacks %q:\n%s", want, tb.String())
				}
			}
		})
	}
}

// A merge of runs sampled at different periods, one with a thread not
// sampled, says both; without samples there is no busy times row.
func TestCPUSamplesRow(t *testing.T) {
	for _, c := range []struct {
		name string
		p    *model.Profile
		opt  summary.Options
		want string // "" for no row
	}{
		{"merged", cpuMerged(t), summary.Options{Busy: true}, "sampled: 52 samples at mixed periods (kernel too) — 3.70% in the probes' code; " +
			"some threads' times measured, not sampled: perf_event_open: permission denied"},
		{"wall", modeltest.CPUSampled(), summary.Options{}, "sampled (not shown: --scope wall): 26 samples every 10ns (kernel too) — 3.70% in the probes' code"},
		{"not sampled", modeltest.Sample(), summary.Options{Busy: true}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			var tb bytes.Buffer
			must(t, summary.WriteTable(&tb, mustCompute(t, c.p, c.opt)))
			var row string
			for _, line := range strings.Split(tb.String(), "\n") {
				if strings.Contains(line, "│ busy times ") {
					row = strings.TrimSpace(strings.Trim(strings.SplitN(line, "│", 3)[2], "│ "))
				}
			}
			if row != c.want {
				t.Errorf("busy times row %q, want %q", row, c.want)
			}
		})
	}
}

// With CPU samples of the kernel too, a waiting call's wall time splits
// into the CPU time sampled inside it and the time it was blocked
// (modeltest.CPUSampled: read 500ns wall with 2 samples of 10ns, usleep
// 300ns with none), under either scope; samples of user mode only, or a
// thread not sampled, leave the whole wall time blocked.
func TestWaitingCallsSplitOnCPU(t *testing.T) {
	type split struct{ wall, onCPU, blocked int64 }
	for _, c := range []struct {
		name  string
		edit  func(*model.CPUSamples)
		busy  bool
		split bool
	}{
		{"busy", func(*model.CPUSamples) {}, true, true},
		{"wall", func(*model.CPUSamples) {}, false, true},
		{"user mode only", func(s *model.CPUSamples) { s.WithKernel = false }, true, false},
		{"a thread not sampled", func(s *model.CPUSamples) { s.NotSampled = "perf_event_open: permission denied" }, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := modeltest.CPUSampled()
			c.edit(p.Meta.CPUSamples)
			r := mustCompute(t, p, summary.Options{Busy: c.busy})
			want := map[string]split{"libc.so.6:read": {500, 20, 480}, "libc.so.6:usleep": {300, 0, 300}}
			wantCPU, wantBlocked := int64(20), int64(780)
			if !c.split {
				want = map[string]split{"libc.so.6:read": {500, 0, 500}, "libc.so.6:usleep": {300, 0, 300}}
				wantCPU, wantBlocked = 0, 800
			}
			got := map[string]split{}
			for _, b := range r.Blocking {
				got[b.Display] = split{b.WallNs, b.OnCPUNs, b.BlockedNs}
			}
			if len(got) != len(want) {
				t.Errorf("waiting calls %v, want %v", got, want)
			}
			for name, w := range want {
				if got[name] != w {
					t.Errorf("%s: %+v, want %+v", name, got[name], w)
				}
			}
			if tt := r.Totals; tt.WaitingCPU != c.split || tt.WaitingCPUNs != wantCPU || tt.BlockedNs != wantBlocked {
				t.Errorf("totals: split %v, on CPU %d, blocked %d; want %v, %d, %d", tt.WaitingCPU, tt.WaitingCPUNs, tt.BlockedNs, c.split, wantCPU, wantBlocked)
			}
		})
	}
}
