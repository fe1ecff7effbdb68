package attach

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/profile-dev/profile/model"
)

// startSaying starts workload name with args and returns its stdout's
// lines as they come.
func startSaying(t *testing.T, name string, args ...string) (*exec.Cmd, <-chan string) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := startWorkloadTo(t, name, w, args...)
	w.Close() // the target's copy ends the lines when it exits
	lines := make(chan string, 8)
	go func() {
		defer close(lines)
		defer r.Close()
		for s := bufio.NewScanner(r); s.Scan(); {
			lines <- s.Text()
		}
	}()
	return cmd, lines
}

// lastLines reads what a target says until it ends, at most max lines
// (more: a target gone wrong, such as a handler faulting for ever, is
// killed), each within 30 s; the target must then end well, or reaped by
// a tracer (ECHILD: it ended while traced).
func lastLines(t *testing.T, cmd *exec.Cmd, lines <-chan string, max int) []string {
	t.Helper()
	var said []string
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				if err := cmd.Wait(); err != nil && !errors.Is(err, syscall.ECHILD) {
					t.Fatalf("target: %v (said %q)", err, said)
				}
				return said
			}
			if said = append(said, l); len(said) > max {
				cmd.Process.Kill()
				t.Fatalf("target said more than %d lines: %q", max, said)
			}
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			t.Fatalf("target still running 30 s after its last line (said %q)", said)
		}
	}
}

// expectLine waits for the next line of a target's output, which must be
// want.
func expectLine(t *testing.T, cmd *exec.Cmd, lines <-chan string, want string) {
	t.Helper()
	select {
	case l, ok := <-lines:
		if !ok {
			t.Fatalf("target ended before saying %q: %v", want, cmd.Wait())
		}
		if l != want {
			t.Fatalf("target said %q, want %q", l, want)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("target did not say %q within 30 s", want)
	}
}

// sigentry's thread is in a SIGSEGV handler, interrupted at victim's
// byte +2, while the profiler attaches; the handler returns once the
// probes are in. victim must not get an entry patch over the pc its
// thread resumes at (it takes its probe at its call site, or a trap):
// the program goes on as untraced, and victim's 10,000 calls after it
// are counted exactly.
func TestAttachUnderASignalFrameInFirstBytes(t *testing.T) {
	for _, kind := range probeKinds {
		t.Run(kind, func(t *testing.T) {
			cmd, lines := startSaying(t, "sigentry", "60")
			expectLine(t, cmd, lines, "sigentry: faulted")
			opt := defaultOptions(t)
			withKind(&opt, kind)
			stop := attachRunning(t, cmd.Process.Pid, opt)
			select {
			case l := <-lines:
				if l != "sigentry: resumed at +2, 10000 calls" {
					stop()
					t.Fatalf("target said %q (%v)", l, cmd.Wait())
				}
			case <-time.After(60 * time.Second):
				stop()
				t.Fatal("target did not resume within 60 s of tracing")
			}
			r, err := stop()
			if err != nil {
				t.Fatal(err)
			}
			cmd.Process.Signal(syscall.SIGUSR1)
			if said := lastLines(t, cmd, lines, 0); len(said) > 0 {
				t.Errorf("target said %q after resuming", said)
			}
			p := r.Profile
			if calls := nodeCalls(p)["victim"]; calls != 10000 {
				t.Errorf("victim: %d calls, want 10000 (probe %s: %s)", calls, probeOf(p, "victim"), victimNote(p))
			}
			if kind != ProbesTrap && r.Stats.Probes.Sites == 0 {
				t.Errorf("victim: probe %s (%s), not at its call site", probeOf(p, "victim"), victimNote(p))
			}
		})
	}
}

// inplace's handler waits while a profiler's probe keeps wrap's call in
// place, its thread interrupted at that call; the profiler is killed, and
// the next attach undoes the patch the killed one left: the signal frame
// must then resume at the original call (the program says where it
// resumed, and ends as it would untraced).
func TestReattachUnderASignalFrameAtAKilledInPlaceCall(t *testing.T) {
	cmd, lines := startSaying(t, "inplace", "60")
	pid := cmd.Process.Pid
	tracer := startTracer(t, pid, nil, "PROFILE_TEST_TRACE_PID="+strconv.Itoa(pid), "PROFILE_TEST_PROBES="+ProbesInline)
	expectLine(t, cmd, lines, "inplace: faulted")
	tracer.Process.Kill()
	tracer.Wait()
	opt := defaultOptions(t)
	opt.Probes = ProbesInline
	r := attachForOpt(t, pid, 500*time.Millisecond, opt)
	if r.Stats.Leftover.Patches == 0 {
		t.Errorf("no leftover patch undone")
	}
	// The handler returns as soon as the patch is undone: the target may
	// end while traced.
	said := lastLines(t, cmd, lines, 2)
	if got := strings.Join(said, "\n"); got != "inplace: fault at +6, resumes at +4\ninplace: done" {
		t.Errorf("target said %q", got)
	}
}

// victimNote is what the profile says of victim's probe.
func victimNote(p *model.Profile) string {
	fn, _ := funcNamed(p, "victim")
	return fn.ProbeNote
}
