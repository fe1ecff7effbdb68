package attach

import (
	"encoding/binary"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/profile-dev/profile/attach/internal/inline"
	"github.com/profile-dev/profile/attach/internal/lifeline"
	"github.com/profile-dev/profile/attach/internal/procfs"
	"github.com/profile-dev/profile/attach/internal/ptrace"
	"github.com/profile-dev/profile/attach/internal/stub"
	"github.com/profile-dev/profile/instrument"
	"github.com/profile-dev/profile/internal/tsc"
)

// inlining is the inline probes' state in the engine. The tracer thread
// holds mu except while it waits for a stop; the drain goroutine takes it
// to feed the rings' events to the session.
type inlining struct {
	mu         sync.Mutex
	clock      *tsc.Clock     // nil: no inline probes
	inl        []*inlineSpace // spaces with inline probes, drained
	drainDone  bool
	dropWarned bool
	exitProbes bool // timed functions whose returns all take one get exit probes
	// exited: the functions whose returns have exit probes (in any
	// process), for ProbeStats.Exits.
	exited map[int]bool
	// line: the tracer thread's lifeline, a word in each process's rings
	// the kernel marks when that thread exits, however it dies: a stub
	// waiting on a full ring stops waiting then (nil: the stubs wait out
	// the stall limit).
	line *lifeline.Line
}

// Inline probes (docs/design.md, Inline probes): a probed function's entry
// jumps to a trampoline that calls the entry stub (attach/internal/stub); the
// stubs write events into a per-thread ring in a memfd the tracer maps too,
// and a goroutine drains the rings into the session. ptrace is left for
// seizing, lifecycle events, patching and syscall injection.

// inlineSpace is the tracer's side of one address space's inline probes.
type inlineSpace = inline.Space[*thread]

// prepareInline checks the probe kind and, unless only trap probes are
// wanted, calibrates the clock the stubs' rdtsc timestamps convert with.
func (e *engine) prepareInline() error {
	if err := CheckProbes(e.opt.Probes); err != nil {
		return err
	}
	if e.opt.Probes == "" {
		e.opt.Probes = ProbesAuto
	}
	if e.opt.Probes == ProbesTrap {
		return nil
	}
	if err := tsc.Invariant(); err != nil {
		if e.opt.Probes == ProbesInline {
			return fmt.Errorf("no inline probes: %w", err)
		}
		e.warn("trap probes only: %v", err)
		return nil
	}
	e.exitProbes = !e.opt.hijackOnly
	if l, err := lifeline.Register(); err == nil {
		e.line = l
	} else {
		e.warn("%v: a process whose ring is full when the profiler dies waits %v", err, time.Duration(stallLimitNs))
	}
	e.clock = tsc.Calibrate(e.s.Base(), 5*time.Millisecond) // Refine does better as the session runs
	// Trap probes' stops and holds on the same clock as the rings: two
	// clocks in one thread made a callee outlast its caller.
	clock := e.clock
	if skew := int64(e.opt.clockSkew); skew != 0 {
		var reads atomic.Int64
		e.s.SetClock(func() int64 {
			if reads.Add(1)%2 == 0 {
				return clock.Ns(tsc.Read()) + skew
			}
			return clock.Ns(tsc.Read()) - skew
		})
		return nil
	}
	e.s.SetClock(func() int64 { return clock.Ns(tsc.Read()) })
	return nil
}

// setupInline gives process p inline probes if it can have them; its
// functions then get trap probes only where they cannot be patched.
func (e *engine) setupInline(tid int, p *process) {
	as := p.as
	if e.clock == nil || len(as.areas) == 0 || as.inl != nil {
		return
	}
	if instrument.IsGoProgram(p.exe) {
		// Goroutine stacks move when they grow: a replaced return address
		// would move with its frame, away from its shadow entry.
		return
	}
	if shadowStack(p.pid) {
		msg := fmt.Sprintf("pid %d runs with a CET shadow stack: trap probes only (inline probes replace return addresses)", p.pid)
		e.warn("%s", msg)
		e.s.Warn(msg)
		return
	}
	is, err := e.mapInline(tid, as)
	if err != nil {
		e.warn("pid %d: %v: trap probes only", p.pid, err)
		return
	}
	as.inl = is
	e.inl = append(e.inl, is)
}

// mapInline sets up inline probes in the space of stopped thread tid: the
// data block, the memfd of rings (mapped in the target and here), and the
// return stub in the first area. It needs the injection site.
func (e *engine) mapInline(tid int, as *space) (*inlineSpace, error) {
	site := as.areas[0].base
	inj := func(nr uint64, args ...uint64) (uint64, error) { return e.injectCall(tid, site, nr, args...) }
	gate := e.detailGate()
	size := uint64(stub.DataSize)
	if gate.deferred {
		size += stub.SidesSize
	}
	data, err := inj(unix.SYS_MMAP, 0, size, unix.PROT_READ|unix.PROT_WRITE,
		unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE, ^uint64(0), 0)
	if err != nil {
		return nil, fmt.Errorf("inline probes: data block: %w", err)
	}
	is := inline.New[*thread](data, size)
	rings, mem, err := e.mapRings(tid, site, data, 0)
	if err != nil {
		inj(unix.SYS_MUNMAP, data, size)
		return nil, err
	}
	is.Rings, is.Mem = rings, mem
	code, err := e.stubIn(tid, is, as.areas[0])
	if err != nil {
		e.unmapInline(tid, as, is)
		return nil, err
	}
	is.RetStub = code + stub.RetStub
	var hdr [stub.DLifeline + 8]byte
	binary.LittleEndian.PutUint64(hdr[stub.DRetstub:], is.RetStub)
	binary.LittleEndian.PutUint64(hdr[stub.DLifeline:], rings+stub.Lifeline+lifeline.WordOffset)
	binary.LittleEndian.PutUint64(hdr[stub.DStallLimit:], uint64(float64(stallLimitNs)/e.clock.NsPerTick()))
	gate.put(hdr[:])
	if err := ptrace.WriteMem(tid, data, hdr[:]); err != nil {
		e.unmapInline(tid, as, is)
		return nil, err
	}
	return is, nil
}

// stallLimitNs is how long a stub waiting for room in a full ring goes
// without a heartbeat of the tracer (it beats each time it drains) before
// it concludes the tracer is gone; the process then records nothing more.
// A tracer that is alive but starved of CPU beats as soon as it runs. A
// dead one the stub knows at once from its lifeline word; the limit is for
// a tracer without a lifeline, or one that stopped draining alive.
const stallLimitNs = 2e9

// mapRings creates the memfd of rings in the target (at fixed address at,
// replacing the mapping there, or anywhere if at is 0) and maps it here.
func (e *engine) mapRings(tid int, site, data, at uint64) (uint64, []byte, error) {
	inj := func(nr uint64, args ...uint64) (uint64, error) { return e.injectCall(tid, site, nr, args...) }
	if err := ptrace.WriteMem(tid, data+stub.DName, []byte(stub.RingsName)); err != nil {
		return 0, nil, err
	}
	fd, err := inj(unix.SYS_MEMFD_CREATE, data+stub.DName, unix.MFD_CLOEXEC)
	if err != nil {
		return 0, nil, fmt.Errorf("inline probes: memfd_create: %w", err)
	}
	defer inj(unix.SYS_CLOSE, fd)
	if _, err := inj(unix.SYS_FTRUNCATE, fd, stub.RingsSize); err != nil {
		return 0, nil, fmt.Errorf("inline probes: ftruncate: %w", err)
	}
	flags := uint64(unix.MAP_SHARED | unix.MAP_NORESERVE)
	if at != 0 {
		flags |= unix.MAP_FIXED
	}
	addr, err := inj(unix.SYS_MMAP, at, stub.RingsSize, unix.PROT_READ|unix.PROT_WRITE, flags, fd, 0)
	if err != nil {
		return 0, nil, fmt.Errorf("inline probes: map rings: %w", err)
	}
	f, err := os.OpenFile(fmt.Sprintf("/proc/%d/fd/%d", procfs.Tgid(tid), fd), os.O_RDWR, 0)
	if err != nil {
		inj(unix.SYS_MUNMAP, addr, stub.RingsSize)
		return 0, nil, fmt.Errorf("inline probes: open the rings: %w", err)
	}
	defer f.Close()
	mem, err := unix.Mmap(int(f.Fd()), 0, stub.RingsSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		inj(unix.SYS_MUNMAP, addr, stub.RingsSize)
		return 0, nil, fmt.Errorf("inline probes: map the rings: %w", err)
	}
	if e.line != nil {
		e.line.Tie(mem[stub.Lifeline : stub.Lifeline+lifeline.NodeSize])
	}
	return addr, mem, nil
}

// unmapRings unmaps the tracer's mapping of a process's rings, after
// taking its lifeline node out of the list the kernel walks.
func (e *engine) unmapRings(mem []byte) {
	if e.line != nil {
		e.line.Untie(mem[stub.Lifeline : stub.Lifeline+lifeline.NodeSize])
	}
	unix.Munmap(mem)
}

// stubIn returns the entry stub's copy in area a, writing one there first.
func (e *engine) stubIn(tid int, is *inlineSpace, a *area) (uint64, error) {
	if s, ok := is.Stubs[a.base]; ok {
		return s, nil
	}
	a.next = (a.next + 63) &^ 63
	if a.next+uint64(stub.Len()) > a.codeEnd() {
		return 0, fmt.Errorf("inline probes: area full")
	}
	s := a.base + a.next
	// Every copy's via goes to the in-use return stub's call (the
	// first copy's: is.RetStub), which pushes its address.
	viaCall := s + stub.ViaCall
	if is.RetStub != 0 {
		viaCall = is.RetStub - stub.RetStub + stub.ViaCall
	}
	code := stub.Copy(is.Data, viaCall)
	if err := ptrace.WriteMem(tid, s, code); err != nil {
		return 0, err
	}
	a.next += uint64(len(code))
	is.Stubs[a.base] = s
	return s, nil
}

// unmapInline removes the data block and the rings from the target and
// from here.
func (e *engine) unmapInline(tid int, as *space, is *inlineSpace) {
	site := as.areas[0].base
	if is.Rings != 0 {
		e.unmap(tid, site, is.Rings, stub.RingsSize)
	}
	e.unmap(tid, site, is.Data, is.DataLen)
	if is.Mem != nil {
		e.unmapRings(is.Mem)
		is.Mem = nil
	}
}

// threadState is the address of t's thread state, if it has a ring.
func threadState(t *thread) (uint64, bool) {
	is := t.proc.as.inl
	slot, ok := is.TidSlot[t.tid]
	if !ok {
		return 0, false
	}
	return is.State(slot), true
}

// shadowStack refuses inline probes where the kernel enforces a shadow
// stack: the stubs replace return addresses.
func shadowStack(pid int) bool {
	return strings.Contains(procfs.Status(pid)["x86_Thread_features"], "shstk")
}
