package export_test

import (
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
	pp, err := export.Pprof(p)
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
	want := "cpu samples (not exported): 26 samples every 10ns (kernel too) — 3.70% in the probes' code"
	if !slices.Contains(pp.Comments, want) {
		t.Errorf("comments %q, want %q among them", pp.Comments, want)
	}
	for _, l := range export.Folded(p, export.Options{Value: export.Calls}) {
		if slices.Contains(l.Frames, "hash") {
			t.Errorf("folded line %s %d", strings.Join(l.Frames, ";"), l.Value)
		}
	}
}
