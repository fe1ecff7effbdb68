//go:build stress

package stress

import (
	"fmt"
	"math/rand/v2"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/profile-dev/profile/internal/loadgen"
	"github.com/profile-dev/profile/internal/proctext"
	"github.com/profile-dev/profile/internal/workload"
)

const sigkillCycles = 20

// killDelays are the moments, 300 ms to 1.5 s after profile attach starts,
// at which the profiler is SIGKILLed; drawn from the seed.
func killDelays(rng *rand.Rand) []time.Duration {
	d := make([]time.Duration, sigkillCycles)
	for i := range d {
		d[i] = 300*time.Millisecond + time.Duration(rng.Int64N(int64(1200*time.Millisecond)))
	}
	return d
}

// killProfilerAfter starts profile attach on pid, SIGKILLs it after delay,
// then lets the target run 200 ms more (so that a breakpoint left behind
// is taken). It describes the target at the kill (traced by the profiler,
// breakpoints in its text) and fails if the profiler ended by itself before
// the kill: then the cycle tested nothing.
func killProfilerAfter(t *testing.T, dir string, pid int, delay time.Duration, out, probes string) (string, error) {
	t.Helper()
	prof := startProfile(t, dir, "attach", "--probes", probes, "--pid", strconv.Itoa(pid), "-o", out)
	time.Sleep(delay)
	traced := tracedBy(pid) == prof.pid()
	instrumented := proctext.FileText(pid) != nil
	early := prof.exited()
	prof.cmd.Process.Kill()
	if !prof.wait(10 * time.Second) {
		t.Fatal("SIGKILLed profiler did not end")
	}
	time.Sleep(200 * time.Millisecond)
	at := fmt.Sprintf("profiler killed %v after start, traced %v, breakpoints in %v",
		delay.Round(time.Millisecond), traced, instrumented)
	if early {
		return at, fmt.Errorf("profile attach ended by itself before the kill: %s, stderr %q", prof.status(), prof.stderr.String())
	}
	return at, nil
}

// (g) The profiler SIGKILLed at a random moment while attached: the target
// survives, unchanged, every time, under either probe kind. Checked: the
// target lives on; replies stay correct (zero wrong, zero failed) and
// output and exit status equal an untraced run's. With trap probes its
// text in memory equals the files (no int3 left) once it has run 200 ms
// more; inline probes' jumps stay, and their stubs stop waiting for the
// dead tracer. Anonymous executable mappings left in the target (an area
// the profiler injected) are counted and logged, not failed: the profiler
// cannot unmap anything once SIGKILLed.
func TestProfilerSigkill(t *testing.T) {
	for _, probes := range []string{"trap", "inline"} {
		t.Run(probes, func(t *testing.T) {
			sc := begin(t, "profiler-sigkill-"+probes)
			s := seed(t)
			rng := rand.New(rand.NewPCG(s, 8))
			t.Logf("seed %d (STRESS_SEED)", s)
			longDelays, serverDelays := killDelays(rng), killDelays(rng)
			var long, srv sigkillResult
			t.Run("longrun", func(t *testing.T) { long = sigkillLongrun(t, longDelays, probes) })
			t.Run("server", func(t *testing.T) { srv = sigkillServer(t, serverDelays, probes) })
			sc.done("target survived %d/%d kills (longrun) and %d/%d (server); %d requests, %d wrong, %d failed; anonymous executable mappings left: %d (longrun, in all), %d (server, at the end)",
				long.survived, sigkillCycles, srv.survived, sigkillCycles, srv.load.Requests, srv.load.Wrong, srv.load.Failed,
				long.anon, srv.anon)
		})
	}
}

// healedText checks that no int3 is left (trap probes heal the text; inline
// probes' jumps stay and keep working).
func healedText(pid int, probes string) error {
	if probes != "trap" {
		return nil
	}
	return proctext.FileText(pid)
}

type sigkillResult struct {
	survived int            // cycles the target came through
	anon     int            // anonymous executable mappings left
	load     loadgen.Result // server: all the load
}

// checksumOf finds longrun's checksum line.
func checksumOf(out string) string {
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, "checksum="); ok {
			return v
		}
	}
	return ""
}

// sigkillLongrun: a fresh CPU-bound longrun per cycle (4 s: compute for 3,
// two 2 s sleeps), compared with an untraced run.
func sigkillLongrun(t *testing.T, delays []time.Duration, probes string) sigkillResult {
	var r sigkillResult
	bin, err := workload.Path("longrun")
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"--threads", "2", "--seconds", "3"}
	ref := start(t, exec.Command(bin, args...), syscall.SIGKILL)
	dir := t.TempDir()
	for i, delay := range delays {
		target := start(t, exec.Command(bin, args...), syscall.SIGKILL)
		pid := target.pid()
		time.Sleep(100 * time.Millisecond)
		at, err := killProfilerAfter(t, dir, pid, delay, fmt.Sprintf("longrun%02d.data", i), probes)
		var problems []string
		if err != nil {
			problems = append(problems, err.Error())
		}
		if target.exited() {
			problems = append(problems, "target ended early: "+target.status())
		} else {
			if err := healedText(pid, probes); err != nil {
				problems = append(problems, err.Error())
			}
			if anon, _ := proctext.AnonExec(pid); len(anon) > 0 {
				r.anon += len(anon)
				at += fmt.Sprintf(", anonymous executable mappings left: %s", strings.Join(anon, " "))
			}
			// It ends 4 s after its start, 2.2 s after this at the latest.
			if !target.wait(10 * time.Second) {
				states := threadStates(pid)
				target.kill()
				problems = append(problems, "target still running 10 s after the kill, thread states "+states)
			} else {
				if !ref.wait(20 * time.Second) {
					t.Fatal("untraced longrun did not end")
				}
				if got, want := target.status(), ref.status(); got != want {
					problems = append(problems, fmt.Sprintf("target %s, untraced %s", got, want))
				}
				if got, want := checksumOf(target.stdout.String()), checksumOf(ref.stdout.String()); got != want || got == "" {
					problems = append(problems, fmt.Sprintf("checksum %q, untraced %q", got, want))
				}
			}
		}
		if len(problems) > 0 {
			t.Errorf("cycle %d (%s): %s (target stderr %q)", i, at, strings.Join(problems, "; "), target.stderr.String())
		} else {
			r.survived++
			t.Logf("cycle %d: %s: target ok", i, at)
		}
	}
	t.Logf("longrun survived %d/%d", r.survived, len(delays))
	return r
}

// sigkillServer: one server under load for all cycles (a fresh one after a
// cycle that hurt it).
func sigkillServer(t *testing.T, delays []time.Duration, probes string) sigkillResult {
	var r sigkillResult
	dir := t.TempDir()
	srv := startServer(t)
	ld := startLoad(t, srv.addr, 8, seed(t)+4)
	restarts := 0
	for i, delay := range delays {
		pid := srv.pid()
		at, err := killProfilerAfter(t, dir, pid, delay, fmt.Sprintf("server%02d.data", i), probes)
		problem := ""
		if srv.exited() {
			problem = "server ended: " + srv.status()
		} else if err := healedText(pid, probes); err != nil {
			problem = err.Error()
		}
		if problem == "" {
			if err != nil {
				t.Errorf("cycle %d (%s): %v", i, at, err)
				continue
			}
			r.survived++
			t.Logf("cycle %d: %s: server ok", i, at)
			continue
		}
		if err != nil {
			problem = err.Error() + "; " + problem
		}
		t.Errorf("cycle %d (%s): %s (server stderr %q)", i, at, problem, srv.stderr.String())
		// Start afresh, so that the next cycles test something.
		res := ld.stop(t)
		t.Logf("load on the hurt server: %v", res)
		if res.Wrong != 0 {
			t.Errorf("%d wrong replies: %s", res.Wrong, strings.Join(res.WrongReplies, "; "))
		}
		r.load.Add(res)
		srv.kill()
		srv = startServer(t)
		ld = startLoad(t, srv.addr, 8, seed(t)+5+uint64(i))
		restarts++
	}
	if anon, _ := proctext.AnonExec(srv.pid()); len(anon) > 0 {
		r.anon = len(anon)
		t.Logf("anonymous executable mappings left in the server: %s", strings.Join(anon, " "))
	}
	// The server answers after the last cycle (and the last load ran).
	pr := probe(t, srv.addr, 200, 99)
	res := ld.stop(t)
	checkLoad(t, "load", res)
	rep := srv.quit(t)
	res.Add(pr)
	if res.Failed == 0 {
		checkServed(t, rep, res)
	}
	r.load.Add(res)
	t.Logf("server survived %d/%d (%d restarts)", r.survived, len(delays), restarts)
	return r
}
