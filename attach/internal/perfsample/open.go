package perfsample

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Sampler samples one thread's CPU time (a task-clock software event): a
// sample every period of its time on a CPU, with the instruction pointer
// and the time. It starts sampling at Open, follows the thread only (not
// the threads it creates), and stays readable after the thread exits.
// Not safe for concurrent use.
type Sampler struct {
	fd   int
	mem  []byte                  // the mapping: the control page, then the data
	meta *unix.PerfEventMmapPage // mem's first page
	data []byte                  // the ring: a power of two pages
	lost int64
	rec  []byte // a record that wraps around the ring's end, put together
	// stack: samples carry the user registers and this many bytes of the
	// stack (Open's stackBytes).
	stack int
}

// Sample is one sample of the thread's CPU time.
type Sample struct {
	IP     uint64
	TimeNs int64 // CLOCK_MONOTONIC_RAW
	User   bool  // taken in user mode
	// With Open's stackBytes: the thread's user registers (HasRegs) and
	// its stack from Regs.SP up, valid during Read's call only.
	HasRegs bool
	Regs    UserRegs
	Stack   []byte
}

// ErrNotPermitted means the host refuses the caller sampling that thread
// (EACCES, EPERM): perf_event_paranoid, capabilities, ptrace rights or a
// security policy. The error that wraps it says which and how to fix it.
// With kernel sampling it may be the kernel part only: try without.
var ErrNotPermitted = errors.New("not permitted")

// ringSeconds is how long a ring holds samples of a thread that is on a
// CPU all the time.
const ringSeconds = 1

// maxRingPages bounds a ring (256 KiB with 4 KiB pages: some 60 samples
// with 4 KiB of stack each): the kernel counts the rings of a user
// against perf_event_mlock_kb (516 KiB per CPU by default), and a traced
// process may have many threads.
const maxRingPages = 64

// Open starts sampling thread tid every periodNs of its CPU time, in user
// mode only unless kernel; with stackBytes (a multiple of 8), each sample
// carries the user registers and that much of the stack, for an unwinder. The caller must be allowed to ptrace the thread
// (perf_event_paranoid <= 2), and to sample the kernel
// (perf_event_paranoid <= 1 or CAP_PERFMON) for kernel: a refusal wraps
// ErrNotPermitted.
func Open(tid int, periodNs int64, kernel bool, stackBytes int) (*Sampler, error) {
	return open(tid, periodNs, kernel, stackBytes, ringPages(periodNs, stackBytes))
}

// ringPages is the smallest power of two pages that holds ringSeconds of
// samples at periodNs, within maxRingPages.
func ringPages(periodNs int64, stackBytes int) int {
	need := ringSeconds * 1e9 / max(periodNs, 1) * int64(recordSize(stackBytes))
	pages := 1
	for pages < maxRingPages && int64(pages*os.Getpagesize()) < need {
		pages *= 2
	}
	return pages
}

// Holds is how many samples a ring Open makes for periodNs and
// stackBytes holds: a reader must come back before a thread on a CPU
// takes that many, or the kernel drops the ones beyond.
func Holds(periodNs int64, stackBytes int) int {
	return ringPages(periodNs, stackBytes) * os.Getpagesize() / recordSize(stackBytes)
}

// open maps a ring of pages data pages, a power of two.
func open(tid int, periodNs int64, kernel bool, stackBytes, pages int) (*Sampler, error) {
	if periodNs <= 0 {
		return nil, fmt.Errorf("sampling thread %d: period %d ns: not positive", tid, periodNs)
	}
	if stackBytes < 0 || stackBytes%8 != 0 || stackBytes > 0xfff0 {
		return nil, fmt.Errorf("sampling thread %d: %d bytes of stack: not a multiple of 8 below 64 KiB", tid, stackBytes)
	}
	attr := unix.PerfEventAttr{
		Type:        unix.PERF_TYPE_SOFTWARE,
		Config:      unix.PERF_COUNT_SW_TASK_CLOCK,
		Sample:      uint64(periodNs),
		Sample_type: unix.PERF_SAMPLE_IP | unix.PERF_SAMPLE_TIME,
		Bits:        unix.PerfBitExcludeHv | unix.PerfBitUseClockID,
		Clockid:     unix.CLOCK_MONOTONIC_RAW,
	}
	if stackBytes > 0 {
		attr.Sample_type |= unix.PERF_SAMPLE_REGS_USER | unix.PERF_SAMPLE_STACK_USER
		attr.Sample_regs_user = regsMask
		attr.Sample_stack_user = uint32(stackBytes)
	}
	attr.Size = uint32(unsafe.Sizeof(attr))
	if !kernel {
		attr.Bits |= unix.PerfBitExcludeKernel
	}
	fd, err := unix.PerfEventOpen(&attr, tid, -1, -1, unix.PERF_FLAG_FD_CLOEXEC)
	if err != nil {
		return nil, openError(tid, kernel, err)
	}
	// The control page writable: the tail written there tells the
	// kernel what is read (a read-only mapping makes it overwrite).
	mem, err := unix.Mmap(fd, 0, (1+pages)*os.Getpagesize(), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		unix.Close(fd)
		if errors.Is(err, unix.EPERM) {
			return nil, fmt.Errorf("sampling thread %d: mapping its %d KiB ring: %w (over the locked memory allowed for perf rings: kernel.perf_event_mlock_kb, ulimit -l)",
				tid, pages*os.Getpagesize()>>10, err)
		}
		return nil, fmt.Errorf("sampling thread %d: mapping its %d KiB ring: %w", tid, pages*os.Getpagesize()>>10, err)
	}
	s := &Sampler{fd: fd, mem: mem, meta: (*unix.PerfEventMmapPage)(unsafe.Pointer(&mem[0])),
		stack: stackBytes, rec: make([]byte, recordSize(stackBytes))}
	// Kernels since 4.1 say where the data is; older ones put it on the
	// next page.
	off, size := uint64(os.Getpagesize()), uint64(pages*os.Getpagesize())
	if s.meta.Data_offset != 0 {
		off, size = s.meta.Data_offset, s.meta.Data_size
	}
	s.data = mem[off : off+size]
	return s, nil
}

// openError says why perf_event_open refused, and for a refusal what
// would allow it.
func openError(tid int, kernel bool, err error) error {
	what := "user mode"
	if kernel {
		what = "user and kernel mode"
	}
	switch {
	case errors.Is(err, unix.ESRCH):
		return fmt.Errorf("sampling thread %d: %w (no such thread)", tid, err)
	case errors.Is(err, unix.ENOSYS), errors.Is(err, unix.ENOENT), errors.Is(err, unix.EOPNOTSUPP):
		return fmt.Errorf("sampling thread %d: %w (this kernel has no perf events for CPU time); times will not be sampled", tid, err)
	case !errors.Is(err, unix.EACCES) && !errors.Is(err, unix.EPERM):
		return fmt.Errorf("sampling thread %d in %s: %w", tid, what, err)
	}
	paranoid, perr := readParanoid()
	var why string
	switch {
	case perr != nil:
		why = fmt.Sprintf("perf_event_paranoid unknown (%v): sampling needs <= 2 (or CAP_PERFMON)", perr)
	case paranoid > 2:
		why = fmt.Sprintf("perf_event_paranoid is %d: sampling needs <= 2 (or CAP_PERFMON); times will not be sampled", paranoid)
	case kernel && paranoid > 1:
		why = fmt.Sprintf("perf_event_paranoid is %d: sampling kernel mode needs <= 1 (or CAP_PERFMON); sample user mode only", paranoid)
	default:
		why = fmt.Sprintf("perf_event_paranoid is %d, so this process may not ptrace the thread, or a security policy (seccomp, LSM) forbids perf_event_open; times will not be sampled", paranoid)
	}
	return fmt.Errorf("sampling thread %d in %s: %w (%w): %s", tid, what, ErrNotPermitted, err, why)
}

func readParanoid() (int, error) {
	b, err := os.ReadFile("/proc/sys/kernel/perf_event_paranoid")
	if err != nil {
		return 0, err
	}
	var n int
	if _, err := fmt.Sscan(strings.TrimSpace(string(b)), &n); err != nil {
		return 0, fmt.Errorf("perf_event_paranoid %q: %w", b, err)
	}
	return n, nil
}

// Close stops the sampling and unmaps the ring. Closing twice does
// nothing: the descriptor's number may be another file's by then.
func (s *Sampler) Close() error {
	if s.mem == nil {
		return nil
	}
	err := unix.Munmap(s.mem)
	if cerr := unix.Close(s.fd); err == nil {
		err = cerr
	}
	s.fd, s.mem, s.meta, s.data = -1, nil, nil, nil
	if err != nil {
		return fmt.Errorf("closing a sampler: %w", err)
	}
	return nil
}
