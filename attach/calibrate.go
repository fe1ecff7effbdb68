package attach

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"

	"github.com/profile-dev/profile/attach/internal/calib"
	"github.com/profile-dev/profile/attach/internal/stub"
	"github.com/profile-dev/profile/instrument"
	"github.com/profile-dev/profile/internal/hostinfo"
	"github.com/profile-dev/profile/model"
)

// Inline probes warm up first with more calls than a ring holds: its
// first pass faults its pages in, which costs far more per call than the
// probe (a cost each thread pays once).
const calibInlineWarm = stub.RingEvents/2 + 1000

// Calibrate measures what one traced call costs on this host under each
// of the probe kinds (ProbesInline, ProbesTrap), by recording the
// calibration program under it. A kind that cannot be measured (no
// invariant TSC for inline probes) is left zero; the error is only for
// none measured.
func Calibrate(ctx context.Context, kinds ...string) (*model.Calibration, error) {
	path, err := calib.Write()
	if err != nil {
		return nil, err
	}
	defer os.Remove(path)
	cal := &model.Calibration{Host: hostinfo.CPUModel()}
	var errs []error
	for _, kind := range kinds {
		calls, warm, cost := calib.TrapCalls, 0, &cal.Trap
		if kind == ProbesInline {
			calls, warm, cost = calib.InlineCalls, calibInlineWarm, &cal.Inline
		}
		c, err := measureProbe(ctx, path, kind, calls, warm)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s probes: %w", kind, err))
			continue
		}
		*cost = c
	}
	if cal.Inline == (model.ProbeCost{}) && cal.Trap == (model.ProbeCost{}) {
		return nil, fmt.Errorf("calibrate the probes: %w", errors.Join(errs...))
	}
	return cal, nil
}

// measureProbe records the calibration program under one probe kind and
// reads the cost from its profile (calib.Cost).
func measureProbe(ctx context.Context, path, kind string, calls, warm int) (model.ProbeCost, error) {
	f, err := instrument.NewFilter(nil, nil, nil)
	if err != nil {
		return model.ProbeCost{}, err
	}
	r, err := Record(ctx, []string{path, strconv.Itoa(calls), strconv.Itoa(warm)}, Options{Filter: f, Probes: kind, ownOptions: ownOptions{quiet: true, helper: true}})
	if err != nil {
		return model.ProbeCost{}, err
	}
	if !r.Exited || r.ExitCode != 0 || r.Signal != 0 {
		return model.ProbeCost{}, errors.New("the calibration program did not run to its end")
	}
	return calib.Cost(r.Profile, kind, calls)
}
