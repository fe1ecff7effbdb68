package top

import (
	"bytes"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/profile-dev/profile/model"
)

func TestParseStat(t *testing.T) {
	// Fields 3 on: state ppid pgrp session tty tpgid flags minflt cminflt
	// majflt cmajflt utime stime ...
	tail := " S 1 2 3 0 -1 4194560 10 0 0 0 250 50 0 0 20 0 1 0 100 0 0"
	for _, c := range []struct {
		line string
		name string
		cpu  time.Duration
		bad  bool
	}{
		{"42 (worker)" + tail, "worker", 3 * time.Second, false},
		{"42 (a (b) c)" + tail, "a (b) c", 3 * time.Second, false},
		{"42 ()" + tail, "", 3 * time.Second, false},
		{"42 worker" + tail, "", 0, true},
		{"42 (worker) S 1 2 3", "", 0, true},
		{"42 (worker) S 1 2 3 0 -1 4194560 10 0 0 0 x 50", "", 0, true},
	} {
		name, cpu, err := parseStat([]byte(c.line))
		if (err != nil) != c.bad || name != c.name || cpu != c.cpu {
			t.Errorf("%q: %q %s %v; want %q %s, error %v", c.line, name, cpu, err, c.name, c.cpu, c.bad)
		}
	}
}

// ReadTasks on the test itself lists every thread /proc/self/task holds,
// named as each one's comm file says; a process that is gone is left out.
func TestReadTasksOfItself(t *testing.T) {
	pid := os.Getpid()
	ts, err := ReadTasks("/proc", []int{pid, 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	got := map[int]string{}
	for _, k := range ts.List {
		if k.Pid != pid {
			t.Errorf("task %+v of another process", k)
		}
		got[k.Tid] = k.Name
	}
	if got[pid] == "" {
		t.Fatalf("no main thread in %+v", ts.List)
	}
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		tid, _ := strconv.Atoi(e.Name())
		comm, err := os.ReadFile("/proc/self/task/" + e.Name() + "/comm")
		if err != nil {
			continue // ended since
		}
		// A Go thread started between the two readings is not in ts.
		if name, ok := got[tid]; ok && name != strings.TrimSuffix(string(comm), "\n") {
			t.Errorf("thread %d: %q, comm %q", tid, name, comm)
		}
	}
	if ts.At.IsZero() {
		t.Error("no reading time")
	}
}

// pair is live's ticking thread (tid 7) beside a second one (tid 8) that
// sleeps in libc's nanosleep for all but its first 10 ns of every run.
type pair struct {
	*live
	sl                 *model.Recorder
	sleeper, nanosleep int
}

func newPair() *pair {
	p := &pair{live: newLive(), sl: model.NewRecorder(0)}
	p.sleeper, p.nanosleep = p.b.Func("sleeper"), p.b.Func("libc.so.6:nanosleep")
	p.sl.Enter(p.sleeper, 0, model.KindDirect)
	return p
}

// run makes n ticks on tid 7 while tid 8 sleeps once.
func (p *pair) run(n int) {
	start := p.now
	p.live.run(n)
	p.sl.Enter(p.nanosleep, start+10, model.KindPLT)
	p.sl.Exit(p.now)
}

func (p *pair) snapshot(tasks Tasks) *Snapshot {
	prof := p.live.snapshot()
	nodes, traced := p.sl.Snapshot(p.now)
	prof.Threads = append(prof.Threads, model.Thread{Tid: 8, Process: 0, Name: "sleeper", SpawnedBy: model.None,
		TracedNs: traced, Nodes: nodes})
	return NewSnapshot(prof, tasks)
}

// Busy times (the default) leave the sleeping thread's nanosleep out of
// every time: hot leads; wall times rank nanosleep first. The title and
// the JSON say which.
func TestScopeBusyOrWall(t *testing.T) {
	p := newPair()
	p.run(10) // 6,900 ns on each thread
	first := p.snapshot(Tasks{})
	p.run(20) // 13,800 ns
	second := p.snapshot(Tasks{})
	for _, c := range []struct {
		wall      bool
		lead      string
		nanoSelf  int64
		traced    int64
		title     string
		scopeJSON string
	}{
		{false, "hot", 0, 13_800 + 10, "busy times", `"scope":"busy"`},
		{true, "libc.so.6:nanosleep", 13_790, 2 * 13_800, "wall times", `"scope":"wall"`},
	} {
		v := Refresh(first, second, Scope{}, Options{Wall: c.wall})
		Sort(v.Rows, BySelf)
		if v.Rows[0].Name != c.lead || row(t, v, "libc.so.6:nanosleep").DSelfNs != c.nanoSelf ||
			row(t, v, "libc.so.6:nanosleep").DCalls != 1 || v.DTracedNs != c.traced {
			t.Errorf("wall %v: lead %s, nanosleep %+v, traced %d; want %s, %d ns self, traced %d", c.wall,
				v.Rows[0].Name, row(t, v, "libc.so.6:nanosleep"), v.DTracedNs, c.lead, c.nanoSelf, c.traced)
		}
		if h := row(t, v, "hot"); h.DSelfNs != 20*600 || h.Share != float64(20*600)/float64(c.traced) {
			t.Errorf("wall %v: hot %+v", c.wall, h)
		}
		var b bytes.Buffer
		if err := WriteTable(&b, Header{Pid: 7}, v, 0); err != nil || !strings.Contains(b.String(), c.title) {
			t.Errorf("wall %v: table (%v):\n%s", c.wall, err, b.String())
		}
		b.Reset()
		if err := WriteJSON(&b, Header{Pid: 7}, v); err != nil || !strings.Contains(b.String(), c.scopeJSON) {
			t.Errorf("wall %v: JSON (%v): %s", c.wall, err, b.String())
		}
	}
}

// The thread list: CPU% from /proc's readings (a thread new since the
// last one counted from its start, one thread's share at most 100%), busy
// and traced time and calls from the profile, a thread gone from /proc
// with its profile name and no CPU%, a thread /proc shows but the profile
// has nothing of with no time.
func TestThreadRows(t *testing.T) {
	p := newPair()
	t0 := time.Unix(1000, 0)
	p.run(10)
	first := p.snapshot(Tasks{At: t0, List: []Task{
		{Pid: 7, Tid: 7, Name: "rate", CPU: time.Second},
		{Pid: 7, Tid: 11, Name: "spinner", CPU: time.Second},
	}})
	p.run(20)
	second := p.snapshot(Tasks{At: t0.Add(2 * time.Second), List: []Task{
		{Pid: 7, Tid: 7, Name: "rate", CPU: 2500 * time.Millisecond},
		{Pid: 7, Tid: 9, Name: "new", CPU: 300 * time.Millisecond},
		{Pid: 7, Tid: 11, Name: "spinner", CPU: 4010 * time.Millisecond},
	}})
	got := ThreadRows(first, second)
	tick := int64(690) // one tick's time on tid 7
	want := []ThreadRow{
		{Pid: 7, Tid: 11, Name: "spinner", CPU: 100, HasCPU: true},
		{Pid: 7, Tid: 7, Name: "rate", CPU: 75, HasCPU: true, BusyNs: 20 * tick, TracedNs: 20 * tick, DCalls: 20 * 5,
			CallsPerSec: 100 / (float64(20*tick) / 1e9), BusyNsAll: 30 * tick},
		{Pid: 7, Tid: 9, Name: "new", CPU: 15, HasCPU: true},
		{Pid: 7, Tid: 8, Name: "sleeper", BusyNs: 10, TracedNs: 20 * tick, DCalls: 1,
			CallsPerSec: 1 / (float64(20*tick) / 1e9), BusyNsAll: 20},
	}
	if len(got) != len(want) {
		t.Fatalf("threads %+v\nwant %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("thread %d: %+v\nwant %+v", i, got[i], want[i])
		}
	}
	// Without an earlier reading, no CPU%.
	for _, r := range ThreadRows(nil, first) {
		if r.HasCPU || r.CPU != 0 {
			t.Errorf("first interval without a reading: %+v", r)
		}
	}
	// The JSON has every thread, cpu_pct only where known.
	var b bytes.Buffer
	if err := WriteJSON(&b, Header{Pid: 7, Threads: 3}, Refresh(first, second, Scope{}, Options{})); err != nil {
		t.Fatal(err)
	}
	var line struct {
		LiveThreads int `json:"live_threads"`
		Threads     []struct {
			Tid    int      `json:"tid"`
			Name   string   `json:"name"`
			CPUPct *float64 `json:"cpu_pct"`
			BusyNs int64    `json:"busy_ns"`
		} `json:"threads"`
	}
	if err := json.Unmarshal(b.Bytes(), &line); err != nil {
		t.Fatal(err)
	}
	if line.LiveThreads != 3 || len(line.Threads) != 4 || line.Threads[1].Tid != 7 || *line.Threads[1].CPUPct != 75 ||
		line.Threads[3].CPUPct != nil || line.Threads[3].BusyNs != 10 {
		t.Errorf("JSON %s", b.String())
	}
}

// A thread in the profile that /proc no longer shows, with calls in the
// interval, keeps its profile name and has no CPU%; one whose numbers
// did not change since is left out.
func TestThreadRowsEnded(t *testing.T) {
	p := newPair()
	p.run(3)
	first := p.snapshot(Tasks{At: time.Unix(1, 0)})
	p.run(4)
	second := p.snapshot(Tasks{At: time.Unix(2, 0), List: []Task{{Pid: 7, Tid: 7, Name: "rate"}}})
	got := ThreadRows(first, second)
	if len(got) != 2 || got[0].Tid != 7 || !got[0].HasCPU || got[1].Tid != 8 || got[1].HasCPU ||
		got[1].Name != "sleeper" || got[1].DCalls != 1 {
		t.Fatalf("threads %+v", got)
	}
	third := p.snapshot(Tasks{At: time.Unix(3, 0), List: []Task{{Pid: 7, Tid: 7, Name: "rate"}}})
	if got := ThreadRows(second, third); len(got) != 1 || got[0].Tid != 7 {
		t.Fatalf("threads after tid 8 did nothing more %+v", got)
	}
}

// T opens the thread list; selecting a thread and enter shows its
// functions only; t still cycles the threads by tid.
func TestScreenThreadList(t *testing.T) {
	p := newPair()
	scr := NewScreen(Actions{}, BySelf, Options{}, Tasks{})
	scr.Update(tea.WindowSizeMsg{Width: 120, Height: 30})
	p.run(10)
	snap := func() {
		s := p.snapshot(Tasks{At: time.Unix(int64(p.now), 0), List: []Task{
			{Pid: 7, Tid: 7, Name: "rate"}, {Pid: 7, Tid: 8, Name: "sleeper"}}})
		scr.Update(SnapshotMsg{Profile: s.Profile, Tasks: s.Tasks, Header: Header{Pid: 7, Exe: "rate"}})
	}
	snap()
	p.run(10)
	snap()
	if v := scr.View(); !strings.Contains(v, "thread all  busy times") || !strings.Contains(v, " hot") {
		t.Fatalf("start:\n%s", v)
	}
	scr.Update(key("T"))
	v := scr.View()
	if !strings.Contains(v, "THREAD") || !strings.Contains(v, "(every thread)") || !strings.Contains(v, "sleeper") {
		t.Fatalf("thread list:\n%s", v)
	}
	// Both threads had no CPU; rate has more busy time, so it is first.
	scr.Update(key("j"))
	scr.Update(key("j"))
	scr.Update(tea.KeyMsg{Type: tea.KeyEnter})
	v = scr.View()
	if !strings.Contains(v, "thread 8 sleeper") || strings.Contains(v, " hot") || !strings.Contains(v, "nanosleep") {
		t.Fatalf("after selecting tid 8:\n%s", v)
	}
	scr.Update(key("T"))
	scr.Update(key("k"))
	scr.Update(key("k"))
	scr.Update(tea.KeyMsg{Type: tea.KeyEnter})
	if v := scr.View(); !strings.Contains(v, "thread all ") || !strings.Contains(v, " hot") {
		t.Fatalf("after selecting every thread:\n%s", v)
	}
	scr.Update(key("t"))
	if v := scr.View(); !strings.Contains(v, "thread 7 rate") {
		t.Fatalf("t:\n%s", v)
	}
	scr.Update(key("T"))
	scr.Update(tea.KeyMsg{Type: tea.KeyEsc})
	if v := scr.View(); strings.Contains(v, "(every thread)") || !strings.Contains(v, "thread 7 rate") {
		t.Fatalf("esc:\n%s", v)
	}
}
