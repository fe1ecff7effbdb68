package attach

import (
	"context"
	"fmt"
	"os"

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

// PrepareCompensation measures the probes' cost for opt when it asks for
// compensation and has no calibration yet: inline probes (also under
// auto, whose few trap probes are measured after the session) or trap
// probes. Callers that time the session (--duration) call it before they
// start the clock. When nothing can be measured it says so, in the
// profile too, and turns compensation off.
func PrepareCompensation(ctx context.Context, opt *Options) {
	if !opt.Compensate || opt.Calibration != nil {
		return
	}
	kind := ProbesInline
	if opt.Probes == ProbesTrap {
		kind = ProbesTrap
	}
	cal, err := Calibrate(ctx, kind)
	if err != nil {
		msg := err.Error() + ": times include the probes' cost"
		opt.Meta.Warnings = append(opt.Meta.Warnings, msg)
		fmt.Fprintf(os.Stderr, "profile: %s\n", msg)
		opt.Compensate = false
		return
	}
	opt.Calibration = cal
}
