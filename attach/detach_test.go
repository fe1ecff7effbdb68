package attach

import (
	"testing"
	"time"

	"github.com/profile-dev/profile/internal/proctext"
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
			if r.Stats.Breakpoints == 0 && r.Stats.InlineFunctions == 0 {
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
