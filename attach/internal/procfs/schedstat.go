package procfs

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// SchedStat reads a thread's scheduler counters
// (/proc/PID/task/TID/schedstat: ns on a CPU, ns waiting on a run queue,
// times put on a CPU). Between two of its stops they tell what a stop
// cost the thread that the tracer cannot see: a thread let go waits for a
// CPU (on a virtual machine, for its idle virtual CPU to be woken: tens of
// microseconds), and once stopped, for the tracer to be woken. The file
// stays open for the thread's next stop.
type SchedStat struct {
	f    *os.File
	last SchedDelta // the last reading; slices < 0 before the first
}

// SchedDelta is what a thread did between two readings.
type SchedDelta struct {
	Ran, Queued int64 // ns on a CPU, ns waiting for one
	Slices      int64 // times put on a CPU
}

// Since returns the counters' change since the last call; ok is false on
// the first call, or when the file cannot be read.
func (s *SchedStat) Since(pid, tid int) (d SchedDelta, ok bool) {
	if s.f == nil {
		f, err := os.Open(fmt.Sprintf("/proc/%d/task/%d/schedstat", pid, tid))
		if err != nil {
			return d, false
		}
		s.f, s.last.Slices = f, -1
	}
	var buf [96]byte
	n, err := s.f.ReadAt(buf[:], 0)
	if n == 0 && err != nil {
		return d, false
	}
	cur, ok := ParseSchedStat(buf[:n])
	if !ok {
		return d, false
	}
	prev := s.last
	s.last = cur
	if prev.Slices < 0 {
		return d, false
	}
	d = SchedDelta{cur.Ran - prev.Ran, cur.Queued - prev.Queued, cur.Slices - prev.Slices}
	return d, d.Ran >= 0 && d.Queued >= 0 && d.Slices >= 0
}

// ParseSchedStat reads the file's three numbers.
func ParseSchedStat(b []byte) (SchedDelta, bool) {
	f := bytes.Fields(b)
	if len(f) < 3 {
		return SchedDelta{}, false
	}
	var v [3]int64
	for i := range v {
		n, err := strconv.ParseInt(string(f[i]), 10, 64)
		if err != nil {
			return SchedDelta{}, false
		}
		v[i] = n
	}
	return SchedDelta{v[0], v[1], v[2]}, true
}

// Close releases the file.
func (s *SchedStat) Close() {
	if s.f != nil {
		s.f.Close()
		s.f = nil
	}
}
