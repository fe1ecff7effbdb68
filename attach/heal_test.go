package attach

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/profile-dev/profile/attach/internal/procfs"
	"github.com/profile-dev/profile/attach/internal/ptrace"
	"github.com/profile-dev/profile/attach/internal/stub"
	"github.com/profile-dev/profile/instrument"
	"github.com/profile-dev/profile/internal/proctext"
)

// TestMain lets the test binary run as a tracer of its own, in a process
// the tests can SIGKILL: PROFILE_TEST_TRACE_PID=pid attaches to pid until
// killed (PROFILE_TEST_PROBES its probe kind, PROFILE_TEST_COUNTED its
// --counted, PROFILE_TEST_SAMPLE=1 samples as the command line does,
// PROFILE_TEST_DIE_PARKED=n kills itself at its n-th pause with the
// threads it does not trace parked); PROFILE_TEST_HOLD_TID=tid traces that
// one thread as strace -p would (signals passed on, but SIGURG with
// PROFILE_TEST_SWALLOW_URG=1) until it ends.
func TestMain(m *testing.M) {
	if os.Getenv(WakerEnv) != "" {
		os.Exit(0) // a wake-up child (TestWakeWithoutTrue)
	}
	if v := os.Getenv("PROFILE_TEST_HOLD_TID"); v != "" {
		tid, _ := strconv.Atoi(v)
		holdThread(tid, os.Getenv("PROFILE_TEST_SWALLOW_URG") == "1")
		os.Exit(0)
	}
	if v := os.Getenv("PROFILE_TEST_TRACE_PID"); v != "" {
		pid, _ := strconv.Atoi(v)
		f, _ := instrument.NewFilter(nil, nil, nil)
		opt := Options{Filter: f}
		withKind(&opt, os.Getenv("PROFILE_TEST_PROBES"))
		if c := os.Getenv("PROFILE_TEST_COUNTED"); c != "" {
			opt.Counted = regexp.MustCompile(c)
		}
		if os.Getenv("PROFILE_TEST_SAMPLE") == "1" {
			opt.SamplePeriod = 250 * time.Microsecond
		}
		if n, _ := strconv.Atoi(os.Getenv("PROFILE_TEST_DIE_PARKED")); n > 0 {
			opt.paused = func() {
				if n--; n == 0 {
					unix.Kill(os.Getpid(), unix.SIGKILL)
				}
			}
		}
		if _, err := Attach(context.Background(), pid, opt); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// startTracer runs this test binary as a tracer (TestMain's modes, set by
// env) and waits until task names it as its tracer (at most 2.5 s).
func startTracer(t *testing.T, task int, stderr *bytes.Buffer, env ...string) *exec.Cmd {
	t.Helper()
	tracer := exec.Command(os.Args[0], "-test.run=^$")
	tracer.Env = append(os.Environ(), env...)
	if stderr != nil {
		tracer.Stderr = stderr
	}
	if err := tracer.Start(); err != nil {
		t.Fatal(err)
	}
	for j := 0; j < 500 && procfs.TracerOf(task) != tracer.Process.Pid; j++ {
		time.Sleep(5 * time.Millisecond)
	}
	return tracer
}

// killTracers attaches a tracer (probe kind kind) to pid n times, and
// SIGKILLs each after d, leaving it 200 ms to settle.
func killTracers(t *testing.T, pid int, kind string, n int, d time.Duration) {
	t.Helper()
	for i := 0; i < n; i++ {
		tracer := startTracer(t, pid, nil, "PROFILE_TEST_TRACE_PID="+strconv.Itoa(pid), "PROFILE_TEST_PROBES="+kind)
		time.Sleep(d)
		tracer.Process.Kill()
		tracer.Wait()
		time.Sleep(200 * time.Millisecond)
	}
}

// The profiler SIGKILLed at random moments while attached: the target
// runs on unharmed every time, its output equals an untraced run's. With
// trap probes it heals itself: after its next traps no int3 of ours is
// left in its text. With inline probes the patches stay and the stubs
// stop waiting for the dead tracer. After each kill the next tracer
// attaches to the process again.
func TestProfilerKilledTargetHeals(t *testing.T) {
	for _, kind := range probeKinds {
		t.Run(kind, func(t *testing.T) { profilerKilled(t, kind) })
	}
}

func profilerKilled(t *testing.T, kind string) {
	args := []string{"--threads", "4", "--seconds", "8"}
	ref, refOut := startLongrun(t, args...)
	target, out := startLongrun(t, args...)
	pid := target.Process.Pid
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	for i := 0; i < 5; i++ {
		var stderr bytes.Buffer
		tracer := startTracer(t, pid, &stderr, "PROFILE_TEST_TRACE_PID="+strconv.Itoa(pid), "PROFILE_TEST_PROBES="+kind)
		time.Sleep(time.Duration(100+rng.Intn(500)) * time.Millisecond)
		tracer.Process.Kill()
		tracer.Wait()
		time.Sleep(200 * time.Millisecond) // its threads trap and heal
		if procfs.TracerOf(pid) != 0 {
			t.Fatalf("kill %d: target still traced", i)
		}
		if err := proctext.FileText(pid); kind == ProbesTrap && err != nil {
			target.Wait()
			t.Fatalf("kill %d: %v (target %v, tracer said %q)", i, err, target.ProcessState, stderr.String())
		}
	}
	if err := target.Wait(); err != nil {
		t.Fatalf("target after 5 tracer deaths: %v", err)
	}
	ref.Wait()
	if got, want := checksum(t, out.String()), checksum(t, refOut.String()); got != want {
		t.Fatalf("checksum %s, untraced %s", got, want)
	}
}

// A profiler killed while attached leaves its inline patches, its
// injection chain in text slack and its SIGTRAP handler as the process's
// disposition (its code areas too, which stay). A later attach undoes
// them: after its clean detach every byte of the target's file mappings is
// its file's again and SIGTRAP has the program's own disposition (the
// default: longrun catches none), and it traced as on a fresh process.
func TestReattachUndoesWhatAKilledProfilerLeft(t *testing.T) {
	for _, kind := range probeKinds {
		t.Run(kind, func(t *testing.T) {
			args := []string{"--threads", "4", "--seconds", "8"}
			ref, refOut := startLongrun(t, args...)
			target, out := startLongrun(t, args...)
			pid := target.Process.Pid
			before := profilerAreas(t, pid, nil)
			killTracers(t, pid, kind, 2, 700*time.Millisecond)
			if procfs.Mask(procfs.Status(pid), "SigCgt")&(1<<(unix.SIGTRAP-1)) == 0 {
				t.Fatal("no SIGTRAP handler after the kills: nothing was left to undo")
			}
			opt := defaultOptions(t)
			withKind(&opt, kind)
			r := attachForOpt(t, pid, 2*time.Second, opt)
			if r.Stats.TracedCalls == 0 || r.Profile.Meta.Partial {
				t.Errorf("clean attach after the kills: %d calls, partial %v (%s)", r.Stats.TracedCalls, r.Profile.Meta.Partial, r.Profile.Meta.PartialReason)
			}
			if s := r.Stats; s.Leftover.Handlers == 0 || probesOf(kind) == ProbesInline && s.Leftover.Patches == 0 || s.Leftover.Areas == 0 || s.Leftover.Kept != 0 {
				t.Errorf("undone: %d inline patches, %d int3s, %d handlers; %d areas unmapped, %d kept",
					s.Leftover.Patches, s.Leftover.Int3s, s.Leftover.Handlers, s.Leftover.Areas, s.Leftover.Kept)
			}
			// Nothing of theirs is left to jump into them once their
			// patches are undone: only a thread still in their code or
			// returning there may keep them mapped until the detach.
			if strings.Contains(r.Stats.Leftover.Why, "jumps into") {
				t.Errorf("a reclaim kept the areas: %s", r.Stats.Leftover.Why)
			}
			if left := profilerAreas(t, pid, before); len(left) > 0 {
				t.Errorf("after the clean detach the profilers' areas are still mapped: %v", left)
			}
			if err := proctext.FileBytes(pid); err != nil {
				t.Errorf("after the clean detach: %v", err)
			}
			if procfs.Mask(procfs.Status(pid), "SigCgt")&(1<<(unix.SIGTRAP-1)) != 0 {
				t.Error("after the clean detach SIGTRAP is still caught: a killed profiler's handler is left")
			}
			if err := target.Wait(); err != nil {
				t.Fatalf("target: %v", err)
			}
			ref.Wait()
			if got, want := checksum(t, out.String()), checksum(t, refOut.String()); got != want {
				t.Fatalf("checksum %s, untraced %s", got, want)
			}
		})
	}
}

// profilerAreas lists pid's mappings that may be a profiler's, but for
// those in known (by range): anonymous executable mappings, memfds of
// rings, and anonymous data holding our name where a data block does.
func profilerAreas(t *testing.T, pid int, known []string) []string {
	t.Helper()
	maps, err := instrument.ReadMaps(pid)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	name := make([]byte, len(stub.RingsName))
	for _, m := range maps {
		r := fmt.Sprintf("%x-%x %s", m.Start, m.End, m.Path)
		if slices.Contains(known, r) {
			continue
		}
		switch {
		case m.Path == ringsMapping,
			m.Path == "" && m.Exec(),
			m.Path == "" && m.End-m.Start >= stub.DataSize && ptrace.ReadMem(pid, m.Start+stub.DName, name) == nil && string(name) == stub.RingsName:
			out = append(out, r)
		}
	}
	return out
}
