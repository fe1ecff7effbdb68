package attach

import (
	"context"
	"fmt"
	"os"

	"github.com/profile-dev/profile/internal/hostinfo"
	"github.com/profile-dev/profile/model"
)

// stopCosts is what compensation needs (Options.Compensate): the
// measured costs, nil if not measured (each traced function's probe kind
// is in the profile); stopWake is what a stop costs the thread beyond the tracer's work
// (measureStop), stopKernel the part of it the thread spends on a CPU (in
// the kernel); stopAt when the stop being handled was seen.
type stopCosts struct {
	cal        *model.Calibration
	stopWake   int64
	stopKernel int64
	stopAt     int64
}

// compensated is p with the inline probes' measured cost taken out of its
// times (model.Compensate), and the calibration with what was taken out:
// that cost, the set-up holds and the trap probes' stops (taken out one
// by one as they happened: hit). p as it is under --no-compensate.
// Finish, snapshots and the profile saved before a crash all go through
// here.
func (e *engine) compensated(p *model.Profile) *model.Profile {
	if !e.opt.Compensate {
		return p
	}
	cal := model.Calibration{Host: hostinfo.CPUModel()}
	if e.cal != nil {
		cal = *e.cal
	}
	// By index, not by name: a function's display name changes when its
	// module turns out to be an exec'd program's.
	cost := make([]model.ProbeCost, len(p.Functions))
	for fn, f := range p.Functions {
		if f.Probe == model.ProbeInline {
			cost[fn] = cal.Inline
		}
	}
	out, taken := model.Compensate(p, cost)
	cal.Compensated, cal.SubtractedNs, cal.HeldNs = true, taken, e.s.HeldNs()
	cal.StopNs, cal.Stops = e.s.StopNs()
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

// PrepareCompensation measures the inline probes' cost for opt when it
// asks for compensation and has no calibration yet (trap probes' stops are
// measured one by one as they happen). Record calls it; callers that time
// the session (--duration) or show it live (top) call it before they
// start. When nothing can be measured it says so, in the profile too.
func PrepareCompensation(ctx context.Context, opt *Options) {
	if !opt.Compensate || opt.Calibration != nil || opt.Probes == ProbesTrap {
		return
	}
	cal, err := Calibrate(ctx, ProbesInline)
	if err != nil {
		opt.Meta.Warnings = append(opt.Meta.Warnings, uncompensated(err))
		fmt.Fprintf(os.Stderr, "profile: %s\n", uncompensated(err))
		opt.Compensate = false
		return
	}
	opt.Calibration = cal
}

// finishCompensation measures the inline probes' cost, once the session
// is over, when it was not measured before: for Attach (not to delay
// attaching). A launched program may still run as our child (--duration),
// and a calibration run would reap it: its calls then stay uncompensated.
func (e *engine) finishCompensation() {
	if !e.opt.Compensate || e.opt.Probes == ProbesTrap || e.cal != nil && e.cal.Inline != (model.ProbeCost{}) || e.launched {
		return
	}
	cal, err := Calibrate(context.Background(), ProbesInline)
	if err != nil {
		e.warn("%s", uncompensated(err))
		e.s.Warn(uncompensated(err))
		return
	}
	e.cal = cal
}
