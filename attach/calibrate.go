package attach

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/profile-dev/profile/instrument"
	"github.com/profile-dev/profile/internal/hostinfo"
	"github.com/profile-dev/profile/model"
)

// calibProgram is calibcode/calib.S assembled and linked: sixteen batches
// of calls of empty functions, static, without a C library.
//
//go:embed calib.bin
var calibProgram []byte

// Calls per batch of the calibration program, by probe kind: enough for a
// batch to outweigh its clock reads, few enough that the whole run stays
// short on a slow ptrace host (trap). Inline probes warm up first with
// more calls than a ring holds: its first pass faults its pages in, which
// costs far more per call than the probe (a cost each thread pays once).
const (
	calibInlineCalls = 500
	calibInlineWarm  = ringEvents/2 + 1000
	calibTrapCalls   = 20
	calibBatches     = 16
)

// Calibrate measures what one traced call costs on this host under each
// of the probe kinds (ProbesInline, ProbesTrap), by recording the
// calibration program under it. A kind that cannot be measured (no
// invariant TSC for inline probes) is left zero; the error is only for
// none measured.
func Calibrate(ctx context.Context, kinds ...string) (*model.Calibration, error) {
	path, err := writeCalibProgram()
	if err != nil {
		return nil, err
	}
	defer os.Remove(path)
	cal := &model.Calibration{Host: hostinfo.CPUModel()}
	var errs []error
	for _, kind := range kinds {
		calls, warm, cost := calibTrapCalls, 0, &cal.Trap
		if kind == ProbesInline {
			calls, warm, cost = calibInlineCalls, calibInlineWarm, &cal.Inline
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

// measureProbe records the calibration program under one probe kind. Per
// batch, the empty callee's self time per call is the cost inside the
// callee and its caller's the cost outside; the median batch is the cost,
// so that a batch the scheduler preempted does not count.
func measureProbe(ctx context.Context, path, kind string, calls, warm int) (model.ProbeCost, error) {
	f, err := instrument.NewFilter(nil, nil, nil)
	if err != nil {
		return model.ProbeCost{}, err
	}
	r, err := Record(ctx, []string{path, strconv.Itoa(calls), strconv.Itoa(warm)}, Options{Filter: f, Probes: kind, quiet: true, helper: true})
	if err != nil {
		return model.ProbeCost{}, err
	}
	if !r.Exited || r.ExitCode != 0 || r.Signal != 0 {
		return model.ProbeCost{}, errors.New("the calibration program did not run to its end")
	}
	var in, out []int64
	p := r.Profile
	for k := range calibBatches {
		inner := fmt.Sprintf("calib_inner_%d", k)
		if got := r.Stats.Probe[inner]; got != kind {
			return model.ProbeCost{}, fmt.Errorf("%s got a %q probe", inner, got)
		}
		for _, t := range p.Threads {
			for _, n := range t.Nodes {
				if n.Parent == model.None || p.FuncName(n.Func) != inner || n.Calls != int64(calls) {
					continue
				}
				in = append(in, n.SelfNs/n.Calls)
				out = append(out, t.Nodes[n.Parent].SelfNs/n.Calls)
			}
		}
	}
	if len(in) != calibBatches {
		return model.ProbeCost{}, fmt.Errorf("%d of %d batches traced", len(in), calibBatches)
	}
	return model.ProbeCost{InNs: median(in), OutNs: median(out)}, nil
}

func median(v []int64) int64 {
	slices.Sort(v)
	return v[len(v)/2]
}

// writeCalibProgram puts the calibration program in a file it can be run
// from: the temporary directory, or the user's cache directory where
// /tmp is mounted noexec.
func writeCalibProgram() (string, error) {
	dirs := []string{os.TempDir()}
	if d, err := os.UserCacheDir(); err == nil {
		dirs = append(dirs, d)
	}
	var last error
	for _, dir := range dirs {
		path, err := writeExecutable(dir, calibProgram)
		if err == nil {
			return path, nil
		}
		last = err
	}
	return "", fmt.Errorf("write the calibration program: %w", last)
}

func writeExecutable(dir string, code []byte) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	removeStale(dir)
	f, err := os.CreateTemp(dir, fmt.Sprintf("%s%d-*", calibPrefix, os.Getpid()))
	if err != nil {
		return "", err
	}
	path := f.Name()
	_, err = f.Write(code)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(path, 0o700)
	}
	if err == nil {
		err = runnable(path)
	}
	if err != nil {
		os.Remove(path)
		return "", err
	}
	return path, nil
}

// runnable checks that path can be executed: a noexec mount cannot.
func runnable(path string) error {
	if err := syscall.Access(path, 1); err != nil { // X_OK honours noexec mounts
		return fmt.Errorf("%s: %w", filepath.Dir(path), err)
	}
	return nil
}

// calibPrefix begins the name of a calibration program's file; the
// writer's pid follows.
const calibPrefix = "profile-calib-"

// removeStale removes the calibration programs in dir that a profiler
// killed while calibrating left: those whose writer is gone.
func removeStale(dir string) {
	paths, _ := filepath.Glob(filepath.Join(dir, calibPrefix+"*"))
	for _, p := range paths {
		if pid, ok := calibWriter(filepath.Base(p)); ok && pid != os.Getpid() && unix.Kill(pid, 0) == unix.ESRCH {
			os.Remove(p)
		}
	}
}

// calibWriter reads the writer's pid in a calibration program's file
// name (profile-calib-PID-RANDOM).
func calibWriter(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, calibPrefix)
	if !ok {
		return 0, false
	}
	pid, _, ok := strings.Cut(rest, "-")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(pid)
	return n, err == nil && n > 0
}
