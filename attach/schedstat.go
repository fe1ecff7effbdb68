package attach

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// schedStat reads a thread's scheduler counters
// (/proc/PID/task/TID/schedstat: ns on a CPU, ns waiting on a run queue,
// times put on a CPU). Between two of its stops they tell what a stop
// cost the thread that the tracer cannot see: a thread let go waits for a
// CPU (on a virtual machine, for its idle virtual CPU to be woken: tens of
// microseconds), and once stopped, for the tracer to be woken. The file
// stays open for the thread's next stop.
type schedStat struct {
	f    *os.File
	last schedDelta // the last reading; slices < 0 before the first
}

// schedDelta is what a thread did between two readings.
type schedDelta struct {
	ran, queued int64 // ns on a CPU, ns waiting for one
	slices      int64 // times put on a CPU
}

// since returns the counters' change since the last call; ok is false on
// the first call, or when the file cannot be read.
func (s *schedStat) since(pid, tid int) (d schedDelta, ok bool) {
	if s.f == nil {
		f, err := os.Open(fmt.Sprintf("/proc/%d/task/%d/schedstat", pid, tid))
		if err != nil {
			return d, false
		}
		s.f, s.last.slices = f, -1
	}
	var buf [96]byte
	n, err := s.f.ReadAt(buf[:], 0)
	if n == 0 && err != nil {
		return d, false
	}
	cur, ok := parseSchedStat(buf[:n])
	if !ok {
		return d, false
	}
	prev := s.last
	s.last = cur
	if prev.slices < 0 {
		return d, false
	}
	d = schedDelta{cur.ran - prev.ran, cur.queued - prev.queued, cur.slices - prev.slices}
	return d, d.ran >= 0 && d.queued >= 0 && d.slices >= 0
}

// parseSchedStat reads the file's three numbers.
func parseSchedStat(b []byte) (schedDelta, bool) {
	f := bytes.Fields(b)
	if len(f) < 3 {
		return schedDelta{}, false
	}
	var v [3]int64
	for i := range v {
		n, err := strconv.ParseInt(string(f[i]), 10, 64)
		if err != nil {
			return schedDelta{}, false
		}
		v[i] = n
	}
	return schedDelta{v[0], v[1], v[2]}, true
}

// close releases the file.
func (s *schedStat) close() {
	if s.f != nil {
		s.f.Close()
		s.f = nil
	}
}
