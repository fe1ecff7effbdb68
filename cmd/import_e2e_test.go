package cmd_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// goCPUProfile builds testdata/gocpu, a Go program that burns CPU in
// named functions under runtime/pprof, runs it and returns its CPU
// profile's path in dir.
func goCPUProfile(t *testing.T, goTool, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "gocpu")
	if b, err := exec.Command(goTool, "build", "-o", bin, "../testdata/gocpu").CombinedOutput(); err != nil {
		t.Fatalf("go build testdata/gocpu: %v\n%s", err, b)
	}
	out := filepath.Join(dir, "cpu.pprof")
	if b, err := exec.Command(bin, out).CombinedOutput(); err != nil {
		t.Fatalf("gocpu: %v\n%s", err, b)
	}
	return out
}

// A Go CPU profile imported: info, summary, render --svg and --flame say
// the values are sampled; every function's self and total are go tool
// pprof's flat and cum to the nanosecond; inlined frames are functions of
// their own; merge and prune take the profile, merge refuses to mix it
// with a traced one.
func TestImportGoCPUProfile(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go toolchain")
	}
	dir := t.TempDir()
	pprofFile := goCPUProfile(t, goTool, dir)
	const values = "sampled (cpu nanoseconds, 100 Hz), call counts unknown"

	_, stderr, code := run(t, dir, "import", "cpu.pprof")
	if code != 0 || stderr != "profile: wrote cpu.data (1 thread, values "+values+")\n" {
		t.Fatalf("import: exit %d: %s", code, stderr)
	}
	if out, _, code := run(t, dir, "info", "cpu.data"); code != 0 || !strings.Contains(out, "values        "+values+"\n") ||
		!strings.Contains(out, "mode          import\n") {
		t.Errorf("info:\n%s", out)
	}
	if out, _, code := run(t, dir, "summary", "cpu.data"); code != 0 || !strings.Contains(out, "│ values       │ "+values) {
		t.Errorf("summary:\n%s", out)
	}

	var s struct {
		Totals struct {
			Calls             int64 `json:"calls"`
			TracedNs          int64 `json:"traced_ns"`
			MaxRecursionDepth int   `json:"max_recursion_depth"`
			Sampled           bool  `json:"sampled"`
		} `json:"totals"`
		Functions []struct {
			Name    string `json:"name"`
			SelfNs  int64  `json:"self_ns"`
			TotalNs int64  `json:"total_ns"`
		} `json:"functions"`
		Edges []struct {
			Caller string `json:"caller"`
			Callee string `json:"callee"`
		} `json:"edges"`
	}
	decodeSummary(t, dir, &s, "cpu.data")
	if !s.Totals.Sampled || s.Totals.Calls != 0 || s.Totals.TracedNs == 0 {
		t.Errorf("totals %+v", s.Totals)
	}
	if s.Totals.MaxRecursionDepth < 2 {
		t.Errorf("max recursion depth %d: fib within fib not seen", s.Totals.MaxRecursionDepth)
	}
	top := map[string][2]int64{} // go tool pprof's flat and cum nanoseconds by function
	for _, r := range pprofTop(t, goTool, pprofFile) {
		top[r.Name] = [2]int64{r.Flat, r.Cum}
	}
	seen := map[string]bool{}
	for _, f := range s.Functions {
		if f.Name == "START" {
			continue
		}
		seen[f.Name] = true
		if want, ok := top[f.Name]; !ok || want != [2]int64{f.SelfNs, f.TotalNs} {
			t.Errorf("%s: self %d total %d ns, go tool pprof: flat and cum %v (listed %v)", f.Name, f.SelfNs, f.TotalNs, want, ok)
		}
	}
	for name := range top {
		if !seen[name] && !strings.HasPrefix(name, "0x") { // unsymbolized: named by file offset here
			t.Errorf("go tool pprof lists %s, summary does not", name)
		}
	}
	for _, f := range []string{"main.burnHash", "main.mix", "main.fib"} {
		if top[f][0] == 0 {
			t.Errorf("%s has no samples of its own: %v", f, top)
		}
	}
	inlined := false
	for _, e := range s.Edges {
		inlined = inlined || e.Caller == "main.burnHash" && e.Callee == "main.mix"
	}
	if !inlined {
		t.Error("no edge main.burnHash -> main.mix: the inlined frame is not expanded")
	}

	if _, stderr, code := run(t, dir, "render", "--svg", "cpu.data"); code != 0 {
		t.Fatalf("render --svg: %s", stderr)
	}
	if svg, err := os.ReadFile(filepath.Join(dir, "cpu.svg")); err != nil || !strings.Contains(string(svg), "values "+values) {
		t.Errorf("cpu.svg does not say the values are sampled (%v)", err)
	}
	if _, stderr, code := run(t, dir, "render", "--flame", "cpu.data"); code != 0 {
		t.Fatalf("render --flame: %s", stderr)
	}
	if svg, err := os.ReadFile(filepath.Join(dir, "cpu.flame.svg")); err != nil || !strings.Contains(string(svg), values) ||
		!strings.Contains(string(svg), "main.burnHash") {
		t.Errorf("cpu.flame.svg does not say the values are sampled (%v)", err)
	}

	// merge and prune keep the sampling; an exact profile does not mix in.
	if _, stderr, code := run(t, dir, "merge", "-o", "twice.data", "cpu.data", "cpu.data"); code != 0 {
		t.Fatalf("merge: %s", stderr)
	}
	if _, stderr, code := run(t, dir, "prune", "--threshold", "5%", "-o", "pruned.data", "twice.data"); code != 0 {
		t.Fatalf("prune: %s", stderr)
	}
	if out, _, _ := run(t, dir, "info", "pruned.data"); !strings.Contains(out, "values        "+values+"\n") {
		t.Errorf("info of the merged and pruned profile:\n%s", out)
	}
	record(t, dir, "demo.data", "demo")
	_, stderr, code = run(t, dir, "merge", "-o", "mixed.data", "demo.data", "cpu.data")
	oneLineError(t, stderr, code, "merge demo.data and cpu.data: cannot combine exact (traced) values with sampled ones (cpu nanoseconds, 100 Hz)")
}

// Import's bad inputs: one line on stderr, non-zero exit.
func TestImportErrors(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "junk.pprof"), []byte("not a profile\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
		code int
	}{
		{[]string{"import", "none.pprof"}, "none.pprof: no such file", 1},
		{[]string{"import", "junk.pprof"}, "junk.pprof: not a pprof profile", 1},
		{[]string{"import"}, "accepts 1 arg(s), received 0", 2},
	} {
		_, stderr, code := run(t, dir, c.args...)
		oneLineError(t, stderr, code, c.want)
		if code != c.code {
			t.Errorf("%v: exit %d, want %d", c.args, code, c.code)
		}
	}
}
