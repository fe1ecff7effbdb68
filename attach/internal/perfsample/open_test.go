package perfsample

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// Each failure of perf_event_open says what it means; refusals, and
// refusals only, wrap ErrNotPermitted and name the setting to change.
func TestOpenErrorSaysWhy(t *testing.T) {
	paranoid, err := readParanoid()
	if err != nil {
		t.Fatal(err)
	}
	setting := fmt.Sprintf("perf_event_paranoid is %d", paranoid)
	for _, c := range []struct {
		err       error
		kernel    bool
		refused   bool
		mentioned string
	}{
		{unix.ESRCH, false, false, "no such thread"},
		{unix.ENOSYS, false, false, "no perf events"},
		{unix.ENOENT, true, false, "no perf events"},
		{unix.EINVAL, false, false, "invalid argument"},
		{unix.EACCES, false, true, setting},
		{unix.EACCES, true, true, setting},
		{unix.EPERM, false, true, setting},
	} {
		got := openError(42, c.kernel, c.err)
		if !errors.Is(got, c.err) {
			t.Errorf("%v (kernel %t): %q does not wrap it", c.err, c.kernel, got)
		}
		if errors.Is(got, ErrNotPermitted) != c.refused {
			t.Errorf("%v (kernel %t): %q: wraps ErrNotPermitted %t, want %t", c.err, c.kernel, got, !c.refused, c.refused)
		}
		if !strings.Contains(got.Error(), c.mentioned) || !strings.Contains(got.Error(), "thread 42") {
			t.Errorf("%v (kernel %t): %q does not say %q about thread 42", c.err, c.kernel, got, c.mentioned)
		}
	}
}

// Open refuses what it cannot sample, saying why.
func TestOpenFails(t *testing.T) {
	b, err := os.ReadFile("/proc/sys/kernel/pid_max")
	if err != nil {
		t.Fatal(err)
	}
	pidMax, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		tid       int
		periodNs  int64
		wraps     error
		mentioned string
	}{
		{"no such thread", pidMax, period, unix.ESRCH, "no such thread"}, // thread ids are below pid_max
		{"no period", os.Getpid(), 0, nil, "not positive"},
	} {
		s, err := Open(c.tid, c.periodNs, false, 0)
		if err == nil {
			s.Close()
			t.Errorf("%s: Open(%d, %d) sampling", c.name, c.tid, c.periodNs)
			continue
		}
		if errors.Is(err, unix.ENOSYS) || errors.Is(err, ErrNotPermitted) {
			t.Skipf("the host refuses perf_event_open: %v", err)
		}
		if c.wraps != nil && !errors.Is(err, c.wraps) || !strings.Contains(err.Error(), c.mentioned) {
			t.Errorf("%s: Open(%d, %d): %v; want %v, saying %q", c.name, c.tid, c.periodNs, err, c.wraps, c.mentioned)
		}
	}
}

// openHelper tries to sample its own thread, user mode only and both
// modes, and prints for each "ok", "refused: ..." or "failed: ...".
func openHelper() {
	runtime.LockOSThread()
	fmt.Println("privileged", privileged())
	for _, kernel := range []bool{false, true} {
		s, err := Open(unix.Gettid(), period, kernel, 0)
		switch {
		case err == nil:
			s.Close()
			fmt.Println("kernel", kernel, "ok")
		case errors.Is(err, ErrNotPermitted):
			fmt.Println("kernel", kernel, "refused:", err)
		default:
			fmt.Println("kernel", kernel, "failed:", err)
		}
	}
	os.Exit(0)
}

// privileged tells whether this process has CAP_PERFMON or CAP_SYS_ADMIN,
// which lift perf_event_paranoid.
func privileged() bool {
	b, _ := os.ReadFile("/proc/self/status")
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "CapEff:"); ok {
			caps, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return err == nil && caps&(1<<unix.CAP_PERFMON|1<<unix.CAP_SYS_ADMIN) != 0
		}
	}
	return false
}

// An unprivileged process (root's tests run it as nobody) is let sample
// what perf_event_paranoid allows, and told what to change for the rest:
// <= 2 for user mode, <= 1 for kernel mode.
func TestUnprivilegedOpen(t *testing.T) {
	paranoid, err := readParanoid()
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), helperEnv+"=open")
	if os.Geteuid() == 0 {
		// nobody must reach the binary: a copy in a directory it may
		// enter.
		dir, err := os.MkdirTemp("", "perfsample")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(dir)
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		cmd.Path = filepath.Join(dir, "helper")
		if err := copyFile(cmd.Path, exe); err != nil {
			t.Fatal(err)
		}
		cmd.Dir = dir
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the helper: %v, saying %q", err, out)
	}
	got := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "privileged" {
			got["privileged"] = f[1]
		} else if len(f) >= 3 && f[0] == "kernel" {
			got[f[1]] = strings.Join(f[2:], " ")
		}
	}
	t.Logf("perf_event_paranoid %d, privileged %s: user mode %q; kernel mode %q", paranoid, got["privileged"], got["false"], got["true"])
	if got["privileged"] == "" {
		t.Fatalf("the helper said %q", out)
	}
	for _, c := range []struct {
		kernel bool
		needs  int // the largest perf_event_paranoid that allows it
	}{
		{false, 2},
		{true, 1},
	} {
		res := got[strconv.FormatBool(c.kernel)]
		if strings.HasPrefix(res, "failed:") && strings.Contains(res, "no perf events") {
			t.Skipf("the host has no perf events: %s", res)
		}
		if got["privileged"] == "true" || paranoid <= c.needs {
			if res != "ok" {
				t.Errorf("kernel %t, perf_event_paranoid %d: %q, want ok", c.kernel, paranoid, res)
			}
			continue
		}
		// Above 2 nothing is allowed: that is the setting to change first.
		needs := c.needs
		if paranoid > 2 {
			needs = 2
		}
		want := fmt.Sprintf("perf_event_paranoid is %d: sampling ", paranoid)
		if !strings.HasPrefix(res, "refused:") || !strings.Contains(res, want) || !strings.Contains(res, fmt.Sprintf("needs <= %d", needs)) {
			t.Errorf("kernel %t, perf_event_paranoid %d: %q; want refused, saying %q", c.kernel, paranoid, res, want)
		}
	}
}

func copyFile(dst, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
