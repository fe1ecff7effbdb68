package cmd_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/profile-dev/profile/internal/workload"
	"github.com/profile-dev/profile/model"
	"github.com/profile-dev/profile/model/modeltest"
)

var profileBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "profile-e2e-")
	if err != nil {
		panic(err)
	}
	os.Chmod(dir, 0o755) // the permission test runs the binary as nobody
	// No debuginfod server is asked unless a test starts one.
	os.Unsetenv("DEBUGINFOD_URLS")
	// The plan cache starts empty and goes with the run: a test's first
	// session plans, the later ones read the plans, in the same order in
	// every run.
	os.Setenv("PROFILE_PLAN_CACHE", filepath.Join(dir, "plans"))
	profileBin = filepath.Join(dir, "profile")
	build := exec.Command("go", "build", "-o", profileBin, "..")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// run runs profile with args in dir and returns stdout, stderr and status.
func run(t *testing.T, dir string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(profileBin, args...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			t.Fatal(err)
		}
	}
	return out.String(), errb.String(), cmd.ProcessState.ExitCode()
}

func wl(t *testing.T, name string) string {
	t.Helper()
	p, err := workload.Path(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// record runs profile record -o file in dir on the workload name with the
// workload's args.
func record(t *testing.T, dir, file, name string, args ...string) {
	t.Helper()
	recordWith(t, dir, file, nil, name, args...)
}

// recordWith is record with the profiler's flags.
func recordWith(t *testing.T, dir, file string, flags []string, name string, args ...string) {
	t.Helper()
	argv := append(append([]string{"record", "-o", file}, flags...), "--", wl(t, name))
	if _, stderr, code := run(t, dir, append(argv, args...)...); code != 0 {
		t.Fatalf("record %v %s %v: exit %d\n%s", flags, name, args, code, stderr)
	}
}

// decodeSummary runs profile summary --format json with args in dir and
// decodes the document into v.
func decodeSummary(t *testing.T, dir string, v any, args ...string) {
	t.Helper()
	out, stderr, code := run(t, dir, append([]string{"summary", "--format", "json"}, args...)...)
	if code != 0 {
		t.Fatalf("summary %v: %s", args, stderr)
	}
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatal(err)
	}
}

// demoDisplay is summary's display name of a function of a recording of
// demo: bare in the executable, "module:name" in a library.
func demoDisplay(name, module string) string {
	if module == "" || module == "demo" {
		return name
	}
	return module + ":" + name
}

// pprofRow is a row of go tool pprof -top: a function's flat and cum
// values.
type pprofRow struct {
	Name      string
	Flat, Cum int64
}

// pprofTop runs go tool pprof -top on file (with args, such as
// -sample_index) and returns its rows, hottest first, inlined functions
// under their own names.
func pprofTop(t *testing.T, goTool, file string, args ...string) []pprofRow {
	t.Helper()
	args = append([]string{"tool", "pprof", "-top", "-unit=ns", "-nodefraction=0", "-nodecount=10000"}, args...)
	b, err := exec.Command(goTool, append(args, file)...).CombinedOutput()
	if err != nil {
		t.Fatalf("go tool pprof -top: %v\n%s", err, b)
	}
	row := regexp.MustCompile(`^\s*(\d+)(?:ns)?\s+\S+%\s+\S+%\s+(\d+)(?:ns)?\s+\S+%\s+(.+?)( \(inline\))?$`)
	var rows []pprofRow
	for _, line := range strings.Split(string(b), "\n") {
		if m := row.FindStringSubmatch(line); m != nil {
			flat, _ := strconv.ParseInt(m[1], 10, 64)
			cum, _ := strconv.ParseInt(m[2], 10, 64)
			rows = append(rows, pprofRow{m[3], flat, cum})
		}
	}
	if len(rows) == 0 {
		t.Fatalf("go tool pprof -top: no rows\n%s", b)
	}
	return rows
}

// oneLineError checks a failed command's stderr: one line naming want.
func oneLineError(t *testing.T, stderr string, code int, want string) {
	t.Helper()
	if code == 0 {
		t.Fatalf("exit status 0, want failure (stderr %q)", stderr)
	}
	lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], want) || strings.Contains(stderr, "goroutine") {
		t.Fatalf("stderr = %q, want one line containing %q", stderr, want)
	}
}

func TestRecordExitStatusAndInfo(t *testing.T) {
	dir := t.TempDir()
	stdout, stderr, code := run(t, dir, "record", "-o", "r.data", "--", wl(t, "recursion"))
	if code != 0 {
		t.Fatalf("record: %d %s", code, stderr)
	}
	want, _ := exec.Command(wl(t, "recursion")).Output()
	if stdout != string(want) {
		t.Fatalf("stdout %q, want %q", stdout, want)
	}
	p, err := model.ReadFile(filepath.Join(dir, "r.data"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Meta.Mode != "record" || len(p.Processes) != 1 || !p.Processes[0].Exited {
		t.Fatalf("meta %+v processes %+v", p.Meta, p.Processes)
	}
	info, _, code := run(t, dir, "info", "r.data")
	if code != 0 || !strings.Contains(info, "mode          record") || !strings.Contains(info, "threads (1)") {
		t.Fatalf("info:\n%s", info)
	}
	// A second record keeps the first file as .old.
	run(t, dir, "record", "-o", "r.data", "--", wl(t, "recursion"))
	if _, err := os.Stat(filepath.Join(dir, "r.data.old")); err != nil {
		t.Fatal(err)
	}
	// The target's exit status and fatal signals come through.
	_, _, code = run(t, dir, "record", "-o", "c.data", "--", wl(t, "crash"))
	if code != 128+int(syscall.SIGSEGV) {
		t.Fatalf("record crash exit = %d, want %d", code, 128+int(syscall.SIGSEGV))
	}
}

func TestStatsOutput(t *testing.T) {
	_, stderr, code := run(t, t.TempDir(), "record", "--stats", "--", wl(t, "recursion"))
	if code != 0 || !strings.Contains(stderr, "stops per call:") || !strings.Contains(stderr, "breakpoints:") {
		t.Fatalf("stats: %d\n%s", code, stderr)
	}
}

func TestSigtermDetachesAndWrites(t *testing.T) {
	dir := t.TempDir()
	target, tout, prof, perr := attachToLongrun(t, dir, "2")
	time.Sleep(1500 * time.Millisecond)
	prof.Process.Signal(syscall.SIGTERM)
	if err := prof.Wait(); err != nil {
		t.Fatalf("profile attach after SIGTERM: %v\n%s", err, perr.String())
	}
	if err := target.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("target gone after detach: %v", err)
	}
	p, err := model.ReadFile(filepath.Join(dir, "a.data"))
	if err != nil {
		t.Fatal(err)
	}
	// A detach is complete for its window: detached, not partial.
	if !p.Meta.Detached || p.Meta.Partial || p.Meta.Mode != "attach" || len(p.Threads) != 4 { // main, 2 compute threads, sleeper
		t.Fatalf("profile meta %+v, %d threads", p.Meta, len(p.Threads))
	}
	if err := target.Wait(); err != nil {
		t.Fatalf("target after detach: %v", err)
	}
	if !strings.Contains(tout.String(), "checksum=") {
		t.Fatalf("target output %q", tout.String())
	}
}

func TestErrors(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.data")
	os.WriteFile(junk, []byte("not a profile"), 0o644)
	good := filepath.Join(dir, "good.data")
	if err := model.WriteFile(good, modeltest.Sample()); err != nil {
		t.Fatal(err)
	}
	whole, _ := os.ReadFile(good)
	os.WriteFile(filepath.Join(dir, "cut.data"), whole[:len(whole)/2], 0o644)
	var newer bytes.Buffer
	zw := gzip.NewWriter(&newer)
	zw.Write([]byte("PROFILE\x00\x09\x00\x00\x00"))
	zw.Close()
	os.WriteFile(filepath.Join(dir, "newer.data"), newer.Bytes(), 0o644)
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no such pid", []string{"attach", "--pid", "4194000"}, "no such process"},
		{"missing pid", []string{"attach"}, "needs --pid"},
		{"nothing matched", []string{"record", "--filter", "^no_such_function$", "--", wl(t, "recursion")}, "nothing to trace"},
		{"stripped, nothing selected", []string{"record", "--filter", "nomatch", "--", wl(t, "stripped")},
			"stripped has no symbol table; libraries with symbols: libc.so.6 (--lib libc.so.6 traces every function of libc.so.6)"},
		{"bad regex", []string{"record", "--filter", "(", "--", wl(t, "recursion")}, "("},
		{"no such command", []string{"record", "--", "/no/such/program"}, "no such file"},
		{"corrupt profile", []string{"info", junk}, "junk.data: not a profile file"},
		{"missing profile", []string{"info", filepath.Join(dir, "none.data")}, "none.data: no such file"},
		{"truncated profile", []string{"summary", "cut.data"}, "cut.data: file is truncated"},
		{"newer format", []string{"render", "newer.data", "--svg"}, "newer.data: format version 9 is not supported"},
		{"bad threshold", []string{"prune", "good.data", "--threshold", "lots"}, `bad threshold "lots"`},
		{"threshold over 100%", []string{"prune", "good.data", "--threshold", "150%"}, "150%"},
		{"bad summary format", []string{"summary", "good.data", "--format", "xml"}, "xml"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, stderr, code := run(t, dir, c.args...)
			oneLineError(t, stderr, code, c.want)
		})
	}
}

func TestPermissionDeniedSaysHowToFix(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to run the tracer as an unprivileged user")
	}
	target := exec.Command("sleep", "30")
	if err := target.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { target.Process.Kill(); target.Wait() }()
	cmd := exec.Command(profileBin, "attach", "--pid", itoa(target.Process.Pid), "-o", "/tmp/never.data")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	var errb bytes.Buffer
	cmd.Stderr = &errb
	cmd.Run()
	oneLineError(t, errb.String(), cmd.ProcessState.ExitCode(), "permission denied")
	if !strings.Contains(errb.String(), "ptrace_scope") && !strings.Contains(errb.String(), "CAP_SYS_PTRACE") {
		t.Fatalf("no fix named: %q", errb.String())
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// attachToLongrun starts workload (g) for 4 s with the given threads and
// `profile attach` on it, writing dir/a.data.
func attachToLongrun(t *testing.T, dir, threads string) (target *exec.Cmd, tout *bytes.Buffer, prof *exec.Cmd, perr *bytes.Buffer) {
	t.Helper()
	target = exec.Command(wl(t, "longrun"), "--threads", threads, "--seconds", "4")
	tout = new(bytes.Buffer)
	target.Stdout = tout
	if err := target.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { target.Process.Kill(); target.Wait() })
	prof = exec.Command(profileBin, "attach", "--pid", itoa(target.Process.Pid), "-o", "a.data")
	prof.Dir = dir
	perr = new(bytes.Buffer)
	prof.Stderr = perr
	if err := prof.Start(); err != nil {
		t.Fatal(err)
	}
	return target, tout, prof, perr
}

// A second Ctrl-C while detaching does not abandon the target.
func TestDoubleInterruptStillDetachesCleanly(t *testing.T) {
	dir := t.TempDir()
	target, tout, prof, _ := attachToLongrun(t, dir, "4")
	time.Sleep(1 * time.Second)
	prof.Process.Signal(syscall.SIGINT)
	time.Sleep(2 * time.Millisecond)
	prof.Process.Signal(syscall.SIGINT)
	prof.Process.Signal(syscall.SIGINT)
	if err := prof.Wait(); err != nil {
		t.Fatalf("profile attach after two interrupts: %v", err)
	}
	if _, err := model.ReadFile(filepath.Join(dir, "a.data")); err != nil {
		t.Fatal(err)
	}
	if err := target.Wait(); err != nil {
		t.Fatalf("target after detach: %v (output %q)", err, tout.String())
	}
}

// The recorded program sees our environment unchanged (TMPDIR included,
// which profile borrows briefly at start-up; see internal/gvcache).
func TestRecordedEnvironmentUnchanged(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "env.c")
	os.WriteFile(src, []byte(`#include <stdio.h>
#include <stdlib.h>
int main(void) { const char *v = getenv("TMPDIR"); printf("%s\n", v ? v : "unset"); return 0; }
`), 0o644)
	bin := filepath.Join(dir, "env")
	if out, err := exec.Command("gcc", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	for _, tmp := range []string{"", "/var/tmp/x"} {
		cmd := exec.Command(profileBin, "record", "-o", filepath.Join(dir, "e.data"), "--", bin)
		cmd.Env = []string{"PATH=/usr/bin:/bin"}
		want := "unset\n"
		if tmp != "" {
			cmd.Env = append(cmd.Env, "TMPDIR="+tmp)
			want = tmp + "\n"
		}
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		if string(out) != want {
			t.Errorf("TMPDIR %q: the program saw %q", tmp, out)
		}
	}
}

type summaryJSON struct {
	Totals struct {
		Threads         int   `json:"threads"`
		MaxNestingLevel int   `json:"max_nesting_level"`
		TracedNs        int64 `json:"traced_ns"`
	} `json:"totals"`
	Functions []struct {
		Name           string `json:"name"`
		Calls          int64  `json:"calls"`
		RecursiveCalls int64  `json:"recursive_calls"`
	} `json:"functions"`
	Edges []struct {
		Caller, Callee, Kind string
		Calls                int64 `json:"calls"`
	} `json:"edges"`
}

// The offline half on a recorded workload (c): merge, summary, prune and
// render agree with what the workload did.
func TestOfflineOnRecordedThreads(t *testing.T) {
	dir := t.TempDir()
	for _, file := range []string{"r1.data", "r2.data"} {
		record(t, dir, file, "threads")
	}
	if _, stderr, code := run(t, dir, "merge", "r1.data", "r2.data", "-o", "m.data"); code != 0 {
		t.Fatalf("merge: %s", stderr)
	}
	var s summaryJSON
	decodeSummary(t, dir, &s, "m.data")
	calls := map[string]int64{}
	for _, f := range s.Functions {
		calls[f.Name] += f.Calls
	}
	want, _ := workload.LoadExpected("threads")
	for name, c := range want.Functions {
		if calls[name] != 2*int64(c.Calls) {
			t.Errorf("merged %s calls = %d, want 2×%d", name, calls[name], c.Calls)
		}
	}
	spawns := map[string]int64{}
	for _, e := range s.Edges {
		if e.Kind == "spawn" {
			spawns[e.Caller+"->"+e.Callee] += e.Calls
		}
	}
	if spawns["spawn_level1->level1_thread"] != 4 || spawns["spawn_level2->level2_thread"] != 8 {
		t.Errorf("spawn edges %v, want 4 level-1 and 8 level-2 threads", spawns)
	}
	if s.Totals.MaxNestingLevel != 2 {
		t.Errorf("max nesting level %d", s.Totals.MaxNestingLevel)
	}
	if _, stderr, code := run(t, dir, "prune", "m.data", "--threshold", "1%", "-o", "p.data"); code != 0 {
		t.Fatalf("prune: %s", stderr)
	}
	if _, stderr, code := run(t, dir, "render", "p.data", "--svg", "--threads"); code != 0 {
		t.Fatalf("render: %s", stderr)
	}
	svg, err := os.ReadFile(filepath.Join(dir, "p.svg"))
	if err != nil || !bytes.Contains(svg, []byte("<svg")) {
		t.Fatalf("p.svg: %v", err)
	}
}
