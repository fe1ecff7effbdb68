package attach

import (
	"os"
	"os/exec"
	"testing"
)

// A patch goes in with one write only where its thread is the only task in
// its memory: not beside another thread we trace in the same space, nor
// in a process with a task we do not know (a thread a preloaded library's
// constructor started before the entry).
func TestSoleTask(t *testing.T) {
	alone := sleeper(t)
	cases := []struct {
		name   string
		pid    int
		others int // other threads we trace in the space
		want   bool
	}{
		{"one task", alone, 0, true},
		{"another traced thread in the space", alone, 1, false},
		{"tasks we do not trace", os.Getpid(), 0, false}, // the test binary's threads
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEngine(Options{})
			as := newSpace()
			p := &process{pid: c.pid, as: as}
			th := &thread{tid: c.pid, proc: p}
			e.threads = map[int]*thread{th.tid: th}
			for i := 0; i < c.others; i++ {
				e.threads[-1-i] = &thread{tid: -1 - i, proc: &process{pid: c.pid, as: as}}
			}
			if got := e.soleTask(th); got != c.want {
				t.Errorf("soleTask %v, want %v", got, c.want)
			}
		})
	}
}

// A detach or an attach writes each patch with one write only while
// nothing runs in the space: every task of its processes is a thread of
// ours, stopped, and no thread another tracer holds is parked there.
func TestStillSpace(t *testing.T) {
	alone := sleeper(t)
	cases := []struct {
		name    string
		pid     int
		threads []bool // ours in the space: stopped or not
		held    bool   // a thread another tracer holds
		want    bool
	}{
		{"every task ours and stopped", alone, []bool{true}, false, true},
		{"a thread of ours running", alone, []bool{false}, false, false},
		{"tasks we do not trace", os.Getpid(), []bool{true}, false, false}, // the test binary's threads
		{"a held thread parked", alone, []bool{true}, true, false},
		{"no thread", alone, nil, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEngine(Options{})
			as := newSpace()
			if c.held {
				as.park = &parking{held: []*heldThread{{}}}
			}
			p := &process{pid: c.pid, as: as}
			e.threads = map[int]*thread{}
			for i, stopped := range c.threads {
				e.threads[c.pid+i] = &thread{tid: c.pid + i, proc: p, stopState: stopState{stopped: stopped}}
			}
			if got := e.stillSpace(as); got != c.want {
				t.Errorf("stillSpace %v, want %v", got, c.want)
			}
		})
	}
}

// sleeper starts a process of one task for the test: its pid.
func sleeper(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd.Process.Pid
}
