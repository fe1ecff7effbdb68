package attach

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/profile-dev/profile/instrument"
	"github.com/profile-dev/profile/internal/workload"
)

// buildSpawn compiles testdata/spawn.c: system(), vfork and posix_spawn,
// whose children share the parent's memory (and breakpoints) until exec.
func buildSpawn(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "spawn")
	out, err := exec.Command("gcc", "-O2", "-fno-optimize-sibling-calls", "-o", bin, "testdata/spawn.c").CombinedOutput()
	if err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	return bin
}

func TestVforkChildren(t *testing.T) {
	forEachProbe(t, func(t *testing.T, _ Options) {
		bin := buildSpawn(t)
		want, err := exec.Command(bin).Output()
		if err != nil {
			t.Fatal(err)
		}
		for _, noFollow := range []bool{false, true} {
			opt := defaultOptions(t)
			opt.NoFollowFork = noFollow
			var out bytes.Buffer
			r, err := recordTo(context.Background(), []string{bin}, opt, &out)
			if err != nil {
				t.Fatal(err)
			}
			if err := r.Profile.Validate(); err != nil {
				t.Fatal(err)
			}
			if out.String() != string(want) || r.ExitCode != 0 {
				t.Fatalf("no-follow %v: output %q exit %d, want %q", noFollow, out.String(), r.ExitCode, want)
			}
			p := r.Profile
			forkers := map[string]int{}
			execs := 0
			for _, pr := range p.Processes[1:] {
				if pr.ExecOf >= 0 {
					execs++
					continue
				}
				forkers[p.FuncName(pr.ForkedBy)]++
			}
			if forkers["via_system"] != 1 || forkers["via_vfork"] != 1 || forkers["via_spawn"] != 1 {
				t.Errorf("no-follow %v: forking functions %v", noFollow, forkers)
			}
			if wantExecs := map[bool]int{false: 3, true: 0}[noFollow]; execs != wantExecs {
				t.Errorf("no-follow %v: %d exec'd images, want %d", noFollow, execs, wantExecs)
			}
		}
	})
}

// A library unloaded and loaded again is traced both times; a tail call
// closes its caller's frame and counts both functions.
func TestDlcloseAndTailCalls(t *testing.T) {
	forEachProbe(t, func(t *testing.T, _ Options) {
		bin := filepath.Join(t.TempDir(), "reload")
		out, err := exec.Command("gcc", "-O2", "-o", bin, "testdata/reload.c", "-ldl").CombinedOutput()
		if err != nil {
			t.Fatalf("gcc: %v\n%s", err, out)
		}
		plugin, err := workload.Path("libplugin.so")
		if err != nil {
			t.Fatal(err)
		}
		want, err := exec.Command(bin, plugin).Output()
		if err != nil {
			t.Fatal(err)
		}
		opt := defaultOptions(t)
		if opt.Filter, err = instrument.NewFilter(nil, nil, []string{"libplugin"}); err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		r, err := recordTo(context.Background(), []string{bin, plugin}, opt, &got)
		if err != nil {
			t.Fatal(err)
		}
		if got.String() != string(want) {
			t.Fatalf("output %q, want %q", got.String(), want)
		}
		calls := observe(r.Profile).Functions
		if c := calls["libplugin.so:plugin_work"]; c.Calls != 2 {
			t.Errorf("plugin_work calls = %d over two loads, want 2", c.Calls)
		}
		if c := calls["libplugin.so:plugin_sum"]; c.Calls != 6 || c.RecursiveCalls != 4 {
			t.Errorf("plugin_sum = %+v, want 6 calls, 4 recursive", c)
		}
		if calls["tail"].Calls != 2 || calls["leaf"].Calls != 2 {
			t.Errorf("tail %+v leaf %+v, want 2 calls each", calls["tail"], calls["leaf"])
		}
	})
}

// The program's own timers, signals and EINTR behave as without us.
func TestOwnSignalsAndEINTR(t *testing.T) {
	forEachProbe(t, func(t *testing.T, _ Options) {
		bin := filepath.Join(t.TempDir(), "signals")
		out, err := exec.Command("gcc", "-O2", "-o", bin, "testdata/signals.c").CombinedOutput()
		if err != nil {
			t.Fatalf("gcc: %v\n%s", err, out)
		}
		want, err := exec.Command(bin).Output()
		if err != nil {
			t.Fatal(err)
		}
		if string(want) != "read: EINTR, ticks=1\nnanosleep: EINTR, cut short: yes, ticks=2\n" {
			t.Fatalf("untraced run: %q", want)
		}
		var got bytes.Buffer
		r, err := recordTo(context.Background(), []string{bin}, defaultOptions(t), &got)
		if err != nil {
			t.Fatal(err)
		}
		if got.String() != string(want) || r.ExitCode != 0 {
			t.Fatalf("traced: %q exit %d, untraced %q", got.String(), r.ExitCode, want)
		}
		calls := observe(r.Profile).Functions
		if calls["on_alarm"].Calls != 2 || calls["blocked_read"].Calls != 1 {
			t.Fatalf("functions %v", calls)
		}
	})
}
