package attach

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// runDelay reads how long, in ns, a thread has waited on a run queue in
// all (/proc/PID/task/TID/schedstat's second field). A thread let go after
// a stop waits there for a CPU (on a virtual machine, for its idle virtual
// CPU to be woken: tens of microseconds); that wait is the stop's cost as
// much as the stop itself. The file stays open for the thread's next stop.
type runDelay struct {
	f    *os.File
	last int64 // the last reading, -1 before the first
}

// since returns the run-queue wait since the last call (0 on the first,
// or when the file cannot be read).
func (r *runDelay) since(pid, tid int) int64 {
	if r.f == nil {
		f, err := os.Open(fmt.Sprintf("/proc/%d/task/%d/schedstat", pid, tid))
		if err != nil {
			return 0
		}
		r.f, r.last = f, -1
	}
	var buf [96]byte
	n, err := r.f.ReadAt(buf[:], 0)
	if n == 0 && err != nil {
		return 0
	}
	fields := bytes.Fields(buf[:n])
	if len(fields) < 2 {
		return 0
	}
	v, err := strconv.ParseInt(string(fields[1]), 10, 64)
	if err != nil {
		return 0
	}
	d := v - r.last
	if r.last < 0 || d < 0 {
		d = 0
	}
	r.last = v
	return d
}

// close releases the file.
func (r *runDelay) close() {
	if r.f != nil {
		r.f.Close()
		r.f = nil
	}
}
