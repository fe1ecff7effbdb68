//go:build stress

package stress

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/profile-dev/profile/internal/workload"
)

// execSweepStride: past the launch, every execSweepStride-th operation of
// a record is a kill point. The windows that matter (a fresh image's
// set-up before its entry breakpoint, the entry stop) are some ten
// operations wide at each exec.
const (
	execSweepEdge   = 40
	execSweepStride = 3
)

// (i) The profiler killed at each of its operations while it records a
// shell script, from the launch through each command's fork, exec, entry
// and exit: the script and its commands must finish as an untraced run
// does, whatever image was starting when the profiler died (the dynamic
// linker running under a breakpoint at the program entry, the entry's own
// trap stop, the set-up injected into a fresh image).
func TestRecordKilledAtEveryStep(t *testing.T) {
	sites, err := workload.Path("sites")
	if err != nil {
		t.Fatal(err)
	}
	// Trap probes stop at every call: a few calls keep their operations
	// as many as inline probes take for thousands. Their script execs its
	// command instead of forking it: the shell (dash) calls vfork with
	// every signal blocked, and a trap probe's int3 run so after the
	// profiler's death is fatal whatever the handler (docs/engine.md,
	// Known limitations).
	for _, k := range []struct{ probes, script string }{
		{"inline", fmt.Sprintf("%[1]s 3000; echo rc=$?; %[1]s 2000; echo rc=$?", sites)},
		{"trap", fmt.Sprintf("echo start; exec %s 30", sites)},
	} {
		probes, script := k.probes, k.script
		want, err := exec.Command("sh", "-c", script).Output()
		if err != nil {
			t.Fatalf("untraced: %v", err)
		}
		t.Run(probes, func(t *testing.T) {
			sc := begin(t, "record-killed-at-every-step-"+probes)
			dir := t.TempDir()
			kills := 0
			for n := 1; ; n += execSweepStep(n) {
				out, killed := recordKilled(t, dir, probes, script, n)
				if !bytes.Equal(out, want) {
					t.Fatalf("killed before op %d: the script printed %q, untraced %q", n, out, want)
				}
				if !killed {
					sc.done("the script came through %d kills: before each of the first %d operations of its record, then one in %d, up to its last (before op %d)",
						kills, execSweepEdge, execSweepStride, n)
					return
				}
				kills++
			}
		})
	}
}

func execSweepStep(n int) int {
	if n < execSweepEdge {
		return 1
	}
	return execSweepStride
}

// recordKilled records script with the fault-injection build killing
// itself before operation n, and returns what the script printed once
// it and its children are gone (their output pipe closed), and whether
// the profiler was killed (false: n lies past its last operation).
func recordKilled(t *testing.T, dir, probes, script string, n int) ([]byte, bool) {
	t.Helper()
	var out, stderr bytes.Buffer
	cmd := exec.Command(faultBin, "record", "--probes", probes, "--no-compensate",
		"-o", fmt.Sprintf("rec%d.data", n), "--", "sh", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PROFILE_TEST_DIE_AFTER="+strconv.Itoa(n))
	cmd.Stdout, cmd.Stderr = &out, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	// The orphaned script keeps the pipe open: Wait returns when it is
	// done, or 30 s after the profiler at the latest (a script hung in a
	// stop it was left in).
	cmd.WaitDelay = 30 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if err == exec.ErrWaitDelay {
		t.Fatalf("killed before op %d: the script did not end within 30 s; it printed %q", n, out.String())
	}
	ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if ws.Signaled() && ws.Signal() == syscall.SIGKILL {
		return out.Bytes(), true
	}
	if err != nil {
		t.Fatalf("op %d: profile record: %v, stderr %q", n, err, stderr.String())
	}
	return out.Bytes(), false
}
