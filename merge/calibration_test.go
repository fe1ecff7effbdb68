package merge

import (
	"testing"

	"github.com/profile-dev/profile/model"
	"github.com/profile-dev/profile/model/modeltest"
)

// A composite keeps the calibration only when every run has one, and says
// it is compensated only when every run was.
func TestMergeCalibration(t *testing.T) {
	withCal := func(compensated bool, taken int64) *model.Profile {
		p := modeltest.Sample()
		p.Meta.Calibration = &model.Calibration{Host: "cpu", Inline: model.ProbeCost{InNs: 13, OutNs: 21},
			Compensated: compensated, SubtractedNs: taken, HeldNs: 1}
		return p
	}
	for _, tc := range []struct {
		name string
		a, b *model.Profile
		want *model.Calibration
	}{
		{"both", withCal(true, 5), withCal(true, 7),
			&model.Calibration{Host: "cpu", Inline: model.ProbeCost{InNs: 13, OutNs: 21}, Compensated: true, SubtractedNs: 12, HeldNs: 2}},
		{"one raw", withCal(true, 5), withCal(false, 0),
			&model.Calibration{Host: "cpu", Inline: model.ProbeCost{InNs: 13, OutNs: 21}, SubtractedNs: 5, HeldNs: 2}},
		{"one unmeasured", withCal(true, 5), modeltest.Sample(), nil},
		{"first unmeasured", modeltest.Sample(), withCal(true, 5), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Merge(tc.a, tc.b)
			if err != nil {
				t.Fatal(err)
			}
			got := m.Meta.Calibration
			if (got == nil) != (tc.want == nil) || (got != nil && *got != *tc.want) {
				t.Fatalf("calibration %+v, want %+v", got, tc.want)
			}
			if tc.a.Meta.Calibration != nil && tc.a.Meta.Calibration.SubtractedNs != 5 {
				t.Fatal("merge changed its input's calibration")
			}
		})
	}
}
