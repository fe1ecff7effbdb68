package cmd_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/profile-dev/profile/model"
)

// procField returns a field of /proc/PID/status.
func procField(t *testing.T, pid int, name string) string {
	t.Helper()
	b, err := os.ReadFile("/proc/" + itoa(pid) + "/status")
	if err != nil {
		t.Fatalf("pid %d: %v", pid, err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// untouched checks that a process we attached to and left runs as before:
// not stopped, not traced, no injected mapping left, SIGTRAP disposition
// as it was.
func untouched(t *testing.T, pid int, sigCgt string) {
	t.Helper()
	if st := procField(t, pid, "State"); !strings.HasPrefix(st, "S") && !strings.HasPrefix(st, "R") {
		t.Errorf("target state %q after profile left", st)
	}
	if tp := procField(t, pid, "TracerPid"); tp != "0" {
		t.Errorf("target still traced by %s", tp)
	}
	if got := procField(t, pid, "SigCgt"); got != sigCgt {
		t.Errorf("target's caught signals %s, were %s", got, sigCgt)
	}
	maps, _ := os.ReadFile("/proc/" + itoa(pid) + "/maps")
	for _, line := range strings.Split(string(maps), "\n") {
		if f := strings.Fields(line); len(f) == 5 && strings.Contains(f[1], "x") {
			t.Errorf("anonymous executable mapping left behind: %s", line)
		}
	}
}

// Debian's sleep is stripped: attach traces what there is (libc's waiting
// calls), detaches, and a filter that selects nothing is a clear error;
// neither hangs or leaves the target stopped.
func TestAttachStrippedProgram(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep")
	}
	target := exec.Command(sleep, "30")
	if err := target.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { target.Process.Kill(); target.Wait() }()
	pid := target.Process.Pid
	time.Sleep(200 * time.Millisecond)
	sigCgt := procField(t, pid, "SigCgt")
	dir := t.TempDir()

	_, stderr, code := run(t, dir, "attach", "--pid", itoa(pid), "--filter", "^nomatch$")
	oneLineError(t, stderr, code, "sleep has no symbol table; libraries with symbols: libc.so.6")
	untouched(t, pid, sigCgt)

	// An empty debug directory: libc is read as shipped, without libc6-dbg.
	_, stderr, code = run(t, dir, "attach", "--pid", itoa(pid), "--duration", "300ms", "-o", "s.data", "--debug-dir", t.TempDir())
	if code != 0 {
		t.Fatalf("attach: exit %d: %s", code, stderr)
	}
	untouched(t, pid, sigCgt)
	p, err := model.ReadFile(filepath.Join(dir, "s.data"))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Meta.Warnings) != 1 || !strings.Contains(p.Meta.Warnings[0], "sleep has no symbol table") {
		t.Errorf("warnings %q, want one about sleep's missing symbol table", p.Meta.Warnings)
	}
	inFlight := false
	for _, th := range p.Threads {
		for _, n := range th.Nodes {
			inFlight = inFlight || strings.Contains(p.FuncName(n.Func), "nanosleep")
		}
	}
	if !inFlight {
		t.Error("the sleep in progress at attach is not in the profile")
	}
	out, _, _ := run(t, dir, "info", "s.data")
	if !strings.Contains(out, "libc.so.6: no symbol table, traced through its dynamic symbols only") {
		t.Errorf("info does not say libc was traced through its dynamic symbols:\n%s", out)
	}
}

// A stripped executable is recorded through its libraries.
func TestRecordStrippedProgram(t *testing.T) {
	dir := t.TempDir()
	// An empty debug directory: libc is read as shipped, without libc6-dbg.
	stdout, stderr, code := run(t, dir, "record", "-o", "st.data", "--debug-dir", t.TempDir(), "--", wl(t, "stripped"))
	if code != 0 || !strings.Contains(stdout, "result=") {
		t.Fatalf("record of a stripped program: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	p, err := model.ReadFile(filepath.Join(dir, "st.data"))
	if err != nil {
		t.Fatal(err)
	}
	calls := map[string]int64{}
	for _, th := range p.Threads {
		for _, n := range th.Nodes {
			calls[p.FuncName(n.Func)] += n.Calls
		}
	}
	if calls["libc.so.6:write"] == 0 {
		t.Errorf("the program's write is not traced: %v", calls)
	}
	out, _, _ := run(t, dir, "summary", "st.data")
	if !strings.Contains(out, "stripped has no symbol table") || !strings.Contains(out, "libc.so.6 (dynamic symbols only)") {
		t.Errorf("summary does not say what was traced of a stripped program:\n%s", out)
	}
}

// A Go program is refused with the reason and what to use instead;
// --force traces it with a warning in the profile.
func TestGoProgramRefused(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "main.go")
	os.WriteFile(src, []byte("package main\n\nfunc main() { println(\"hello\") }\n"), 0o644)
	bin := filepath.Join(dir, "gohello")
	build := exec.Command("go", "build", "-o", bin, src)
	build.Dir = dir
	build.Env = append(os.Environ(), "GO111MODULE=off")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	_, stderr, code := run(t, dir, "record", "--", bin)
	oneLineError(t, stderr, code, "is a Go program")
	if !strings.Contains(stderr, "runtime/pprof") || !strings.Contains(stderr, "--force") {
		t.Errorf("no hint in %q", stderr)
	}
	_, stderr, code = run(t, dir, "record", "--force", "-o", "go.data", "--", bin)
	if code != 0 {
		t.Fatalf("record --force: exit %d: %s", code, stderr)
	}
	p, err := model.ReadFile(filepath.Join(dir, "go.data"))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Meta.Warnings) == 0 || !strings.Contains(p.Meta.Warnings[0], "Go program traced with --force") {
		t.Errorf("warnings %q", p.Meta.Warnings)
	}
}

// Each refusal of attach names its cause: a zombie, a kernel thread,
// profile itself, a process another tracer holds.
func TestAttachRefusals(t *testing.T) {
	dir := t.TempDir()
	// A zombie: a child of ours that exited and is not reaped yet.
	zombie := exec.Command("true")
	if err := zombie.Start(); err != nil {
		t.Fatal(err)
	}
	defer zombie.Wait()
	for i := 0; i < 100 && !strings.HasPrefix(procField(t, zombie.Process.Pid, "State"), "Z"); i++ {
		time.Sleep(10 * time.Millisecond)
	}
	// A process traced by another tracer: profile attached to it.
	held := exec.Command("sleep", "30")
	if err := held.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { held.Process.Kill(); held.Wait() }()
	tracer := exec.Command(profileBin, "attach", "--pid", itoa(held.Process.Pid), "-o", filepath.Join(dir, "held.data"))
	if err := tracer.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { tracer.Process.Kill(); tracer.Wait() }()
	for i := 0; i < 500 && procField(t, held.Process.Pid, "TracerPid") == "0"; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	cases := []struct {
		name string
		pid  int
		want string
	}{
		{"zombie", zombie.Process.Pid, "it is a zombie"},
		{"kernel thread", 2, "it is a kernel thread"},
		{"already traced", held.Process.Pid, "it is already traced by pid " + itoa(tracer.Process.Pid)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, stderr, code := run(t, dir, "attach", "--pid", itoa(c.pid))
			oneLineError(t, stderr, code, c.want)
		})
	}
}

// record --duration stops tracing at D, then waits for the program and
// exits with its status: the program is never orphaned.
func TestRecordDurationWaitsForTheProgram(t *testing.T) {
	dir := t.TempDir()
	stdout, stderr, code := run(t, dir, "record", "--duration", "200ms", "-o", "d.data", "--",
		"sh", "-c", "sleep 0.8; echo finished; exit 3")
	if code != 3 || stdout != "finished\n" {
		t.Fatalf("exit %d, stdout %q, want 3 and the program's output (stderr %q)", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "runs on untraced, waiting for it to exit") {
		t.Errorf("stderr does not say it waits: %q", stderr)
	}
	if _, err := model.ReadFile(filepath.Join(dir, "d.data")); err != nil {
		t.Fatal(err)
	}
}

// A --lib that selects nothing the program loaded is said, not ignored.
func TestLibMatchingNothingIsSaid(t *testing.T) {
	dir := t.TempDir()
	_, stderr, code := run(t, dir, "record", "--lib", "nosuchlib.so", "-o", "l.data", "--", wl(t, "recursion"))
	if code != 0 || !strings.Contains(stderr, "--lib nosuchlib.so matched no library the program loaded") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	p, err := model.ReadFile(filepath.Join(dir, "l.data"))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Meta.Warnings) != 1 || !strings.Contains(p.Meta.Warnings[0], "nosuchlib.so") {
		t.Errorf("warnings %q", p.Meta.Warnings)
	}
}
