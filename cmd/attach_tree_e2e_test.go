package cmd_test

import (
	"bufio"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/profile-dev/profile/internal/loadgen"
	"github.com/profile-dev/profile/internal/proctext"
	"github.com/profile-dev/profile/model"
)

// prefork is a running testdata/src/prefork.c: a master and its workers.
type prefork struct {
	cmd     *exec.Cmd
	master  int
	workers []int
	addr    string
	mu      sync.Mutex
	served  map[int]int64 // "worker PID requests=K" lines, once it ends
	done    chan struct{}
}

func startPrefork(t *testing.T, workers int) *prefork {
	t.Helper()
	s := &prefork{served: map[int]int64{}, done: make(chan struct{})}
	s.cmd = exec.Command(wl(t, "prefork"), "--workers", strconv.Itoa(workers), "--seconds", "120")
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s.master = s.cmd.Process.Pid
	t.Cleanup(func() {
		s.cmd.Process.Signal(syscall.SIGTERM)
		s.wait()
	})
	sc := bufio.NewScanner(out)
	for s.addr == "" || s.workers == nil {
		if !sc.Scan() {
			t.Fatalf("prefork ended before it served: %v", sc.Err())
		}
		line := sc.Text()
		if p, ok := strings.CutPrefix(line, "port="); ok {
			s.addr = "127.0.0.1:" + p
		}
		if w, ok := strings.CutPrefix(line, "workers="); ok {
			for _, f := range strings.Split(w, ",") {
				pid, _ := strconv.Atoi(f)
				s.workers = append(s.workers, pid)
			}
		}
	}
	go func() {
		defer close(s.done)
		for sc.Scan() {
			var pid int
			var n int64
			if _, err := fmt.Sscanf(sc.Text(), "worker %d requests=%d", &pid, &n); err == nil {
				s.mu.Lock()
				s.served[pid] = n
				s.mu.Unlock()
			}
		}
		s.cmd.Wait()
	}()
	return s
}

func (s *prefork) wait() { <-s.done }

// stop ends the service and returns what each worker says it served.
func (s *prefork) stop(t *testing.T) map[int]int64 {
	t.Helper()
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(20 * time.Second):
		t.Fatal("prefork did not end after SIGTERM")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.served
}

// callsByPid counts the calls of function name in each process of p
// (timed and counted alike).
func callsByPid(p *model.Profile, name string) map[int]int64 {
	out := map[int]int64{}
	for _, th := range p.Threads {
		pid := p.Processes[th.Process].Pid
		for _, n := range th.Nodes {
			if p.Functions[n.Func].Name == name {
				out[pid] += n.Calls
			}
		}
		for _, a := range th.Arcs {
			if p.Functions[a.Callee].Name == name {
				out[pid] += a.Calls
			}
		}
	}
	return out
}

// A pre-forking service: attach --tree to its master takes the workers it
// already has too, and counts in each worker exactly the requests the
// worker says it served (every reply checked); attach --pid W1,W2 takes
// just those two. The profile records each worker with the master as its
// parent and no fork seen.
func TestAttachTree(t *testing.T) {
	for _, c := range []struct {
		name   string
		tree   bool
		traced func(s *prefork) []int // the processes to name on the command line
	}{
		{"tree", true, func(s *prefork) []int { return []int{s.master} }},
		{"pids", false, func(s *prefork) []int { return s.workers[:2] }},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			s := startPrefork(t, 3)
			pids := c.traced(s)
			args := []string{"attach", "-o", "t.data"}
			var list []string
			for _, pid := range pids {
				list = append(list, strconv.Itoa(pid))
			}
			args = append(args, "--pid", strings.Join(list, ","))
			if c.tree {
				args = append(args, "--tree")
			}
			prof := exec.Command(profileBin, args...)
			prof.Dir = dir
			var stderr strings.Builder
			prof.Stderr = &stderr
			if err := prof.Start(); err != nil {
				t.Fatal(err)
			}
			traced := s.workers[:2]
			if c.tree {
				traced = s.workers
			}
			for _, pid := range traced {
				waitPatched(t, pid)
			}
			const requests = 900
			r, err := loadgen.Run(context.Background(), s.addr, 9, loadgen.Options{Requests: requests, Seed: 7})
			if err != nil || r.OK != requests {
				t.Fatalf("load: %+v, %v", r, err)
			}
			prof.Process.Signal(syscall.SIGINT)
			if err := prof.Wait(); err != nil {
				t.Fatalf("profile attach: %v\n%s", err, stderr.String())
			}
			served := s.stop(t)
			p, err := model.ReadFile(filepath.Join(dir, "t.data"))
			if err != nil {
				t.Fatal(err)
			}
			got := callsByPid(p, "handle_request")
			var all int64
			for _, pid := range s.workers {
				all += served[pid]
			}
			if all != requests {
				t.Fatalf("the workers served %d requests in all (%v), loadgen sent %d", all, served, requests)
			}
			for _, pid := range traced {
				if got[pid] != served[pid] {
					t.Errorf("worker %d: %d handle_request calls in the profile, it served %d", pid, got[pid], served[pid])
				}
			}
			if !c.tree {
				if n := got[s.workers[2]]; n != 0 {
					t.Errorf("worker %d not named, yet %d calls of it in the profile", s.workers[2], n)
				}
			}
			byPid := map[int]model.Process{}
			for _, pr := range p.Processes {
				byPid[pr.Pid] = pr
			}
			want := len(traced)
			if c.tree {
				want++ // the master
				for _, pid := range s.workers {
					if pr := byPid[pid]; pr.ParentPid != s.master || pr.ForkedBy != model.None {
						t.Errorf("worker %d: parent %d, forked by %d; want %d, none (running at attach)", pid, pr.ParentPid, pr.ForkedBy, s.master)
					}
				}
			}
			if len(p.Processes) != want {
				t.Errorf("%d processes in the profile, want %d", len(p.Processes), want)
			}
		})
	}
}

// waitPatched waits until process pid's text differs from its files: the
// profiler's probes are in (the process ran on only once all were).
func waitPatched(t *testing.T, pid int) {
	t.Helper()
	for range 2000 {
		if proctext.FileText(pid) != nil {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("process %d: no probe after 10 s", pid)
}

// attach -p A,B where A ends while B goes on: the session goes on with B
// until --duration, A's part and exit status are in the profile, the
// profile is a complete detach (not partial), and B runs on untouched.
// A pid that is no process fails the whole attach, nothing traced.
func TestAttachSeveralOneEnds(t *testing.T) {
	dir := t.TempDir()
	a := startLongrunFor(t, "1")
	b := startLongrunFor(t, "5")
	out, stderr, code := run(t, dir, "attach", "-p", itoa(a.Process.Pid), "-p", itoa(b.Process.Pid), "--duration", "2s", "-o", "ab.data")
	if code != 0 {
		t.Fatalf("attach -p A -p B: exit %d\n%s%s", code, out, stderr)
	}
	if err := a.Wait(); err != nil {
		t.Errorf("A: %v", err)
	}
	p, err := model.ReadFile(filepath.Join(dir, "ab.data"))
	if err != nil {
		t.Fatal(err)
	}
	if !p.Meta.Detached || p.Meta.Partial {
		t.Errorf("detached %v, partial %v (%s): want a complete detach", p.Meta.Detached, p.Meta.Partial, p.Meta.PartialReason)
	}
	byPid := map[int]model.Process{}
	for _, pr := range p.Processes {
		byPid[pr.Pid] = pr
	}
	if pa := byPid[a.Process.Pid]; len(p.Processes) != 2 || !pa.Exited || pa.ExitCode != 0 || byPid[b.Process.Pid].Exited {
		t.Errorf("processes %+v: want A exited 0, B still running", p.Processes)
	}
	calls := callsByPid(p, "compute_round")
	if calls[a.Process.Pid] == 0 || calls[b.Process.Pid] == 0 {
		t.Errorf("compute_round calls by process %v: want some in both", calls)
	}
	if err := b.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("B after the detach: %v", err)
	}
	_, stderr, code = run(t, dir, "attach", "-p", itoa(b.Process.Pid)+",999999999", "--duration", "1s", "-o", "bad.data")
	oneLineError(t, stderr, code, "no such process")
	if code == 0 {
		t.Error("attach to a pid that is no process: exit 0")
	}
	if err := proctext.FileText(b.Process.Pid); err != nil {
		t.Errorf("B after the failed attach: %v", err)
	}
}
