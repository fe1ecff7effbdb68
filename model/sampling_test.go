package model_test

import (
	"strings"
	"testing"

	"github.com/profile-dev/profile/model"
)

func TestSamplingValues(t *testing.T) {
	goCPU := &model.Sampling{Type: "cpu", Unit: "nanoseconds", PeriodType: "cpu", PeriodUnit: "nanoseconds", Period: 10_000_000}
	for _, c := range []struct {
		s    *model.Sampling
		want string
	}{
		{nil, "exact (traced calls)"},
		{goCPU, "sampled (cpu nanoseconds, 100 Hz), call counts unknown"},
		{&model.Sampling{Type: "cpu-clock_event", Unit: "count"}, "sampled (cpu-clock_event count), call counts unknown"},
		{&model.Sampling{Type: "wall", Unit: "microseconds", PeriodType: "wall", PeriodUnit: "microseconds", Period: 3000},
			"sampled (wall microseconds, every 3.00ms), call counts unknown"},
		{&model.Sampling{Type: "delay", Unit: "nanoseconds", PeriodType: "contentions", PeriodUnit: "count", Period: 1},
			"sampled (delay nanoseconds, every 1 count), call counts unknown"},
	} {
		m := model.Meta{Sampling: c.s}
		if got := m.Values(); got != c.want || m.Sampled() != (c.s != nil) {
			t.Errorf("Values() = %q, Sampled() = %v, want %q", got, m.Sampled(), c.want)
		}
	}
}

func TestUnitNs(t *testing.T) {
	for _, c := range []struct {
		unit string
		ns   int64
		ok   bool
	}{
		{"nanoseconds", 1, true}, {"us", 1e3, true}, {"milliseconds", 1e6, true}, {"seconds", 1e9, true},
		{"count", 0, false}, {"bytes", 0, false}, {"", 0, false},
	} {
		if ns, ok := model.UnitNs(c.unit); ns != c.ns || ok != c.ok {
			t.Errorf("UnitNs(%q) = %d, %v", c.unit, ns, ok)
		}
	}
}

func TestCompatibleValues(t *testing.T) {
	cpu := &model.Sampling{Type: "cpu", Unit: "nanoseconds", PeriodType: "cpu", PeriodUnit: "nanoseconds", Period: 10_000_000}
	cpu250 := *cpu
	cpu250.Period = 4_000_000
	wall := &model.Sampling{Type: "wall", Unit: "nanoseconds", PeriodType: "wall", PeriodUnit: "nanoseconds", Period: 1}
	for _, c := range []struct {
		a, b *model.Sampling
		err  string
	}{
		{nil, nil, ""},
		{cpu, &cpu250, ""}, // another rate, still cpu time
		{nil, cpu, "cannot combine exact (traced) values with sampled ones (cpu nanoseconds, 100 Hz)"},
		{cpu, nil, "cannot combine exact (traced) values with sampled ones"},
		{cpu, wall, "cannot combine samples of cpu nanoseconds, 100 Hz with samples of wall nanoseconds"},
	} {
		err := model.CompatibleValues(&model.Meta{Sampling: c.a}, &model.Meta{Sampling: c.b})
		if (err == nil) != (c.err == "") || err != nil && !strings.HasPrefix(err.Error(), c.err) {
			t.Errorf("CompatibleValues(%v, %v) = %v, want %q", c.a, c.b, err, c.err)
		}
	}
}
