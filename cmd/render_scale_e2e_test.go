package cmd_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/profile-dev/profile/internal/svgfit"
	"github.com/profile-dev/profile/internal/workload"
	"github.com/profile-dev/profile/model"
)

// dotNode returns the DOT statement of the node named name (its label's
// first line) in a render --dot output.
func dotNode(t *testing.T, dot, name string) string {
	t.Helper()
	for _, l := range strings.Split(dot, "\n") {
		if strings.Contains(l, `[label="`+name+`\n`) {
			return l
		}
	}
	t.Fatalf("no node %q drawn", name)
	return ""
}

// A recorded C++ program of 348 functions (testdata/src/wide.cpp:
// templates, a lambda, an operator, namespaces): its SVG is at most 4,000
// px wide (3,000 pt), every label lies inside its box and reads on its
// fill, and the title says what was left out.
func TestRenderScaleWideCpp(t *testing.T) {
	dir := t.TempDir()
	record(t, dir, "wide.data", "wide")
	p, err := model.ReadFile(filepath.Join(dir, "wide.data"))
	if err != nil {
		t.Fatal(err)
	}
	// the recording is the program: every function, called as expected
	want, err := workload.LoadExpected("wide")
	if err != nil {
		t.Fatal(err)
	}
	calls := functionCalls(p)
	for name, c := range want.Functions {
		if calls[name] != int64(c.Calls) {
			t.Errorf("%s: %d calls recorded, want %d", name, calls[name], c.Calls)
		}
	}
	if len(want.Functions) < 300 {
		t.Fatalf("wide has %d functions, want at least 300", len(want.Functions))
	}

	if _, stderr, code := run(t, dir, "render", "wide.data", "--svg"); code != 0 {
		t.Fatalf("render: %s", stderr)
	}
	svg, err := os.ReadFile(filepath.Join(dir, "wide.svg"))
	if err != nil {
		t.Fatal(err)
	}
	d, err := svgfit.Check(svg, 0.6)
	if err != nil {
		t.Fatal(err)
	}
	if px := d.Width * 4 / 3; px > 4000 || d.Nodes < 80 {
		t.Errorf("wide.svg: %.0f × %.0f pt (%.0f px wide), %d nodes", d.Width, d.Height, px, d.Nodes)
	}
	for _, pr := range d.Problems {
		t.Error(pr)
	}
	if !strings.Contains(string(svg), "showing 80 of 350 functions") {
		t.Errorf("the title does not say what was left out")
	}
	// tooltips: full names and the module's path
	// Graphviz writes a path's "-" as "&#45;": a checkout under such a
	// directory names the module so.
	module := strings.ReplaceAll(wl(t, "wide"), "-", "&#45;")
	if !strings.Contains(string(svg), `xlink:title="wide::run_all(long)&#10;module `+module+`&#10;`) {
		t.Errorf("no tooltip with run_all's full name and module")
	}

	// --nodecount 0 --edgefraction 0: everything, the 348 functions of the
	// program among them (--full-names: template instances apart)
	dot, stderr, code := run(t, dir, "render", "wide.data", "--dot", "-o", "-", "--nodecount", "0", "--edgefraction", "0",
		"--full-names")
	if code != 0 {
		t.Fatalf("render --nodecount 0: %s", stderr)
	}
	for name := range want.Functions {
		if name == "main" {
			name = "main [L0]"
		}
		// long names are wrapped: their first 30 characters
		if !strings.Contains(dot, `[label="`+name[:min(30, len(name))]) {
			t.Errorf("--nodecount 0: %s not drawn", name)
		}
	}
	dot, _, _ = run(t, dir, "render", "wide.data", "--dot", "-o", "-", "--nodecount", "20")
	if n := len(regexp.MustCompile(`(?m)^  n\d+ \[label=`).FindAllString(dot, -1)); n != 21 {
		t.Errorf("--nodecount 20 draws %d nodes, want 21", n)
	}
	for _, bad := range [][]string{{"--nodecount", "-1"}, {"--edgefraction", "2"}, {"--scope", "idle"}, {"--share", "process"}} {
		_, stderr, code := run(t, dir, append([]string{"render", "wide.data", "--dot"}, bad...)...)
		oneLineError(t, stderr, code, "bad "+bad[0])
		if code != 2 {
			t.Errorf("%v: exit %d, want 2", bad, code)
		}
	}
}

// A threaded server's idle pool (testdata/src/pool.c: four workers in
// pthread_cond_wait while main computes in crunch), its times measured
// (--sample 0): the waiting is blue-grey and never hot, in busy time and
// in wall time, where it is most of the traced time; the busy function is
// in the hot tier.
func TestRenderIdlePool(t *testing.T) {
	dir := t.TempDir()
	recordWith(t, dir, "pool.data", []string{"--sample", "0"}, "pool")
	const (
		waitFill = `fillcolor="#c6d4e1"`
		hot      = `fillcolor="#(d7301f|b30000|7f0000)"`
	)
	share := regexp.MustCompile(`\\nself [^ ]+ \(([0-9.]+)%`)
	selfShare := func(line string) float64 {
		m := share.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("no self share in %s", line)
		}
		v, _ := strconv.ParseFloat(m[1], 64)
		return v
	}
	var busyShare float64
	for _, scope := range []string{"busy", "wall"} {
		dot, stderr, code := run(t, dir, "render", "pool.data", "--dot", "-o", "-", "--scope", scope)
		if code != 0 {
			t.Fatalf("render --scope %s: %s", scope, stderr)
		}
		wait := dotNode(t, dot, "libc.so.6:pthread_cond_wait")
		if !strings.Contains(wait, waitFill) || regexp.MustCompile(hot).MatchString(wait) {
			t.Errorf("--scope %s: pthread_cond_wait: %s", scope, wait)
		}
		crunch := dotNode(t, dot, "crunch")
		switch scope {
		case "busy":
			// the workers' time is waiting: crunch is most of the busy time
			if busyShare = selfShare(crunch); busyShare < 50 || !regexp.MustCompile(hot).MatchString(crunch) {
				t.Errorf("busy: crunch not hot: %s", crunch)
			}
			if !strings.Contains(wait, `\nwaiting `) {
				t.Errorf("busy: pthread_cond_wait: %s", wait)
			}
		case "wall":
			// four threads waiting for as long as crunch runs: under a
			// third of the wall time, and still the waiting is not hot
			if s := selfShare(crunch); s >= busyShare || s > 34 {
				t.Errorf("wall: crunch %.2f%% (busy %.2f%%): %s", s, busyShare, crunch)
			}
			if s := selfShare(wait); s < 50 {
				t.Errorf("wall: pthread_cond_wait only %.2f%% of the wall time: %s", s, wait)
			}
		}
	}
	// --share thread: crunch's share of the main thread's busy time
	dot, stderr, code := run(t, dir, "render", "pool.data", "--dot", "-o", "-", "--share", "thread")
	if code != 0 {
		t.Fatalf("render --share thread: %s", stderr)
	}
	if crunch := dotNode(t, dot, "crunch"); !regexp.MustCompile(`\\nself [^ ]+ \([0-9.]+% of #0\)`).MatchString(crunch) || selfShare(crunch) < busyShare {
		t.Errorf("--share thread: crunch: %s", crunch)
	}
}
