package cmd_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/profile-dev/profile/internal/workload"
	"github.com/profile-dev/profile/model"
)

// runEnv is run with environment variables added (NAME=value).
func runEnv(t *testing.T, dir string, env []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(profileBin, args...)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			t.Fatal(err)
		}
	}
	return out.String(), errb.String(), cmd.ProcessState.ExitCode()
}

// fullDisk mounts a 64 KiB tmpfs, fills it and returns its directory; it
// is unmounted at the end of the test. Skipped where mounting is not
// allowed: /dev/full fails writes the same way for those tests.
func fullDisk(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size=64k"); err != nil {
		t.Skipf("cannot mount a tmpfs here (%v): the /dev/full cases stand in", err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dir, 0); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	f, err := os.Create(filepath.Join(dir, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	block := make([]byte, 4096)
	for {
		if _, err := f.Write(block); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			return dir
		}
	}
}

// keptAt is the file stderr says the profile was kept at instead of out,
// checking it is said in one line naming out's failure; "" when none.
func keptAt(t *testing.T, stderr, out, tmp string) string {
	t.Helper()
	re := regexp.MustCompile(`(?m)^profile: (?:write |-o )` + regexp.QuoteMeta(out) + `[: ].*; kept the profile at (` +
		regexp.QuoteMeta(tmp) + `/\S+) instead$`)
	m := re.FindStringSubmatch(stderr)
	if m == nil {
		t.Errorf("stderr does not say that %s failed and where the profile was kept in %s:\n%s", out, tmp, stderr)
		return ""
	}
	return m[1]
}

// mainCounts are the calls and recursive calls of the functions of p's
// first executable, as the workloads' expected files give them.
func mainCounts(p *model.Profile) map[string]workload.Counts {
	out := map[string]workload.Counts{}
	for _, th := range p.Threads {
		for _, n := range th.Nodes[1:] {
			fn := p.Functions[n.Func]
			if p.Modules[fn.Module].Path != p.Processes[0].Exe {
				continue
			}
			c := out[fn.Name]
			c.Calls += uint64(n.Calls)
			c.RecursiveCalls += uint64(n.RecursiveCalls)
			out[fn.Name] = c
		}
	}
	return out
}

// checkKeptProfile reads the kept profile at path (model.ReadFile
// validates it) and compares its counts with the workload's expected file.
func checkKeptProfile(t *testing.T, path, name string) *model.Profile {
	t.Helper()
	p, err := model.ReadFile(path)
	if err != nil {
		t.Fatalf("kept profile: %v", err)
	}
	want, err := workload.LoadExpected(name)
	if err != nil {
		t.Fatal(err)
	}
	if got := mainCounts(p); len(got) != len(want.Functions) {
		t.Errorf("kept profile of %s: %v, want %v", name, got, want.Functions)
	} else {
		for f, c := range want.Functions {
			if got[f] != c {
				t.Errorf("kept profile of %s: %s %+v, want %+v", name, f, got[f], c)
			}
		}
	}
	return p
}

// A full or failing disk loses nothing: record still exits with the
// program's status, says in one line why -o failed and where the profile
// was kept instead, and the kept file is the whole profile. A real full
// file system where mounting is allowed, /dev/full (every write ENOSPC)
// everywhere.
func TestRecordOnFullDisk(t *testing.T) {
	for _, c := range []struct {
		name, workload string
		full           bool // on a full tmpfs, else -o /dev/full
		code           int
	}{
		{"full tmpfs", "recursion", true, 0},
		{"full tmpfs, program crashes", "crash", true, 128 + int(syscall.SIGSEGV)},
		{"/dev/full", "recursion", false, 0},
		{"/dev/full, program crashes", "crash", false, 128 + int(syscall.SIGSEGV)},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, fs := "/dev/full", ""
			if c.full {
				fs = fullDisk(t)
				out = filepath.Join(fs, "r.data")
			}
			tmp := t.TempDir()
			_, stderr, code := runEnv(t, t.TempDir(), []string{"TMPDIR=" + tmp}, "record", "-o", out, "--", wl(t, c.workload))
			if code != c.code {
				t.Fatalf("exit %d, want the program's %d\n%s", code, c.code, stderr)
			}
			if c.full && !regexp.MustCompile(`(?m)^profile: warning: only \d+ bytes free in `+regexp.QuoteMeta(fs)+`: `).MatchString(stderr) {
				t.Errorf("no warning of the low space before tracing:\n%s", stderr)
			}
			kept := keptAt(t, stderr, out, tmp)
			if kept == "" {
				return
			}
			want := "r.*.data" // named after -o
			if !c.full {
				want = "full.*"
			}
			if ok, _ := filepath.Match(filepath.Join(tmp, want), kept); !ok {
				t.Errorf("kept at %s, want %s in %s", kept, want, tmp)
			}
			p := checkKeptProfile(t, kept, c.workload)
			if c.workload == "crash" && (p.Meta.Crash == nil || p.Meta.Crash.Signal != "SIGSEGV" || !p.Meta.Partial) {
				t.Errorf("kept profile of a crash: meta %+v", p.Meta)
			}
			if files := keptFiles(t, tmp); len(files) != 1 {
				t.Errorf("kept %v in %s, want one file (the crash snapshot replaced by the final profile)", files, tmp)
			}
		})
	}
}

// keptFiles are the regular files in tmp (profile keeps a cache
// directory there too).
func keptFiles(t *testing.T, tmp string) []string {
	t.Helper()
	entries, err := os.ReadDir(tmp)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, e := range entries {
		if e.Type().IsRegular() {
			files = append(files, e.Name())
		}
	}
	return files
}

// When the profile can be kept nowhere, stderr says why and that it is
// lost; record's exit status is still the program's, attach's is 1.
func TestProfileLost(t *testing.T) {
	// Under a regular file: no directory can be made there.
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o644)
	noTmp := filepath.Join(file, "tmp")
	env := []string{"TMPDIR=" + noTmp}
	lost := regexp.MustCompile(`(?m)^profile: write /dev/full: no space left on device; keeping it in ` +
		regexp.QuoteMeta(noTmp) + ` failed too: not a directory: the profile is lost$`)
	_, stderr, code := runEnv(t, t.TempDir(), env, "record", "-o", "/dev/full", "--", wl(t, "recursion"))
	if code != 0 || !lost.MatchString(stderr) {
		t.Errorf("record: exit %d, want the program's 0 and the loss said:\n%s", code, stderr)
	}
	target := startLongrunFor(t, "10")
	_, stderr, code = runEnv(t, t.TempDir(), env, "attach", "--pid", itoa(target.Process.Pid), "--duration", "500ms",
		"-o", "/dev/full")
	if code != 1 || !lost.MatchString(stderr) {
		t.Errorf("attach: exit %d, want 1 and the loss said:\n%s", code, stderr)
	}
}

// startLongrunFor starts the longrun workload for the given seconds, killed
// at the end of the test if still running.
func startLongrunFor(t *testing.T, seconds string) *exec.Cmd {
	t.Helper()
	target := exec.Command(wl(t, "longrun"), "--threads", "2", "--seconds", seconds)
	if err := target.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { target.Process.Kill(); target.Wait() })
	time.Sleep(200 * time.Millisecond) // running its loops
	return target
}

// attach --duration on a failing output: exit 0 with the profile kept,
// complete for its window (detached, not partial).
func TestAttachOnFullDisk(t *testing.T) {
	target := startLongrunFor(t, "10")
	tmp := t.TempDir()
	_, stderr, code := runEnv(t, t.TempDir(), []string{"TMPDIR=" + tmp}, "attach", "--pid", itoa(target.Process.Pid),
		"--duration", "500ms", "-o", "/dev/full")
	if code != 0 {
		t.Fatalf("exit %d, want 0: the profile was kept\n%s", code, stderr)
	}
	kept := keptAt(t, stderr, "/dev/full", tmp)
	if kept == "" {
		return
	}
	p, err := model.ReadFile(kept)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Meta.Detached || p.Meta.Partial || p.Meta.TracedCalls == 0 {
		t.Errorf("kept profile meta %+v: want detached, not partial, with calls", p.Meta)
	}
}

// Snapshots that cannot be written are kept aside one by one, as the
// final profile is.
func TestSnapshotsOnFullDisk(t *testing.T) {
	fs := fullDisk(t)
	tmp := t.TempDir()
	out := filepath.Join(fs, "c.data")
	_, stderr, code := runEnv(t, t.TempDir(), []string{"TMPDIR=" + tmp}, "record", "--checkpoint", "checkpoint", "-o", out,
		"--", wl(t, "checkpoints"), "3", "100")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for k := 1; k <= 3; k++ {
		name := out + "." + itoa(k)
		re := regexp.MustCompile(`(?m)^profile: snapshot: write ` + regexp.QuoteMeta(name) +
			`: no space left on device; kept the profile at (` + regexp.QuoteMeta(tmp) + `/c\.data\.\S+\.` + itoa(k) + `) instead \(\d+ calls\)$`)
		m := re.FindStringSubmatch(stderr)
		if m == nil {
			t.Errorf("snapshot %d not said kept:\n%s", k, stderr)
			continue
		}
		if w, c := workCalls(t, m[1]); w != int64(100*k) || c != int64(k) {
			t.Errorf("snapshot %d kept: work %d, checkpoint %d", k, w, c)
		}
	}
	if kept := keptAt(t, stderr, out, tmp); kept != "" {
		if w, c := workCalls(t, kept); w != 350 || c != 3 {
			t.Errorf("final profile kept: work %d, checkpoint %d", w, c)
		}
	}
}
