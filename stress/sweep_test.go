//go:build stress

package stress

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/profile-dev/profile/internal/loadgen"
	"github.com/profile-dev/profile/internal/proctext"
)

const (
	// killsPerServer bounds the kills one server takes before a fresh
	// one (and its report checked against what it served).
	killsPerServer = 100
	// sweepEdge: every operation among the first and the last sweepEdge
	// is a kill point; in between (inline probes patch function after
	// function, the same steps over and over), every sweepStride-th.
	sweepEdge   = 800
	sweepStride = 7
)

// (h) The profiler killed at each of its operations on the target, from
// the first ptrace request of attach to the last of detach: the build with
// fault injection (attach/internal/ptrace/faults_on.go) SIGKILLs itself just before its
// Nth operation. The target is the server, idle while the profiler
// attaches, so that the operations are the same from one run to the next.
// After each kill the server must live on and answer a burst of requests
// correctly (which also runs into anything left behind); every
// killsPerServer kills it quits and its report must match the requests it
// served. The random kills of (g) cover the time in between, under load.
// Each kill point's attach is a re-attach: the server holds what the
// previous point's kill left (its patches, int3s, handler and areas, from
// the first area on), so the kills land in the undoing of a killed
// profiler's work and the unmapping of its areas (attach/reclaim.go) too.
func TestProfilerKilledAtEveryStep(t *testing.T) {
	for _, probes := range []string{"trap", "inline"} {
		t.Run(probes, func(t *testing.T) {
			sc := begin(t, "killed-at-every-step-"+probes)
			sw := newSweep(t, probes)
			end := 1 // the first kill point past the last operation
			for !sw.run(end) {
				end += sweepStep(end)
			}
			for n := max(sweepEdge+1, end-sweepEdge); n < end; n++ {
				if !sw.done[n] && sw.run(n) {
					end = n
				}
			}
			total := end - 1
			sw.retire()
			sc.done("the server came through %d kills, at %d of the %d operations of attach and detach (each of the first and last %d)",
				sw.kills, len(sw.done), total, sweepEdge)
		})
	}
}

func sweepStep(n int) int {
	if n < sweepEdge {
		return 1
	}
	return sweepStride
}

// sweep is one probe kind's sweep: the server under test and its account.
type sweep struct {
	t      *testing.T
	probes string
	dir    string
	srv    *server
	served loadgen.Result
	since  int // kills the current server took
	kills  int
	done   map[int]bool // kill points tried
}

func newSweep(t *testing.T, probes string) *sweep {
	s := &sweep{t: t, probes: probes, dir: t.TempDir(), done: map[int]bool{}}
	s.srv = startServer(t)
	return s
}

// retire quits the server and checks its report against what it served.
func (s *sweep) retire() {
	rep := s.srv.quit(s.t)
	checkServed(s.t, rep, s.served)
}

// run attaches with a kill before operation n and checks the server; it
// tells whether the profiler completed instead (n is past its last
// operation).
func (s *sweep) run(n int) bool {
	t := s.t
	cmd := exec.Command(faultBin, "attach", "--probes", s.probes, "--no-compensate",
		"--duration", "30ms", "--pid", strconv.Itoa(s.srv.pid()), "-o", fmt.Sprintf("sweep%d.data", n))
	cmd.Dir = s.dir
	cmd.Env = append(os.Environ(), "PROFILE_TEST_DIE_AFTER="+strconv.Itoa(n))
	prof := start(t, cmd, syscall.SIGKILL)
	if !prof.wait(30 * time.Second) {
		prof.kill()
		t.Fatalf("op %d: profiler still running after 30 s", n)
	}
	killed := prof.signaled() == syscall.SIGKILL
	if !killed && prof.cmd.ProcessState.ExitCode() != 0 {
		t.Fatalf("op %d: profile attach: %s, stderr %q", n, prof.status(), prof.stderr.String())
	}
	what := fmt.Sprintf("killed before op %d", n)
	if !killed {
		what = "after a complete run"
	}
	time.Sleep(20 * time.Millisecond)
	if s.srv.exited() {
		t.Fatalf("%s: the server ended: %s (stderr %q)\nthe profiler died at:\n%s", what, s.srv.status(), s.srv.stderr.String(), prof.stderr.String())
	}
	r, err := loadgen.Run(t.Context(), s.srv.addr, 4, loadgen.Options{Requests: 20, Seed: uint64(n), Timeout: 5 * time.Second})
	s.served.Add(r)
	if err != nil || r.OK != 20 {
		s.srv.wait(time.Second)
		t.Fatalf("%s: the server answered %v, %v (server %s, stderr %q)\nthe profiler died at:\n%s", what, r, err, s.srv.status(), s.srv.stderr.String(), prof.stderr.String())
	}
	if !killed {
		// Nothing left behind, if no kill came before in this server.
		if s.since == 0 {
			if err := proctext.MatchesDisk(s.srv.pid()); err != nil {
				t.Errorf("after a complete run: %v", err)
			}
		}
		return true
	}
	s.done[n] = true
	s.kills++
	s.since++
	if s.since == killsPerServer {
		s.retire()
		s.srv, s.served, s.since = startServer(t), loadgen.Result{}, 0
	}
	return false
}
