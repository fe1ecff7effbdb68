package attach

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/profile-dev/profile/internal/proctext"
	"github.com/profile-dev/profile/internal/workload"
)

func TestHundredAttachDetachCyclesLeaveNoTrace(t *testing.T) {
	forEachProbe(t, func(t *testing.T, _ Options) {
		if testing.Short() {
			t.Skip("long")
		}
		args := []string{"--threads", "4", "--seconds", "45"} // outlasts 100 cycles on a loaded machine
		ref, refOut := startLongrun(t, args...)
		target, out := startLongrun(t, args...)
		time.Sleep(300 * time.Millisecond)
		pid := target.Process.Pid
		if err := proctext.MatchesDisk(pid); err != nil {
			t.Fatalf("before tracing: %v", err)
		}
		start := time.Now()
		for i := 0; i < 100; i++ {
			if time.Since(start) > 40*time.Second {
				// A loaded machine: stop before the target's 45 s end.
				if i < 20 {
					t.Fatalf("only %d cycles in 40 s", i)
				}
				t.Logf("%d cycles in 40 s (a loaded machine)", i)
				break
			}
			r := attachFor(t, pid, 40*time.Millisecond)
			if r.Stats.Breakpoints == 0 && r.Stats.Probes.Inline == 0 {
				t.Fatalf("cycle %d: no probes inserted", i)
			}
			if r.Stats.StackRefs != 0 {
				t.Fatalf("cycle %d: %d frames would return into the inline probes' code", i, r.Stats.StackRefs)
			}
			if err := proctext.MatchesDisk(pid); err != nil {
				target.Wait()
				t.Fatalf("after cycle %d: %v (target: %v, output %q)", i, err, target.ProcessState, out.String())
			}
		}
		if err := target.Wait(); err != nil {
			t.Fatalf("target after 100 cycles: %v", err)
		}
		ref.Wait()
		if got, want := checksum(t, out.String()), checksum(t, refOut.String()); got != want {
			t.Fatalf("checksum %s, untraced %s", got, want)
		}
	})
}

// A stop requested while a vfork child runs traced code: its parent waits
// in the kernel and cannot stop until the child execs, so detaching must
// let the child run there, not hold it (which hung the tracer for good).
// The program then ends as it would untraced.
func TestDetachWhileAVforkChildRuns(t *testing.T) {
	forEachProbe(t, func(t *testing.T, opt Options) {
		bin, err := workload.Path("vforkwait")
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 250*time.Millisecond)
		defer cancel()
		type out struct {
			r   *Result
			err error
		}
		var stdout bytes.Buffer
		done := make(chan out, 1)
		go func() {
			r, err := recordTo(ctx, []string{bin, "700", "2"}, opt, &stdout)
			done <- out{r, err}
		}()
		var o out
		select {
		case o = <-done:
		case <-time.After(60 * time.Second):
			t.Fatal("the tracer did not let go within 60 s")
		}
		if o.err != nil {
			t.Fatal(o.err)
		}
		if o.r.Exited {
			t.Fatalf("the program ended while traced (exit %d): the stop came too late to test anything", o.r.ExitCode)
		}
		if err := o.r.Profile.Validate(); err != nil {
			t.Fatal(err)
		}
		code, sig, err := WaitExit(o.r.Pid)
		if err != nil || code != 0 || sig != 0 {
			t.Fatalf("program: exit %d, signal %v, %v", code, sig, err)
		}
		if want := "round 1: exit 0\nround 2: exit 0\ndone\n"; stdout.String() != want {
			t.Fatalf("output %q, want %q", stdout.String(), want)
		}
		// The child was traced up to the stop: its spin is in the profile.
		p := o.r.Profile
		spins := int64(0)
		for _, th := range p.Threads {
			if p.Processes[th.Process].Pid == o.r.Pid {
				continue
			}
			for _, n := range th.Nodes {
				if n.Func >= 0 && p.Functions[n.Func].Name == "spin" {
					spins += n.Calls
				}
			}
		}
		if spins != 1 {
			t.Errorf("the vfork child's spin counted %d times, want 1", spins)
		}
	})
}
