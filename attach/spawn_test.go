package attach

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"testing"
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
}
