package attach

import (
	"bufio"
	"errors"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/profile-dev/profile/internal/workload"
	"github.com/profile-dev/profile/model"
)

// startSaying starts workload name with args and returns its stdout's
// lines as they come.
func startSaying(t *testing.T, name string, args ...string) (*exec.Cmd, <-chan string) {
	t.Helper()
	bin, err := workload.Path(name)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := make(chan string, 8)
	go func() {
		defer close(lines)
		for s := bufio.NewScanner(stdout); s.Scan(); {
			lines <- s.Text()
		}
	}()
	return cmd, lines
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
			if err := cmd.Wait(); err != nil {
				t.Fatalf("target: %v", err)
			}
			p := r.Profile
			var calls int64
			for _, th := range p.Threads {
				for _, n := range th.Nodes {
					if p.FuncName(n.Func) == "victim" {
						calls += n.Calls
					}
				}
			}
			if calls != 10000 {
				t.Errorf("victim: %d calls, want 10000 (probe %s: %s)", calls, probeOf(p, "victim"), probeNote(p, "victim"))
			}
			if kind != ProbesTrap && r.Stats.Probes.Sites == 0 {
				t.Errorf("victim: probe %s (%s), not at its call site", probeOf(p, "victim"), probeNote(p, "victim"))
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
	var said []string
	deadline := time.After(30 * time.Second)
	for open := true; open && len(said) < 3; {
		select {
		case l, ok := <-lines:
			if open = ok; ok {
				said = append(said, l)
			}
		case <-deadline:
			open = false
		}
	}
	if len(said) != 2 {
		cmd.Process.Kill()
		t.Fatalf("target said %q", said)
	}
	// The handler returns as soon as the patch is undone: the target may
	// end while traced, reaped by the tracer (ECHILD here).
	if err := cmd.Wait(); err != nil && !errors.Is(err, syscall.ECHILD) {
		t.Fatalf("target: %v (said %q)", err, said)
	}
	if got := strings.Join(said, "\n"); got != "inplace: fault at +6, resumes at +4\ninplace: done" {
		t.Errorf("target said %q", got)
	}
}

// probeNote is the profile's note on the probe of the function named name.
func probeNote(p *model.Profile, name string) string {
	for f, fn := range p.Functions {
		if p.FuncName(f) == name {
			return fn.ProbeNote
		}
	}
	return ""
}
