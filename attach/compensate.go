package attach

import (
	"context"

	"github.com/profile-dev/profile/model"
)

// compensated is p with the probes' measured cost taken out of its times
// (model.Compensate), each function at the cost of the probe it got; p as
// it is when nothing was measured. Finish, snapshots and the profile saved
// before a crash all go through here.
func (e *engine) compensated(p *model.Profile) *model.Profile {
	if e.cal == nil {
		return p
	}
	cost := make([]model.ProbeCost, len(p.Functions))
	for fn, kind := range e.kinds {
		if fn >= len(cost) {
			continue
		}
		switch kind {
		case ProbesInline:
			cost[fn] = e.cal.Inline
		case ProbesTrap:
			cost[fn] = e.cal.Trap
		}
	}
	out, taken := model.Compensate(p, cost)
	cal := *e.cal
	cal.Compensated, cal.SubtractedNs, cal.HeldNs = true, taken, e.s.HeldNs()
	out.Meta.Calibration = &cal
	return out
}

// held takes the time since from, during which the tracer held t stopped
// to set up its probes, out of t's times (when compensating).
func (e *engine) held(t *thread, from int64) {
	if e.cal != nil {
		e.s.Held(t.st, from, e.now())
	}
}

// calibrateTrapLate measures the trap probes' cost once the session is
// over, when auto gave some function a trap probe: the calibration before
// the session measured inline probes only. The session is over (nothing
// is traced any more), so its end no longer cancels this.
func (e *engine) calibrateTrapLate() {
	if e.cal == nil || e.cal.Trap != (model.ProbeCost{}) || e.stats.TrapFunctions == 0 {
		return
	}
	cal, err := Calibrate(context.Background(), ProbesTrap)
	if err != nil {
		e.warn("%v: trap-probed functions' times include the probes' cost", err)
		e.s.Warn(err.Error() + ": trap-probed functions' times include the probes' cost")
		return
	}
	e.cal.Trap = cal.Trap
}
