package export_test

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/profile-dev/profile/export"
	"github.com/profile-dev/profile/model/modeltest"
)

// Exports carry the measured values: a context CPU samples alone made
// (the counted hash's) is no stack, and pprof's comments say the samples
// were left out.
func TestCPUSampledExport(t *testing.T) {
	p := modeltest.CPUSampled()
	pp, err := export.Pprof(p, export.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(pp.Sample) != 12 { // the 12 measured contexts, START's of both threads included
		t.Errorf("%d samples, want 12", len(pp.Sample))
	}
	for _, s := range pp.Sample {
		if slices.Equal(s.Value, []int64{0, 0, 0}) || s.Location[0].Line[0].Function.Name == "hash" {
			t.Errorf("sample %v at %s", s.Value, s.Location[0].Line[0].Function.Name)
		}
	}
	want := "times: wall, measured; cpu samples (not exported): 26 samples every 10ns (kernel too) — 3.70% in the probes' code"
	if !slices.Contains(pp.Comments, want) {
		t.Errorf("comments %q, want %q among them", pp.Comments, want)
	}
	for _, l := range export.Folded(p, export.Options{Value: export.Calls}) {
		if slices.Contains(l.Frames, "hash") {
			t.Errorf("folded line %s %d", strings.Join(l.Frames, ";"), l.Value)
		}
	}
}

// Busy, as summary by default, exports carry the CPU samples' times: the
// counted hash's contexts are stacks with their samples' self time (30ns
// below main, 10ns at the top of thread 101, 20ns below compute), and
// pprof's comments say where the times come from.
func TestCPUSampledBusyExport(t *testing.T) {
	p := modeltest.CPUSampled()
	opt := export.Options{Busy: true}
	got := map[string]int64{}
	for _, l := range export.Folded(p, opt) {
		if l.Frames[len(l.Frames)-1] == "hash" {
			got[strings.Join(l.Frames, ";")] = l.Value
		}
	}
	want := map[string]int64{"main;hash": 30, "hash": 10, "worker;compute;hash": 20}
	if !maps.Equal(got, want) {
		t.Errorf("hash's folded lines %v, want %v", got, want)
	}
	pp, err := export.Pprof(p, opt)
	if err != nil {
		t.Fatal(err)
	}
	var hash, all int64
	for _, s := range pp.Sample {
		all += s.Value[1]
		if s.Location[0].Line[0].Function.Name == "hash" {
			hash += s.Value[1]
		}
	}
	if hash != 60 || all != 260 {
		t.Errorf("pprof: hash self %dns of %dns, want 60 of 260 (26 samples of 10ns)", hash, all)
	}
	wantC := "times: busy, from cpu samples: 26 samples every 10ns (kernel too) — 3.70% in the probes' code"
	if !slices.Contains(pp.Comments, wantC) {
		t.Errorf("comments %q, want %q among them", pp.Comments, wantC)
	}
}
