package attach

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/profile-dev/profile/instrument"
	"github.com/profile-dev/profile/internal/workload"
	"github.com/profile-dev/profile/model"
)

// defaultOptions are the options of a test: the default filter, and the
// probe kind of the forEachProbe subtest it runs in (auto outside one).
func defaultOptions(t *testing.T) Options {
	t.Helper()
	f, err := instrument.NewFilter(nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	opt := Options{Filter: f}
	for _, part := range strings.Split(t.Name(), "/") {
		if slices.Contains(probeKinds, part) {
			withKind(&opt, part)
		}
	}
	return opt
}

// recordWorkload records a workload with its stdout captured.
func recordWorkload(t *testing.T, name string, opt Options, args ...string) (*Result, string) {
	t.Helper()
	bin, err := workload.Path(name)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	r, err := recordTo(context.Background(), append([]string{bin}, args...), opt, &out)
	if err != nil {
		t.Fatalf("record %s: %v", name, err)
	}
	if err := r.Profile.Validate(); err != nil {
		t.Fatalf("record %s: %v", name, err)
	}
	return r, out.String()
}

// recordTo is Record with the target's stdout sent to w.
func recordTo(ctx context.Context, argv []string, opt Options, w *bytes.Buffer) (*Result, error) {
	rd, wr, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	done := make(chan struct{})
	go func() { w.ReadFrom(rd); close(done) }()
	opt.stdout = wr
	r, err := Record(ctx, argv, opt)
	wr.Close()
	<-done
	return r, err
}

func untraced(t *testing.T, name string, args ...string) (string, int) {
	t.Helper()
	bin, err := workload.Path(name)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	out, _ := cmd.Output()
	return string(out), cmd.ProcessState.ExitCode()
}

// probeKinds are the probe kinds every exact-count engine test runs under:
// inline twice, with exit probes where a function takes them and with
// every timed function's return hijacked.
var probeKinds = []string{ProbesTrap, ProbesInline, probesInlineHijack}

// probesInlineHijack (tests) is ProbesInline without exit probes.
const probesInlineHijack = ProbesInline + "-hijack"

// withKind gives opt test kind k's probe kind.
func withKind(opt *Options, k string) {
	opt.Probes, opt.hijackOnly = probesOf(k), k == probesInlineHijack
}

// probesOf is test kind k's probe kind.
func probesOf(k string) string {
	if k == probesInlineHijack {
		return ProbesInline
	}
	return k
}

// inlineKinds are the test kinds of inline probes: with exit probes
// where a function takes them, and every timed function's return hijacked.
var inlineKinds = []string{ProbesInline, probesInlineHijack}

// forEachProbe runs f as one subtest per probe kind, with options for it.
func forEachProbe(t *testing.T, f func(t *testing.T, opt Options)) { forEachKind(t, probeKinds, f) }

// forEachKind runs f as one subtest per test kind of kinds, with options
// for it.
func forEachKind(t *testing.T, kinds []string, f func(t *testing.T, opt Options)) {
	for _, kind := range kinds {
		t.Run(kind, func(t *testing.T) {
			opt := defaultOptions(t)
			withKind(&opt, kind)
			f(t, opt)
		})
	}
}

func TestRecordExactCounts(t *testing.T) {
	for _, name := range []string{"recursion", "mutual", "threads", "forks", "blocking", "unusual", "dlopen", "demo", "altstack"} {
		t.Run(name, func(t *testing.T) {
			forEachProbe(t, func(t *testing.T, opt Options) {
				want, err := workload.LoadExpected(name)
				if err != nil {
					t.Fatal(err)
				}
				if name == "dlopen" {
					// The plugin is dlopen'ed later: found through r_debug.
					if opt.Filter, err = instrument.NewFilter(nil, nil, []string{"libplugin"}); err != nil {
						t.Fatal(err)
					}
				}
				r, out := recordWorkload(t, name, opt)
				compareExpected(t, want, r.Profile)
				wantOut, wantCode := untraced(t, name)
				if out != wantOut {
					t.Errorf("stdout differs from an untraced run:\n got %q\nwant %q", out, wantOut)
				}
				if r.ExitCode != wantCode || r.ExitCode != want.ExitCode || r.Signal != 0 {
					t.Errorf("exit = %d (signal %v), untraced %d, expected %d", r.ExitCode, r.Signal, wantCode, want.ExitCode)
				}
			})
		})
	}
}

// checkExpected compares a profile's counts with a workload's expected
// file.
func checkExpected(t *testing.T, name string, r *Result) {
	t.Helper()
	want, err := workload.LoadExpected(name)
	if err != nil {
		t.Fatal(err)
	}
	compareExpected(t, want, r.Profile)
}

func compareExpected(t *testing.T, want *workload.Expected, p *model.Profile) {
	t.Helper()
	got := observe(p)
	if !reflect.DeepEqual(got.Functions, want.Functions) {
		t.Errorf("functions:\n got %v\nwant %v", got.Functions, want.Functions)
	}
	if !reflect.DeepEqual(got.Threads, want.Threads) {
		t.Errorf("threads:\n got %+v\nwant %+v", got.Threads, want.Threads)
	}
	if !reflect.DeepEqual(got.Processes, want.Processes) {
		t.Errorf("processes:\n got %+v\nwant %+v", got.Processes, want.Processes)
	}
}

// probeOf is the probe kind the profile records for the function named
// name ("inline", "trap", "none"; "" if it has no such function).
func probeOf(p *model.Profile, name string) string {
	if fn, ok := funcNamed(p, name); ok {
		return fn.Probe.String()
	}
	return ""
}

// funcNamed is the profile's function named name.
func funcNamed(p *model.Profile, name string) (model.Function, bool) {
	for f, fn := range p.Functions {
		if p.FuncName(f) == name {
			return fn, true
		}
	}
	return model.Function{}, false
}
