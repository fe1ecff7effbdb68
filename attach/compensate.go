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
	// By index (e.kinds), not by name as Stats.Probe: a function's
	// display name changes when its module turns out to be an exec'd
	// program's.
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
	if e.opt.Compensate {
		e.s.Held(t.st, from, e.now())
	}
}

// uncompensated is what to say when the probes' cost could not be measured.
func uncompensated(err error) string {
	return err.Error() + ": times include the probes' cost"
}

// PrepareCompensation measures the probes' cost for opt when it asks for
// compensation and has no calibration yet: inline probes (also under
// auto, whose few trap probes finishCompensation sees to) or trap probes.
// Record calls it; callers that time the session (--duration) or show it
// live (top) call it before they start. When nothing can be measured it
// says so, in the profile too, and turns compensation off.
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
		opt.Meta.Warnings = append(opt.Meta.Warnings, uncompensated(err))
		fmt.Fprintf(os.Stderr, "profile: %s\n", uncompensated(err))
		opt.Compensate = false
		return
	}
	opt.Calibration = cal
}

// finishCompensation measures, once the session is over, what was not
// measured before it: everything for Attach (not to delay attaching), and
// under auto the trap probes when some function got one. A launched
// program may still run as our child (--duration), and a calibration run
// would reap it: its trap cost is then taken as one bare stop
// (measureStop) on each side.
func (e *engine) finishCompensation() {
	if !e.opt.Compensate {
		return
	}
	if e.cal == nil {
		e.cal = &model.Calibration{}
	}
	var kinds []string
	if e.opt.Probes != ProbesTrap && e.cal.Inline == (model.ProbeCost{}) {
		kinds = append(kinds, ProbesInline)
	}
	if (e.opt.Probes == ProbesTrap || e.stats.TrapFunctions > 0) && e.cal.Trap == (model.ProbeCost{}) {
		kinds = append(kinds, ProbesTrap)
	}
	switch {
	case len(kinds) == 0:
	case e.launched:
		if stop := e.s.Profile().Meta.StopOverheadNs; stop > 0 && e.cal.Trap == (model.ProbeCost{}) {
			e.cal.Trap = model.ProbeCost{InNs: stop, OutNs: stop}
		}
	default:
		cal, err := Calibrate(context.Background(), kinds...)
		if err != nil {
			e.warn("%s", uncompensated(err))
			e.s.Warn(uncompensated(err))
			break
		}
		// Only the kinds still zero were measured.
		e.cal.Host = cal.Host
		if cal.Inline != (model.ProbeCost{}) {
			e.cal.Inline = cal.Inline
		}
		if cal.Trap != (model.ProbeCost{}) {
			e.cal.Trap = cal.Trap
		}
	}
	if e.cal.Inline == (model.ProbeCost{}) && e.cal.Trap == (model.ProbeCost{}) {
		e.cal = nil // nothing measured: the times stay raw
	}
}
