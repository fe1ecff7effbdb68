package export

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/profile-dev/profile/model"
)

// sampleSel is the sample value an import takes, and how it becomes
// nanoseconds.
type sampleSel struct {
	idx      int
	scale    int64 // nanoseconds per unit of the value
	sampling *model.Sampling
}

// ns is sample s's value in nanoseconds.
func (v sampleSel) ns(s *profile.Sample) (int64, error) {
	x := s.Value[v.idx]
	switch {
	case x < 0:
		return 0, fmt.Errorf("negative %s value %d (a pprof -diff_base profile?): only measured times can be imported", v.sampling.Type, x)
	case x > math.MaxInt64/v.scale:
		return 0, fmt.Errorf("%s value %d does not fit in int64 nanoseconds", v.sampling.Type, x)
	}
	return x * v.scale, nil
}

// sampleValue chooses the sample type to import: the one index names (a
// type name or its position), else the profile's default type, else the
// last type that is a time (pprof's own default: cpu for a Go CPU
// profile). The type must be a time, or a count that is one: samples of
// a period in time units (Go's "samples", 10ms each), or perf's
// cpu-clock and task-clock events, which count nanoseconds.
func sampleValue(pp *profile.Profile, index string) (sampleSel, error) {
	pick := -1
	switch {
	case index != "":
		for i, st := range pp.SampleType {
			if st.Type == index {
				pick = i
			}
		}
		if n, err := strconv.Atoi(index); pick < 0 && err == nil && n >= 0 && n < len(pp.SampleType) {
			pick = n
		}
		if pick < 0 {
			return sampleSel{}, fmt.Errorf("--sample-index %s: no such sample type (this profile has %s)", index, typeList(pp))
		}
	case pp.DefaultSampleType != "":
		for i, st := range pp.SampleType {
			if st.Type == pp.DefaultSampleType {
				pick = i
			}
		}
	}
	if pick < 0 {
		for i := len(pp.SampleType) - 1; i >= 0 && pick < 0; i-- {
			if _, ok := nsPerUnit(pp, i); ok {
				pick = i
			}
		}
	}
	if pick < 0 {
		if len(pp.SampleType) == 0 {
			return sampleSel{}, errors.New("the pprof profile has no sample types")
		}
		return sampleSel{}, fmt.Errorf("no sample type of this profile is a time (it has %s): profile keeps times only", typeList(pp))
	}
	scale, ok := nsPerUnit(pp, pick)
	st := pp.SampleType[pick]
	if !ok {
		return sampleSel{}, fmt.Errorf("sample type %s is in %s, not a time: choose a time with --sample-index (this profile has %s)",
			st.Type, st.Unit, typeList(pp))
	}
	s := &model.Sampling{Type: st.Type, Unit: st.Unit, Period: pp.Period}
	if pt := pp.PeriodType; pt != nil {
		s.PeriodType, s.PeriodUnit = pt.Type, pt.Unit
	}
	return sampleSel{idx: pick, scale: scale, sampling: s}, nil
}

// nsPerUnit is the nanoseconds one unit of sample type i stands for; ok
// is false when it is not a time.
func nsPerUnit(pp *profile.Profile, i int) (ns int64, ok bool) {
	st := pp.SampleType[i]
	if ns, ok := model.UnitNs(st.Unit); ok {
		return ns, true
	}
	if st.Unit != "count" {
		return 0, false
	}
	if strings.HasSuffix(st.Type, "cpu-clock_event") || strings.HasSuffix(st.Type, "task-clock_event") {
		return 1, true
	}
	if pt := pp.PeriodType; pt != nil && pp.Period > 0 {
		if per, ok := model.UnitNs(pt.Unit); ok && pp.Period <= math.MaxInt64/per {
			return pp.Period * per, true
		}
	}
	return 0, false
}

// typeList names a profile's sample types with their units.
func typeList(pp *profile.Profile) string {
	names := make([]string, len(pp.SampleType))
	for i, st := range pp.SampleType {
		names[i] = st.Type + " (" + st.Unit + ")"
	}
	return strings.Join(names, ", ")
}
