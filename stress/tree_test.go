//go:build stress

package stress

import (
	"fmt"
	"math/rand/v2"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/profile-dev/profile/internal/workload"
)

// A pre-forking service (testdata/src/prefork.c: a master and 3 worker
// processes) under load, attached as a tree (attach --pid MASTER --tree):
// 20 attach/detach cycles, then 20 attach+SIGKILL cycles at random points
// (killCycle's), then a clean attach and detach. Every reply is right, no
// request fails, every worker serves to the end, and the requests the
// workers say they served add up to the replies the load got.
func TestPreforkTree(t *testing.T) {
	sc := begin(t, "prefork-tree")
	bin, err := workload.Path("prefork")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	srv := start(t, exec.Command(bin, "--workers", "3", "--seconds", "300"), syscall.SIGTERM)
	var addr string
	var workers []string
	for range 1000 {
		out := srv.stdout.String()
		if m := regexp.MustCompile(`port=(\d+)\nworkers=([\d,]+)\n`).FindStringSubmatch(out); m != nil {
			addr, workers = "127.0.0.1:"+m[1], strings.Split(m[2], ",")
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if addr == "" {
		t.Fatalf("prefork did not start: %s, stderr %q", srv.status(), srv.stderr.String())
	}
	t.Cleanup(func() {
		for _, w := range workers {
			if pid, _ := strconv.Atoi(w); pid > 0 {
				syscall.Kill(pid, syscall.SIGKILL) // should the master be gone first
			}
		}
	})
	master := strconv.Itoa(srv.pid())
	l := startLoad(t, addr, 9, seed(t))
	rng := rand.New(rand.NewPCG(seed(t), 61))
	serving := func(when string) {
		t.Helper()
		if srv.exited() {
			t.Fatalf("%s: the master ended: %s, stderr %q", when, srv.status(), srv.stderr.String())
		}
		for _, w := range workers {
			pid, _ := strconv.Atoi(w)
			if syscall.Kill(pid, 0) != nil {
				t.Fatalf("%s: worker %d is gone (stderr %q)", when, pid, srv.stderr.String())
			}
		}
	}
	var calls int64
	for i := range 20 {
		prof := startProfile(t, dir, "attach", "--tree", "--pid", master, "-o", fmt.Sprintf("c%02d.data", i))
		for _, w := range workers {
			pid, _ := strconv.Atoi(w)
			waitInstrumented(t, pid, prof)
		}
		time.Sleep(time.Duration(50+rng.IntN(400)) * time.Millisecond)
		prof.cmd.Process.Signal(syscall.SIGINT)
		if code := prof.finish(t, 60*time.Second); code != 0 {
			t.Fatalf("cycle %d: exit %d, stderr %q", i, code, prof.stderr.String())
		}
		p := readProfile(t, fmt.Sprintf("%s/c%02d.data", dir, i))
		if len(p.Processes) != 1+len(workers) {
			t.Errorf("cycle %d: %d processes in the profile, want the master and %d workers", i, len(p.Processes), len(workers))
		}
		calls += p.Meta.TracedCalls
		serving(fmt.Sprintf("cycle %d", i))
	}
	for i := range 20 {
		at := killCycle(t, dir, srv.pid(), "auto", rng, i, "--tree")
		serving(fmt.Sprintf("kill %d (%s)", i, at))
	}
	code, prof := runProfile(t, dir, 60*time.Second, "attach", "--tree", "--pid", master, "--duration", "1s", "-o", "last.data")
	if code != 0 {
		t.Fatalf("clean attach after the kills: exit %d, stderr %q", code, prof.stderr.String())
	}
	serving("after the clean attach")
	res := l.stop(t)
	checkLoad(t, "load through the cycles", res)
	srv.cmd.Process.Signal(syscall.SIGTERM)
	if !srv.wait(30 * time.Second) {
		t.Fatal("prefork did not end after SIGTERM")
	}
	if srv.cmd.ProcessState.ExitCode() != 0 {
		t.Errorf("prefork: %s (a worker failed), stderr %q", srv.status(), srv.stderr.String())
	}
	var served int64
	for _, m := range regexp.MustCompile(`worker \d+ requests=(\d+)`).FindAllStringSubmatch(srv.stdout.String(), -1) {
		n, _ := strconv.ParseInt(m[1], 10, 64)
		served += n
	}
	if served != res.OK {
		t.Errorf("the workers say they served %d requests, the load got %d right replies", served, res.OK)
	}
	sc.done("a master and %d workers came through 20 attach/detach cycles of the tree (%d traced calls) and 20 attach+SIGKILL cycles, then a clean attach: %d requests, %d wrong, %d failed",
		len(workers), calls, res.Requests, res.Wrong, res.Failed)
}
