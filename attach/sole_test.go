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
	sleeper := exec.Command("sleep", "60")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	defer sleeper.Process.Kill()
	alone := sleeper.Process.Pid
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
