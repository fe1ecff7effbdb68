package perfsample

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/profile-dev/profile/attach/internal/procfs"
)

const period = int64(time.Millisecond)

// helperEnv makes the test binary a helper process (TestMain): "busy"
// spins on a locked thread, "open" tries to sample itself.
const helperEnv = "PERFSAMPLE_HELPER"

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "busy":
		busyHelper()
	case "open":
		openHelper()
	default:
		os.Exit(m.Run())
	}
}

// busyHelper prints its spinning thread's id and spin's address, then
// spins until its standard input closes (or 30 s, should the test die).
func busyHelper() {
	runtime.LockOSThread()
	go func() {
		var b [1]byte
		os.Stdin.Read(b[:])
		os.Exit(0)
	}()
	fmt.Println(unix.Gettid(), reflect.ValueOf(spin).Pointer())
	for t0 := time.Now(); time.Since(t0) < 30*time.Second; {
		sink += spin(1 << 20)
	}
	os.Exit(1)
}

var sink uint64

// spin is the work the samples must land in: no calls, so its own
// instructions only.
//
//go:noinline
func spin(n int) uint64 {
	x := uint64(n) | 1
	for range n {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}

// spinFor runs spin on this thread until it has had d of CPU time (so
// that a loaded machine makes the test slower, not different), calling
// between slices of about a millisecond; 20 s at most.
func spinFor(t *testing.T, d time.Duration, between func()) {
	t.Helper()
	pid, tid := os.Getpid(), unix.Gettid()
	end := ranNs(t, pid, tid) + int64(d)
	for t0 := time.Now(); ranNs(t, pid, tid) < end; {
		if time.Since(t0) > 20*time.Second {
			t.Fatalf("%v of CPU time not had in 20 s", d)
		}
		sink += spin(1 << 19)
		if between != nil {
			between()
		}
	}
}

// inSpin tells whether ip, in a process of the test binary where spin
// starts at entry, is in spin: the binary's function table (go test
// strips the symbol table) read at ip moved to where spin starts here.
func inSpin(ip, entry uint64) bool {
	f := runtime.FuncForPC(uintptr(ip - entry + spinHere()))
	return f != nil && f.Entry() == uintptr(spinHere())
}

// spinHere is where spin starts in this process.
func spinHere() uint64 { return uint64(reflect.ValueOf(spin).Pointer()) }

// ranNs is the thread's time on a CPU so far.
func ranNs(t *testing.T, pid, tid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/schedstat", pid, tid))
	if err != nil {
		t.Fatal(err)
	}
	d, ok := procfs.ParseSchedStat(b)
	if !ok {
		t.Fatalf("schedstat %q", b)
	}
	return d.Ran
}

func rawNow(t *testing.T) int64 {
	t.Helper()
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC_RAW, &ts); err != nil {
		t.Fatal(err)
	}
	return ts.Nano()
}

// openOrSkip opens a sampler, skipping the test only when the host has
// no perf events or refuses them.
func openOrSkip(t *testing.T, tid int, kernel bool, pages int) *Sampler {
	t.Helper()
	s, err := open(tid, period, kernel, 0, pages)
	if errors.Is(err, unix.ENOSYS) || errors.Is(err, ErrNotPermitted) {
		t.Skipf("the host refuses perf_event_open: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

// check holds samples of one thread to what it did: one a period of its
// CPU time (within half a period's worth either way, for the timer's
// jitter on a shared machine), strictly later each, in the window they
// were taken in, most in spin.
type check struct {
	ranNs     int64  // the thread's CPU time while sampled
	from, to  int64  // the raw clock's window
	spinEntry uint64 // where spin starts in the sampled process
	lost      int64  // samples the kernel dropped
}

func (c check) verify(t *testing.T, samples []Sample) {
	t.Helper()
	want := float64(c.ranNs) / float64(period)
	got := float64(int64(len(samples)) + c.lost)
	spun, user := 0, 0
	for i, s := range samples {
		if i > 0 && s.TimeNs <= samples[i-1].TimeNs {
			t.Fatalf("sample %d at %d ns, not after sample %d at %d ns", i, s.TimeNs, i-1, samples[i-1].TimeNs)
		}
		if s.TimeNs < c.from || s.TimeNs > c.to {
			t.Fatalf("sample %d at %d ns: outside the raw clock's window [%d, %d]", i, s.TimeNs, c.from, c.to)
		}
		if s.User {
			user++
			if inSpin(s.IP, c.spinEntry) {
				spun++
			}
		}
	}
	share := float64(spun) / float64(max(user, 1))
	t.Logf("%d samples + %d lost over %.1f ms of CPU time: %.2f per period; %d user samples, %.1f%% in spin",
		len(samples), c.lost, float64(c.ranNs)/1e6, got/want, user, 100*share)
	if got < want/2 || got > want*3/2 {
		t.Errorf("%.0f samples (%d lost) for %.0f periods of CPU time", got, c.lost, want)
	}
	if share < 0.8 {
		t.Errorf("%d of %d user samples in spin", spun, user)
	}
}

// The test's own spinning thread, sampled in user mode and in both.
func TestSamplesOwnThread(t *testing.T) {
	for _, kernel := range []bool{false, true} {
		t.Run(fmt.Sprintf("kernel=%t", kernel), func(t *testing.T) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			pid, tid := os.Getpid(), unix.Gettid()
			from := rawNow(t)
			s := openOrSkip(t, tid, kernel, ringPages(period, 0))
			ran0 := ranNs(t, pid, tid)
			spinFor(t, 300*time.Millisecond, nil)
			ran1 := ranNs(t, pid, tid)
			var samples []Sample
			n := s.Read(func(x Sample) { samples = append(samples, x) })
			if n != len(samples) {
				t.Errorf("Read says %d samples, handed %d", n, len(samples))
			}
			if s.Lost() != 0 {
				t.Errorf("%d samples lost in a ring for a second of them", s.Lost())
			}
			if n := s.Read(func(Sample) {}); n > 2 {
				t.Errorf("a second Read handed %d samples: the first did not free them", n)
			}
			check{ranNs: ran1 - ran0, from: from, to: rawNow(t), spinEntry: spinHere()}.verify(t, samples)
			if !kernel {
				for _, x := range samples {
					if !x.User {
						t.Fatalf("a kernel sample at %#x with kernel mode excluded", x.IP)
					}
				}
			}
		})
	}
}

// A one-page ring read every 20 ms wraps around several times: no sample
// lost, none twice, records that straddle its end put together.
func TestReadFreesRoom(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	pid, tid := os.Getpid(), unix.Gettid()
	from := rawNow(t)
	s := openOrSkip(t, tid, false, 1)
	ran0 := ranNs(t, pid, tid)
	var samples []Sample
	reads, last := 0, time.Now()
	spinFor(t, 600*time.Millisecond, func() {
		if time.Since(last) >= 20*time.Millisecond {
			s.Read(func(x Sample) { samples = append(samples, x) })
			reads, last = reads+1, time.Now()
		}
	})
	ran1 := ranNs(t, pid, tid)
	s.Read(func(x Sample) { samples = append(samples, x) })
	if laps := float64(s.meta.Data_tail) / float64(len(s.data)); laps < 2 {
		t.Fatalf("the ring went round %.1f times: not enough to test wrapping", laps)
	} else {
		t.Logf("%d reads, the ring went round %.1f times", reads, laps)
	}
	if s.Lost() != 0 {
		t.Errorf("%d samples lost though read every 20 ms", s.Lost())
	}
	check{ranNs: ran1 - ran0, from: from, to: rawNow(t), spinEntry: spinHere()}.verify(t, samples)
}

// A ring not read while the thread runs fills: the kernel counts what it
// drops, and reports it once a Read made room (with the next sample);
// what it kept plus that is the thread's CPU time.
func TestLostCounted(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	pid, tid := os.Getpid(), unix.Gettid()
	from := rawNow(t)
	s := openOrSkip(t, tid, false, 1)
	ran0 := ranNs(t, pid, tid)
	spinFor(t, 400*time.Millisecond, nil)
	var samples []Sample
	full := s.Read(func(x Sample) { samples = append(samples, x) })
	if max := len(s.data) / sampleSize; full > max {
		t.Fatalf("%d samples out of a ring that holds %d", full, max)
	}
	spinFor(t, 30*time.Millisecond, nil)
	ran1 := ranNs(t, pid, tid)
	s.Read(func(x Sample) { samples = append(samples, x) })
	if s.Lost() == 0 {
		t.Fatalf("%d samples in a ring of %d bytes, then %d, none lost", full, len(s.data), len(samples)-full)
	}
	check{ranNs: ran1 - ran0, from: from, to: rawNow(t), spinEntry: spinHere(), lost: s.Lost()}.verify(t, samples)
}

// Another process's thread: a copy of the test binary spinning.
func TestSamplesAnotherProcess(t *testing.T) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), helperEnv+"=busy")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		cmd.Wait()
	}()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("the helper said %q: %v", line, err)
	}
	var tid int
	var entry uint64
	if _, err := fmt.Sscan(line, &tid, &entry); err != nil {
		t.Fatalf("the helper said %q: %v", line, err)
	}
	from := rawNow(t)
	s := openOrSkip(t, tid, false, ringPages(period, 0))
	ran0 := ranNs(t, cmd.Process.Pid, tid)
	time.Sleep(300 * time.Millisecond)
	ran1 := ranNs(t, cmd.Process.Pid, tid)
	var samples []Sample
	s.Read(func(x Sample) { samples = append(samples, x) })
	if s.Lost() != 0 {
		t.Errorf("%d samples lost", s.Lost())
	}
	if len(samples) == 0 {
		t.Fatalf("no samples of thread %d, %.1f ms on a CPU", tid, float64(ran1-ran0)/1e6)
	}
	check{ranNs: ran1 - ran0, from: from, to: rawNow(t), spinEntry: entry}.verify(t, samples)
}

// ringPages sizes a ring for a second of samples, a power of two pages
// within the bound (4 KiB pages: x86-64).
func TestRingPages(t *testing.T) {
	for _, c := range []struct {
		period time.Duration
		want   int
	}{
		{time.Second, 1},
		{10 * time.Millisecond, 1},       // 2,400 bytes
		{time.Millisecond, 8},            // 24,000
		{500 * time.Microsecond, 16},     // 48,000
		{250 * time.Microsecond, 32},     // 96,000
		{time.Microsecond, maxRingPages}, // a bound
	} {
		if got := ringPages(int64(c.period), 0); got != c.want {
			t.Errorf("ringPages(%v) = %d, want %d", c.period, got, c.want)
		}
	}
	// With 4 KiB of stack a sample takes 4,232 bytes: the bound.
	if got := ringPages(int64(250*time.Microsecond), 4096); got != maxRingPages {
		t.Errorf("ringPages(250µs, 4 KiB of stack) = %d, want %d", got, maxRingPages)
	}
}
