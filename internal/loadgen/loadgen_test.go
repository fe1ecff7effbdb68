package loadgen

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/profile-dev/profile/internal/workload"
)

// server is testdata/bin/server running with its stdout captured.
type server struct {
	cmd  *exec.Cmd
	addr string
	mu   sync.Mutex
	out  bytes.Buffer
	done chan struct{} // closed once the server has exited
}

func startServer(t *testing.T, args ...string) *server {
	t.Helper()
	bin, err := workload.Path("server")
	if err != nil {
		t.Fatal(err)
	}
	s := &server{done: make(chan struct{})}
	s.cmd = exec.Command(bin, append([]string{"--seconds", "60"}, args...)...)
	s.cmd.Stderr = os.Stderr
	rd, wr, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	s.cmd.Stdout = wr
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	wr.Close()
	port := make(chan string, 1)
	go func() {
		br := bufio.NewReader(rd)
		first, _ := br.ReadString('\n')
		s.mu.Lock()
		s.out.WriteString(first)
		s.mu.Unlock()
		port <- strings.TrimSpace(strings.TrimPrefix(first, "port="))
		rest, _ := io.ReadAll(br)
		s.mu.Lock()
		s.out.Write(rest)
		s.mu.Unlock()
		rd.Close()
		s.cmd.Wait()
		close(s.done)
	}()
	t.Cleanup(func() {
		s.cmd.Process.Kill()
		<-s.done
	})
	select {
	case p := <-port:
		if p == "" {
			t.Fatalf("server printed no port (%v)", s.cmd.ProcessState)
		}
		s.addr = "127.0.0.1:" + p
	case <-time.After(10 * time.Second):
		t.Fatal("server: no port after 10 s")
	}
	return s
}

// wait waits for the server to exit and returns its report.
func (s *server) wait(t *testing.T) *Report {
	t.Helper()
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		t.Fatal("server did not exit within 10 s")
	}
	if code := s.cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("server exit status %v", s.cmd.ProcessState)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rep, err := ParseReport(s.out.String())
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// Values printed by the C server.
func TestComputeMatchesServer(t *testing.T) {
	for n, want := range map[uint64]string{
		5:       "5 15826024371241456421\n",
		19:      "19 12720844004920172853\n",
		1000000: "1000000 1229517280345543795\n",
		7:       "7 13964313446783298436\n",
	} {
		if got := Reply(n); got != want {
			t.Errorf("Reply(%d) = %q, want %q", n, got, want)
		}
	}
	if Fib(15) != 610 || Fib(0) != 0 || Fib(1) != 1 {
		t.Errorf("Fib(15), Fib(0), Fib(1) = %d, %d, %d", Fib(15), Fib(0), Fib(1))
	}
}

func TestRequestCalls(t *testing.T) {
	for n, fib := range map[uint64]workload.Counts{0: {Calls: 1}, 1: {Calls: 1}, 7: {Calls: 41, RecursiveCalls: 40}, 16 + 15: {Calls: 1973, RecursiveCalls: 1972}} {
		c := RequestCalls(n)
		if c["fib"] != fib {
			t.Errorf("RequestCalls(%d)[fib] = %+v, want %+v", n, c["fib"], fib)
		}
		for _, f := range []string{"handle_request", "parse_request", "compute", "hash_mix", "mix_round", "finish", "mix_final", "format_reply"} {
			if c[f] != (workload.Counts{Calls: 1}) {
				t.Errorf("RequestCalls(%d)[%s] = %+v, want 1 call", n, f, c[f])
			}
		}
	}
}

func TestRequestN(t *testing.T) {
	seen := map[uint64]bool{}
	for i := 0; i < 4; i++ {
		for j := 0; j < 100; j++ {
			n := RequestN(1, i, j)
			if n > MaxN || n != RequestN(1, i, j) {
				t.Fatalf("RequestN(1, %d, %d) = %d", i, j, n)
			}
			seen[n%16] = true
		}
	}
	if len(seen) != 16 {
		t.Errorf("requests cover %d of 16 fib sizes", len(seen))
	}
}

// A fixed number of requests against the real server: all correct, and the
// server's own counters agree with the requests it answered.
func TestRunAgainstServer(t *testing.T) {
	s := startServer(t, "--threads", "4")
	r, err := Run(context.Background(), s.addr, 8, Options{Requests: 3000, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(r)
	if r.Requests != 3000 || r.OK != 3000 || r.Wrong != 0 || r.Failed != 0 {
		t.Fatalf("%v\n%s\n%s", r, strings.Join(r.Errors, "\n"), strings.Join(r.WrongReplies, "\n"))
	}
	if err := Quit(s.addr, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	rep := s.wait(t)
	if rep.Requests != r.OK {
		t.Errorf("server answered %d requests, client got %d replies", rep.Requests, r.OK)
	}
	if err := rep.CheckCalls(r.Calls); err != nil {
		t.Error(err)
	}
	if c := rep.Counters["worker_thread"]; c.Calls != 4 {
		t.Errorf("worker_thread = %+v, want 4 calls", c)
	}
}

// Until the context ends, then SIGTERM: the server exits 0 with the count.
func TestRunUntilCancelThenSigterm(t *testing.T) {
	s := startServer(t, "--threads", "2")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	var total Result
	r, err := Run(ctx, s.addr, 16, Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	total.Add(r)
	// A second run adds up.
	r, err = Run(context.Background(), s.addr, 3, Options{Requests: 10, Seed: 2, Pause: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	total.Add(r)
	t.Log(total)
	if total.OK == 0 || total.OK != total.Requests || total.Wrong+total.Failed != 0 || total.Conns != 16 {
		t.Fatalf("%v\n%s\n%s", total, strings.Join(total.Errors, "\n"), strings.Join(total.WrongReplies, "\n"))
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	rep := s.wait(t)
	if rep.Requests != total.OK {
		t.Errorf("server answered %d, client got %d", rep.Requests, total.OK)
	}
	if err := rep.CheckCalls(total.Calls); err != nil {
		t.Error(err)
	}
}

// fake serves each connection with answer until the listener closes.
func fake(t *testing.T, answer func(c net.Conn, line string) bool) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					line, err := br.ReadString('\n')
					if err != nil || !answer(c, strings.TrimSpace(line)) {
						return
					}
				}
			}()
		}
	}()
	return l.Addr().String()
}

func TestWrongAndFailedAreCounted(t *testing.T) {
	wrong := fake(t, func(c net.Conn, line string) bool {
		fmt.Fprintf(c, "%s 42\n", line)
		return true
	})
	r, err := Run(context.Background(), wrong, 2, Options{Requests: 20})
	if err != nil {
		t.Fatal(err)
	}
	if r.Wrong != 20 || r.OK != 0 || r.Failed != 0 || len(r.WrongReplies) != 10 || len(r.Errors) != 0 {
		t.Errorf("wrong replies: %v", r)
	}

	silent := fake(t, func(c net.Conn, line string) bool { return true })
	r, err = Run(context.Background(), silent, 2, Options{Requests: 4, Timeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if r.Failed != 4 || r.OK+r.Wrong != 0 || !strings.Contains(strings.Join(r.Errors, " "), "timeout") {
		t.Errorf("no replies: %v %q", r, r.Errors)
	}

	hangup := fake(t, func(c net.Conn, line string) bool {
		fmt.Fprintf(c, "%s", line) // no newline, then close
		return false
	})
	r, err = Run(context.Background(), hangup, 1, Options{Requests: 3})
	if err != nil {
		t.Fatal(err)
	}
	if r.Failed != 3 || r.OK+r.Wrong != 0 || !strings.Contains(r.Errors[0], "partial reply") {
		t.Errorf("hang-ups: %v %q", r, r.Errors)
	}
}

func TestRunErrors(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	if _, err := Run(context.Background(), addr, 2, Options{}); err == nil {
		t.Error("Run against a closed port succeeded")
	}
	if _, err := Run(context.Background(), addr, 0, Options{}); err == nil {
		t.Error("Run with 0 connections succeeded")
	}
	if err := Quit(addr, time.Second); err == nil {
		t.Error("Quit against a closed port succeeded")
	}
}

func TestParseReport(t *testing.T) {
	rep, err := ParseReport("port=123\nrequests=2\ncounter fib 3 1\n")
	if err != nil {
		t.Fatal(err)
	}
	if rep.Port != 123 || rep.Requests != 2 || rep.Counters["fib"] != (workload.Counts{Calls: 3, RecursiveCalls: 1}) {
		t.Errorf("%+v", rep)
	}
	for _, bad := range []string{"port=1\n", "requests=x\n", "requests=1\ncounter fib 3\n", "requests=1\nhello\n"} {
		if _, err := ParseReport(bad); err == nil {
			t.Errorf("ParseReport(%q) succeeded", bad)
		}
	}
}
