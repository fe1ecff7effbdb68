//go:build faultinject

package ptrace

import (
	"os"
	rdebug "runtime/debug"
	"strconv"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// Fault injection, in test builds only (go build -tags faultinject): with
// PROFILE_TEST_DIE_AFTER=N in its environment the profiler SIGKILLs itself
// just before its Nth operation on a target (a ptrace request or a memory
// write), so that a test can kill it at every point of its work and check
// that the target goes on. The shipped binary has an empty faultPoint.

var (
	faultOps atomic.Int64
	faultAt  = func() int64 {
		n, _ := strconv.ParseInt(os.Getenv("PROFILE_TEST_DIE_AFTER"), 10, 64)
		return n
	}()
)

func faultPoint() {
	if faultOps.Add(1) == faultAt {
		os.Stderr.Write(rdebug.Stack()) // where it died, for the test to show
		unix.Kill(os.Getpid(), unix.SIGKILL)
		select {} // the signal is on its way
	}
}
