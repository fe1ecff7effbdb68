package attach

import (
	"bytes"
	"context"
	"io"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/profile-dev/profile/internal/workload"
)

// startLongrun starts workload (g) untraced with its stdout captured.
func startLongrun(t *testing.T, args ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	return startWorkload(t, "longrun", args...)
}

// startWorkload starts workload name untraced with its stdout captured,
// killed at the test's end if it still runs.
func startWorkload(t *testing.T, name string, args ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	var out bytes.Buffer
	return startWorkloadTo(t, name, &out, args...), &out
}

// startWorkloadTo starts workload name untraced, its stdout to stdout,
// killed at the test's end if it still runs.
func startWorkloadTo(t *testing.T, name string, stdout io.Writer, args ...string) *exec.Cmd {
	t.Helper()
	bin, err := workload.Path(name)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout = stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd
}

func checksum(t *testing.T, out string) string {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, "checksum="); ok {
			return v
		}
	}
	t.Fatalf("no checksum in %q", out)
	return ""
}

// attachFor traces pid for d, then detaches.
func attachFor(t *testing.T, pid int, d time.Duration) *Result {
	t.Helper()
	return attachForOpt(t, pid, d, defaultOptions(t))
}

func attachForOpt(t *testing.T, pid int, d time.Duration, opt Options) *Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	r, err := Attach(ctx, pid, opt)
	if err != nil {
		t.Fatalf("attach: %v", err)
	}
	if err := r.Profile.Validate(); err != nil {
		t.Fatal(err)
	}
	return r
}

// attachRunning starts an attach to pid and returns once it traces (its
// first progress report); stop ends it and returns what it returned.
func attachRunning(t *testing.T, pid int, opt Options) (stop func() (*Result, error)) {
	t.Helper()
	ready := make(chan struct{})
	var once sync.Once
	opt.Live.Progress = func(Stats) { once.Do(func() { close(ready) }) }
	ctx, cancel := context.WithCancel(context.Background())
	type res struct {
		r   *Result
		err error
	}
	done := make(chan res, 1)
	go func() { r, err := Attach(ctx, pid, opt); done <- res{r, err} }()
	select {
	case <-ready:
	case d := <-done:
		cancel()
		t.Fatalf("attach ended before tracing: %v", d.err)
	case <-time.After(20 * time.Second):
		cancel()
		<-done
		t.Fatal("attach: not tracing after 20 s")
	}
	return func() (*Result, error) {
		cancel()
		d := <-done
		return d.r, d.err
	}
}

func TestAttachDetachKeepsTargetCorrect(t *testing.T) {
	forEachProbe(t, func(t *testing.T, _ Options) {
		args := []string{"--threads", "4", "--seconds", "6"}
		ref, refOut := startLongrun(t, args...)
		target, out := startLongrun(t, args...)
		time.Sleep(500 * time.Millisecond)
		r := attachFor(t, target.Process.Pid, 3*time.Second)
		if r.Stats.TracedCalls == 0 || len(r.Profile.Threads) != 6 {
			t.Errorf("traced %d calls on %d threads, want calls on 6 threads", r.Stats.TracedCalls, len(r.Profile.Threads))
		}
		if m := r.Profile.Meta; !m.Detached || m.Partial {
			t.Errorf("detached %v, partial %v (%s): a detach of a running target is complete for its window", m.Detached, m.Partial, m.PartialReason)
		}
		// The attach says how long it held the process stopped: some
		// time, and less than the whole window.
		if p := r.Stats.AttachPause; p <= 0 || p >= 3*time.Second {
			t.Errorf("attach pause %v", p)
		}
		if err := target.Wait(); err != nil {
			t.Fatalf("target after detach: %v", err)
		}
		ref.Wait()
		if got, want := checksum(t, out.String()), checksum(t, refOut.String()); got != want {
			t.Fatalf("checksum after attach/detach = %s, untraced %s", got, want)
		}
	})
}

func TestAttachDetachTwentyTimes(t *testing.T) {
	forEachProbe(t, func(t *testing.T, _ Options) {
		args := []string{"--threads", "4", "--seconds", "20"}
		ref, refOut := startLongrun(t, args...)
		target, out := startLongrun(t, args...)
		time.Sleep(300 * time.Millisecond)
		for i := 0; i < 20; i++ {
			r := attachFor(t, target.Process.Pid, 150*time.Millisecond)
			if len(r.Profile.Threads) == 0 {
				t.Fatalf("cycle %d: no threads", i)
			}
			time.Sleep(50 * time.Millisecond)
		}
		if err := target.Wait(); err != nil {
			t.Fatalf("target after 20 cycles: %v", err)
		}
		ref.Wait()
		if got, want := checksum(t, out.String()), checksum(t, refOut.String()); got != want {
			t.Fatalf("checksum = %s, untraced %s", got, want)
		}
	})
}

func TestAttachErrors(t *testing.T) {
	_, err := Attach(context.Background(), 1<<22+12345, defaultOptions(t))
	if err == nil || !strings.Contains(err.Error(), "no such process") {
		t.Fatalf("err = %v", err)
	}
}
