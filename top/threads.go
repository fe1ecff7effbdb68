package top

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/profile-dev/profile/model"
)

// userHz is the unit of /proc's utime and stime (USER_HZ): 100 ticks a
// second on Linux x86-64, fixed by the ABI whatever the kernel's HZ.
const userHz = 100

// Task is one thread as /proc showed it.
type Task struct {
	Pid, Tid int
	Name     string        // comm: the thread's name (pthread_setname_np) or its program's
	CPU      time.Duration // utime+stime since it started
}

// Tasks are the threads of the traced processes at one moment.
type Tasks struct {
	At   time.Time // when read; zero: never read
	List []Task
}

// ReadTasks reads the threads of processes pids from proc (/proc). A
// process or a thread that ended meanwhile is left out.
func ReadTasks(proc string, pids []int) (Tasks, error) {
	ts := Tasks{At: time.Now()}
	for _, pid := range pids {
		dir := filepath.Join(proc, strconv.Itoa(pid), "task")
		ents, err := os.ReadDir(dir)
		if gone(err) {
			continue
		}
		if err != nil {
			return ts, fmt.Errorf("threads of %d: %w", pid, err)
		}
		for _, e := range ents {
			tid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			path := filepath.Join(dir, e.Name(), "stat")
			b, err := os.ReadFile(path)
			if gone(err) {
				continue
			}
			if err != nil {
				return ts, fmt.Errorf("thread %d: %w", tid, err)
			}
			name, cpu, err := parseStat(b)
			if err != nil {
				return ts, fmt.Errorf("%s: %w", path, err)
			}
			ts.List = append(ts.List, Task{Pid: pid, Tid: tid, Name: name, CPU: cpu})
		}
	}
	return ts, nil
}

// gone tells whether err says a process or thread no longer exists:
// /proc answers ENOENT or, mid-exit, ESRCH.
func gone(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH)
}

// parseStat reads the name (comm) and CPU time (utime+stime) of a
// /proc/PID/task/TID/stat line. The name is in parentheses and may hold
// spaces and parentheses itself: the fields follow the last ')'. The
// same line gives both, so they agree (the comm file holds the name too).
func parseStat(b []byte) (name string, cpu time.Duration, err error) {
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return "", 0, fmt.Errorf("no (comm) in %q", b)
	}
	f := bytes.Fields(b[end+1:])
	// f[0] is field 3 (state): utime and stime are fields 14 and 15.
	if len(f) < 13 {
		return "", 0, fmt.Errorf("%d fields after (comm), want at least 13", len(f))
	}
	var ticks int64
	for _, s := range f[11:13] {
		n, err := strconv.ParseInt(string(s), 10, 64)
		if err != nil {
			return "", 0, fmt.Errorf("utime/stime: %w", err)
		}
		ticks += n
	}
	return string(b[open+1 : end]), time.Duration(ticks) * time.Second / userHz, nil
}

// Snapshot is a live snapshot as the views use it: the profile, its busy
// times, and the target's threads as /proc showed them when it came.
type Snapshot struct {
	Profile *model.Profile // as the engine handed it: what s saves
	Busy    *model.Profile // Profile.Busy(), computed once for every view
	Tasks   Tasks
}

// NewSnapshot is the snapshot of profile p, with the threads t.
func NewSnapshot(p *model.Profile, t Tasks) *Snapshot {
	return &Snapshot{Profile: p, Busy: p.Busy(), Tasks: t}
}

// Times is the profile with busy times, or the measured (wall) ones: nil
// for a nil s.
func (s *Snapshot) Times(wall bool) *model.Profile {
	switch {
	case s == nil:
		return nil
	case wall:
		return s.Profile
	}
	return s.Busy
}

// ThreadRow is one thread of the thread list.
type ThreadRow struct {
	Pid, Tid int
	Name     string
	// CPU is the thread's CPU time over the interval in percent of one
	// CPU, from /proc's utime+stime. HasCPU is false where /proc cannot
	// say: a thread that ended before the snapshot, or no earlier reading.
	CPU    float64
	HasCPU bool
	// In the interval: busy time (waiting calls' time left out, as
	// Profile.Busy), traced time (waiting included), calls.
	BusyNs, TracedNs int64
	DCalls           int64
	CallsPerSec      float64
	BusyNsAll        int64 // busy time since attach
}

// ThreadRows lists the threads of snapshot cur, busiest on a CPU first:
// every thread /proc showed then, and every thread the profile has traced
// time or calls of in the interval since prev (nil: since the session
// started), such as one that ended meanwhile.
func ThreadRows(prev, cur *Snapshot) []ThreadRow {
	was, is := sum(prev.Times(true), Scope{}), sum(cur.Times(true), Scope{})
	wasBusy, isBusy := sum(prev.Times(false), Scope{}), sum(cur.Times(false), Scope{})
	var dt time.Duration
	before := map[[2]int]time.Duration{}
	if prev != nil && !prev.Tasks.At.IsZero() {
		dt = cur.Tasks.At.Sub(prev.Tasks.At)
		for _, t := range prev.Tasks.List {
			before[[2]int{t.Pid, t.Tid}] = t.CPU
		}
	}
	var interval time.Duration
	if cur.Profile != nil {
		interval = time.Duration(cur.Profile.Meta.DurationNs)
		if prev != nil && prev.Profile != nil {
			interval -= time.Duration(prev.Profile.Meta.DurationNs)
		}
	}
	rows := map[[2]int]*ThreadRow{}
	for _, t := range cur.Tasks.List {
		r := &ThreadRow{Pid: t.Pid, Tid: t.Tid, Name: t.Name}
		if dt > 0 {
			// A thread /proc did not show before started in the interval.
			r.CPU = 100 * float64(t.CPU-before[[2]int{t.Pid, t.Tid}]) / float64(dt)
			// One thread runs on one CPU at most: tick accounting can
			// overshoot by a tick.
			r.CPU, r.HasCPU = min(max(r.CPU, 0), 100), true
		}
		rows[[2]int{t.Pid, t.Tid}] = r
	}
	for k, a := range is.byThread {
		b, busy, busyWas := was.byThread[k], isBusy.byThread[k], wasBusy.byThread[k]
		r := rows[k]
		if r == nil {
			if a.traced == b.traced && a.calls == b.calls {
				continue // ended before the interval
			}
			r = &ThreadRow{Pid: k[0], Tid: k[1], Name: a.name}
			rows[k] = r
		}
		// Never below 0: a snapshot taken while the profiler held the
		// thread stopped counted time a later one takes out.
		r.TracedNs, r.DCalls = max(0, a.traced-b.traced), a.calls-b.calls
		r.BusyNs, r.BusyNsAll = max(0, busy.traced-busyWas.traced), busy.traced
		if interval > 0 {
			r.CallsPerSec = float64(r.DCalls) / interval.Seconds()
		}
	}
	out := make([]ThreadRow, 0, len(rows))
	for _, r := range rows {
		out = append(out, *r)
	}
	slices.SortFunc(out, func(a, b ThreadRow) int {
		if a.HasCPU != b.HasCPU {
			if a.HasCPU {
				return -1
			}
			return 1
		}
		if d := cmp.Compare(b.CPU, a.CPU); d != 0 {
			return d
		}
		if d := cmp.Compare(b.BusyNs, a.BusyNs); d != 0 {
			return d
		}
		return cmp.Or(cmp.Compare(a.Pid, b.Pid), cmp.Compare(a.Tid, b.Tid))
	})
	return out
}
