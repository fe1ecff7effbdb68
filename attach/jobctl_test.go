package attach

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/profile-dev/profile/internal/workload"
)

// childPids lists the children of this test process.
func childPids() []int {
	var out []int
	tasks, _ := filepath.Glob("/proc/self/task/*/children")
	for _, f := range tasks {
		b, _ := os.ReadFile(f)
		for _, s := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(s); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}

// newChild waits for a child of this process that is not in before: the
// program a Record running in another goroutine launched.
func newChild(t *testing.T, before map[int]bool) int {
	t.Helper()
	for i := 0; i < 100; i++ {
		time.Sleep(20 * time.Millisecond)
		for _, p := range childPids() {
			if !before[p] {
				return p
			}
		}
	}
	t.Fatal("traced child not found")
	return 0
}

// cpuTicks is a process's utime+stime.
func cpuTicks(pid int) int64 {
	u, s := procTicks(pid)
	return u + s
}

// procTicks is a process's user and system time in clock ticks
// (/proc/PID/stat), -1 if unreadable.
func procTicks(pid int) (user, sys int64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return -1, -1
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	user, _ = strconv.ParseInt(f[11], 10, 64)
	sys, _ = strconv.ParseInt(f[12], 10, 64)
	return user, sys
}

func TestStopContBehavesAsUntraced(t *testing.T) {
	forEachProbe(t, func(t *testing.T, _ Options) {
		args := []string{"--threads", "2", "--seconds", "3"}
		ref, refOut := startLongrun(t, args...)
		before := map[int]bool{}
		for _, p := range childPids() {
			before[p] = true
		}
		bin, err := workload.Path("longrun")
		if err != nil {
			t.Fatal(err)
		}
		type res struct {
			r   *Result
			out string
			err error
		}
		done := make(chan res, 1)
		go func() {
			var out bytes.Buffer
			r, err := recordTo(context.Background(), append([]string{bin}, args...), defaultOptions(t), &out)
			done <- res{r, out.String(), err}
		}()
		pid := newChild(t, before)
		time.Sleep(500 * time.Millisecond)
		syscall.Kill(pid, syscall.SIGSTOP)
		time.Sleep(200 * time.Millisecond)
		t0 := cpuTicks(pid)
		time.Sleep(700 * time.Millisecond)
		if t1 := cpuTicks(pid); t1 != t0 {
			t.Errorf("the stopped target ran: cpu ticks %d -> %d", t0, t1)
		}
		syscall.Kill(pid, syscall.SIGCONT)
		r := <-done
		if r.err != nil {
			t.Fatal(r.err)
		}
		if r.r.ExitCode != 0 || r.r.Signal != 0 {
			t.Fatalf("exit %d signal %v", r.r.ExitCode, r.r.Signal)
		}
		ref.Wait()
		if got, want := checksum(t, r.out), checksum(t, refOut.String()); got != want {
			t.Fatalf("checksum %s, untraced %s", got, want)
		}
	})
}

func TestSigkillStillWritesPartialProfile(t *testing.T) {
	forEachProbe(t, func(t *testing.T, _ Options) {
		before := map[int]bool{}
		for _, p := range childPids() {
			before[p] = true
		}
		bin, err := workload.Path("longrun")
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan *Result, 1)
		// Killed once the tracer follows all four threads: a loaded
		// machine can take longer than any fixed delay to start them.
		opt := defaultOptions(t)
		var once sync.Once
		traced := make(chan struct{})
		opt.Live.Progress = func(s Stats) {
			if s.Threads >= 4 {
				once.Do(func() { close(traced) })
			}
		}
		go func() {
			var out bytes.Buffer
			r, err := recordTo(context.Background(), []string{bin, "--threads", "2", "--seconds", "10"}, opt, &out)
			if err != nil {
				t.Error(err)
			}
			done <- r
		}()
		pid := newChild(t, before)
		select {
		case <-traced:
		case <-time.After(20 * time.Second):
			t.Fatal("the tracer did not see four threads in 20 s")
		}
		time.Sleep(100 * time.Millisecond)
		syscall.Kill(pid, syscall.SIGKILL)
		r := <-done
		if r == nil {
			t.Fatal("no result")
		}
		p := r.Profile
		if err := p.Validate(); err != nil {
			t.Fatal(err)
		}
		if r.Signal != syscall.SIGKILL || !p.Meta.Partial || !strings.Contains(p.Meta.PartialReason, "SIGKILL") {
			t.Fatalf("signal %v, meta %+v", r.Signal, p.Meta)
		}
		if r.Stats.TracedCalls == 0 || len(p.Threads) != 4 {
			t.Fatalf("%d calls, %d threads", r.Stats.TracedCalls, len(p.Threads))
		}
	})
}

func TestNoFollowFork(t *testing.T) {
	forEachProbe(t, func(t *testing.T, _ Options) {
		opt := defaultOptions(t)
		opt.NoFollowFork = true
		r, out := recordWorkload(t, "forks", opt)
		wantOut, code := untraced(t, "forks")
		if out != wantOut || r.ExitCode != code {
			t.Fatalf("output %q exit %d, untraced %q %d", out, r.ExitCode, wantOut, code)
		}
		if len(r.Profile.Processes) != 1 {
			t.Fatalf("%d processes traced, want only the first", len(r.Profile.Processes))
		}
		got := observe(r.Profile)
		if _, ok := got.Functions["child_work"]; ok {
			t.Fatal("the child's work was traced")
		}
		if got.Functions["do_fork"].Calls != 1 || got.Functions["main"].Calls != 1 {
			t.Fatalf("parent functions %v", got.Functions)
		}
	})
}
