package attach

import (
	"context"
	"testing"

	"github.com/profile-dev/profile/model"
)

// TestCalibrateMeasuresEachProbeKind: the kinds asked for and only them;
// an inline call costs less than a trap's two stops.
func TestCalibrateMeasuresEachProbeKind(t *testing.T) {
	cal, err := Calibrate(context.Background(), ProbesInline, ProbesTrap)
	if err != nil {
		t.Fatal(err)
	}
	in, trap := cal.Inline, cal.Trap
	if in.InNs <= 0 || in.OutNs <= 0 || trap.InNs <= 0 || trap.OutNs <= 0 || cal.Host == "" {
		t.Fatalf("calibration %+v: every cost measured, on a named host", cal)
	}
	if in.InNs+in.OutNs >= trap.InNs+trap.OutNs {
		t.Fatalf("an inline call (%+v) costs no less than a trap call (%+v)", in, trap)
	}
	cal, err = Calibrate(context.Background(), ProbesInline)
	if err != nil {
		t.Fatal(err)
	}
	if cal.Inline.InNs <= 0 || cal.Trap != (model.ProbeCost{}) {
		t.Fatalf("inline asked for: calibration %+v, want inline only", cal)
	}
}

type times struct{ self, total int64 }

// funcTimes sums a function's self and total times over its nodes.
func funcTimes(p *model.Profile, name string) times {
	var s times
	for _, th := range p.Threads {
		for _, n := range th.Nodes {
			if p.FuncName(n.Func) == name {
				s.self += n.SelfNs
				s.total += n.TotalNs
			}
		}
	}
	return s
}
