package attach

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/profile-dev/profile/attach/internal/calib"
	"github.com/profile-dev/profile/internal/workload"
)

// Under auto, a function whose first bytes a branch lands in, called only
// directly, takes its probe at its call site; the others inline probes at
// their entries, and the counts stay exact. (hottrap's spin, whose address
// is in data, keeps a trap probe: demote_test.go.)
func TestAutoGivesEachFunctionItsProbe(t *testing.T) {
	opt := defaultOptions(t)
	opt.Probes = ProbesAuto
	r, _ := recordWorkload(t, "unpatchable", opt)
	want := map[string]string{"spin_back": ProbesInline, "plain_a": ProbesInline, "plain_b": ProbesInline, "main": ProbesInline}
	for fn, kind := range want {
		if got := probeOf(r.Profile, fn); got != kind {
			t.Errorf("%s got probe %q, want %q", fn, got, kind)
		}
	}
	if r.Stats.Probes.Sites != 1 {
		t.Errorf("%d functions probed at their call sites, want spin_back", r.Stats.Probes.Sites)
	}
	checkExpected(t, "unpatchable", r)
}

// The workloads, exact under both probe kinds: a SIGALRM handler
// calling probed functions while the main thread calls them in a loop,
// C++ exceptions through ten probed frames (and backtrace() inside a
// probed function seeing the addresses an untraced run sees), 64 threads
// created and joined round after round. Trap probes get smaller runs of
// the same workloads (a stop costs tens of microseconds).
func TestProbeWorkloadsExactCounts(t *testing.T) {
	type scaled struct {
		args  []string
		funcs map[string]int // calls, for the functions the arguments scale
		count int            // threads64: threads spawned by round
	}
	cases := []struct {
		name string
		trap scaled
	}{
		{"sigalrm", scaled{[]string{"200", "2000"}, map[string]int{"loop_work": 2000, "leaf": 4000, "on_tick": 200, "tick_work": 200}, 0}},
		{"exceptions", scaled{[]string{"300"}, map[string]int{"f0(int)": 301, "f1(int)": 301, "f2(int)": 301, "f3(int)": 301, "f4(int)": 301,
			"f5(int)": 301, "f6(int)": 301, "f7(int)": 301, "f8(int)": 301, "f9(int)": 301}, 0}},
		{"threads64", scaled{[]string{"10"}, map[string]int{"round": 10, "worker": 640, "work_a": 1920, "work_b": 1920}, 640}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			forEachProbe(t, func(t *testing.T, opt Options) {
				want, err := workload.LoadExpected(c.name)
				if err != nil {
					t.Fatal(err)
				}
				args := want.Args
				if opt.Probes == ProbesTrap && c.trap.args != nil {
					args = c.trap.args
					for fn, n := range c.trap.funcs {
						cnt := want.Functions[fn]
						cnt.Calls = uint64(n)
						want.Functions[fn] = cnt
					}
					for i := range want.Threads {
						want.Threads[i].Count = c.trap.count
					}
				}
				r, out := recordWorkload(t, c.name, opt, args...)
				compareExpected(t, want, r.Profile)
				wantOut, _ := untraced(t, c.name, args...)
				if out != wantOut {
					t.Errorf("stdout differs from an untraced run:\n got %q\nwant %q", out, wantOut)
				}
				if r.ExitCode != want.ExitCode || r.Signal != 0 {
					t.Errorf("exit %d (signal %v), want %d", r.ExitCode, r.Signal, want.ExitCode)
				}
			})
		})
	}
}

// A static program sets its thread pointer after its entry stop, where
// the profiler registers threads: its ring is registered at a later stop,
// and its calls are counted exactly under either probe kind. The
// calibration program is one (attach/internal/calib).
func TestStaticProgramSettingItsThreadPointerLate(t *testing.T) {
	path, err := calib.Write()
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(path)
	forEachProbe(t, func(t *testing.T, opt Options) {
		var out bytes.Buffer
		r, err := recordTo(context.Background(), []string{path, "300", "7"}, opt, &out)
		if err != nil {
			t.Fatal(err)
		}
		got := observe(r.Profile)
		for k := range calib.Batches {
			inner, outer := fmt.Sprintf("calib_inner_%d", k), fmt.Sprintf("calib_outer_%d", k)
			if got.Functions[inner].Calls != 300 || got.Functions[outer].Calls != 1 {
				t.Fatalf("%s %d calls, %s %d, want 300 and 1", inner, got.Functions[inner].Calls, outer, got.Functions[outer].Calls)
			}
		}
		if got.Functions["calib_warm_inner"].Calls != 7 {
			t.Fatalf("calib_warm_inner %d calls, want 7", got.Functions["calib_warm_inner"].Calls)
		}
		if opt.Probes == ProbesInline && r.Stats.Probes.Inline != 2*calib.Batches+2 {
			t.Fatalf("%d inline functions, want %d", r.Stats.Probes.Inline, 2*calib.Batches+2)
		}
	})
}

func TestReasonKind(t *testing.T) {
	for in, want := range map[string]string{
		"a branch at +0x21 lands inside the first 5 bytes":                              "a branch at +… lands inside the first 5 bytes",
		"syscall in the prologue":                                                       "syscall in the prologue",
		"returns twice; not every call site found: a short branch at 0x3b55 reaches it": "returns twice; not every call site found: a short branch at … reaches it",
	} {
		if got := reasonKind(in); got != want {
			t.Errorf("reasonKind(%q) = %q, want %q", in, got, want)
		}
	}
}
