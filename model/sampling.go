package model

import (
	"fmt"
	"strconv"

	"github.com/profile-dev/profile/internal/human"
)

// Sampling describes the values of a profile imported from a sampling
// profiler (a pprof profile): its times are estimates, samples times the
// sampling period, and it has no call counts (every Calls is 0). Totals
// are still recursion-aware: a sample counts once for each function on
// its stack, in that function's outermost context.
type Sampling struct {
	Type string // the source's sample type, e.g. "cpu"
	Unit string // its unit there, e.g. "nanoseconds" (converted to ns here)
	// The sampling period, when the source gives one: 10000000 of cpu
	// nanoseconds for a Go CPU profile (100 Hz).
	PeriodType string
	PeriodUnit string
	Period     int64
}

// Sampled reports whether the profile's values are sampled rather than
// traced.
func (m *Meta) Sampled() bool { return m.Sampling != nil }

// Values says in a few words where the profile's numbers come from:
// "exact (traced calls)" or, for example, "sampled (cpu nanoseconds,
// 100 Hz), call counts unknown".
func (m *Meta) Values() string {
	if m.Sampling == nil {
		return "exact (traced calls)"
	}
	return "sampled (" + m.Sampling.String() + "), call counts unknown"
}

// String is the sample type and unit with the sampling rate when known:
// "cpu nanoseconds, 100 Hz", "cpu-clock_event count".
func (s *Sampling) String() string {
	out := s.Type
	if s.Unit != "" {
		out += " " + s.Unit
	}
	if s.Period <= 0 {
		return out
	}
	ns, ok := UnitNs(s.PeriodUnit)
	switch {
	case !ok:
		return out + ", every " + strconv.FormatInt(s.Period, 10) + " " + s.PeriodUnit
	case ns*s.Period > 0 && 1e9%(ns*s.Period) == 0:
		return out + ", " + strconv.FormatInt(1e9/(ns*s.Period), 10) + " Hz"
	}
	return out + ", every " + human.Duration(ns*s.Period)
}

// UnitNs is the length of one unit of time in nanoseconds, for the unit
// names pprof profiles use; ok is false for units that are not time.
func UnitNs(unit string) (ns int64, ok bool) {
	switch unit {
	case "nanoseconds", "nanosecond", "ns":
		return 1, true
	case "microseconds", "microsecond", "us", "µs":
		return 1e3, true
	case "milliseconds", "millisecond", "ms":
		return 1e6, true
	case "seconds", "second", "s":
		return 1e9, true
	case "minutes", "minute":
		return 60e9, true
	case "hours", "hour":
		return 3600e9, true
	}
	return 0, false
}

// CompatibleValues reports why two profiles' numbers cannot be combined
// (merged, compared): traced and sampled values, or samples of different
// types, are not the same measure.
func CompatibleValues(a, b *Meta) error {
	switch {
	case a.Sampling == nil && b.Sampling == nil:
		return nil
	case a.Sampling == nil || b.Sampling == nil:
		return fmt.Errorf("cannot combine exact (traced) values with sampled ones (%s)", cmpOr(a.Sampling, b.Sampling))
	case a.Sampling.Type != b.Sampling.Type || a.Sampling.PeriodType != b.Sampling.PeriodType:
		return fmt.Errorf("cannot combine samples of %s with samples of %s", a.Sampling, b.Sampling)
	}
	return nil
}

func cmpOr(a, b *Sampling) *Sampling {
	if a != nil {
		return a
	}
	return b
}
