package attach

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/profile-dev/profile/instrument"
	"github.com/profile-dev/profile/internal/proctext"
	"github.com/profile-dev/profile/internal/workload"
)

// A profiler killed while a thread that blocks every signal has yet to
// reach one of its breakpoints: no thread can trap to heal the text (the
// kernel kills a process whose thread takes an int3 with SIGTRAP
// blocked), so the watcher mends it from outside, at once, and the thread
// runs on as if never traced.
func TestKilledProfilerMendedForBlockedThreads(t *testing.T) {
	bin, err := workload.Path("sigblocked")
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range probeKinds {
		t.Run(kind, func(t *testing.T) {
			goFile := filepath.Join(t.TempDir(), "go")
			var out bytes.Buffer
			target := exec.Command(bin, goFile)
			target.Stdout = &out
			if err := target.Start(); err != nil {
				t.Fatal(err)
			}
			defer target.Process.Kill()
			pid := target.Process.Pid
			var stderr bytes.Buffer
			tracer := startTracer(t, pid, &stderr, "PROFILE_TEST_TRACE_PID="+strconv.Itoa(pid), "PROFILE_TEST_PROBES="+kind)
			// Its probes in: work's first byte is an int3 (trap) or a
			// jump (inline), no longer the file's.
			work := funcAddr(t, pid, bin, "work")
			mem, err := os.Open(fmt.Sprintf("/proc/%d/mem", pid))
			if err != nil {
				t.Fatal(err)
			}
			defer mem.Close()
			want := byte(0xe9)
			if kind == ProbesTrap {
				want = 0xcc
			}
			within(t, 5*time.Second, func() error {
				var b [1]byte
				if _, err := mem.ReadAt(b[:], int64(work)); err != nil || b[0] != want {
					return fmt.Errorf("work's entry not probed (tracer said %q)", stderr.String())
				}
				return nil
			})
			tracer.Process.Kill()
			tracer.Wait()
			if kind == ProbesTrap {
				// The worker calls nothing traced meanwhile: only the
				// watcher can take the int3s out.
				within(t, 5*time.Second, func() error { return proctext.FileText(pid) })
			}
			if err := os.WriteFile(goFile, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := target.Wait(); err != nil {
				t.Fatalf("target: %v (output %q)", err, out.String())
			}
			if got, want := out.String(), "calls=1000 sum=1499500\n"; got != want {
				t.Fatalf("output %q, want %q", got, want)
			}
		})
	}
}

// within fails t unless cond holds (returns nil) within d.
func within(t *testing.T, d time.Duration, cond func() error) {
	t.Helper()
	for deadline := time.Now().Add(d); ; time.Sleep(10 * time.Millisecond) {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %v", d, err)
		}
	}
}

// funcAddr is where function name of executable bin is in process pid.
func funcAddr(t *testing.T, pid int, bin, name string) uint64 {
	t.Helper()
	m, err := instrument.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	maps, err := instrument.ReadMaps(pid)
	if err != nil {
		t.Fatal(err)
	}
	bias, err := m.Bias(maps)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range m.Symbols {
		if s.Name == name {
			return s.Value + bias
		}
	}
	t.Fatalf("%s: no %s", bin, name)
	return 0
}
