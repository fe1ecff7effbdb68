package merge

import (
	"strings"
	"testing"

	"github.com/profile-dev/profile/model/modeltest"
)

// Sampled profiles merge with sampled ones of the same type only, and the
// composite keeps their sampling.
func TestMergeSampled(t *testing.T) {
	m, err := Merge(modeltest.Sampled(), modeltest.Sampled())
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := m.Meta.Values(); got != "sampled (cpu nanoseconds, 100 Hz), call counts unknown" {
		t.Errorf("merged values: %s", got)
	}
	faster := modeltest.Sampled()
	faster.Meta.Sampling.Period = 4_000_000
	if m, err = Merge(modeltest.Sampled(), faster); err != nil || m.Meta.Values() != "sampled (cpu nanoseconds), call counts unknown" {
		t.Errorf("rates 100 and 250 Hz merged: %v, %s", err, m.Meta.Values())
	}
	_, err = MergeRuns([]Run{{Name: "a.data", Profile: modeltest.Sample()}, {Name: "cpu.data", Profile: modeltest.Sampled()}})
	if want := "merge a.data and cpu.data: cannot combine exact (traced) values with sampled ones (cpu nanoseconds, 100 Hz)"; err == nil || err.Error() != want {
		t.Errorf("exact with sampled: %v, want %s", err, want)
	}
	wall := modeltest.Sampled()
	wall.Meta.Sampling.Type, wall.Meta.Sampling.PeriodType = "wall", "wall"
	if _, err = Merge(modeltest.Sampled(), wall); err == nil || !strings.Contains(err.Error(), "cannot combine samples of cpu") {
		t.Errorf("cpu with wall samples: %v", err)
	}
}
