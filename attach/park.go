package attach

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"time"

	"golang.org/x/sys/unix"

	"github.com/profile-dev/profile/attach/internal/heal"
	"github.com/profile-dev/profile/attach/internal/procfs"
)

// A thread of a traced process that profile does not trace (another
// tracer holds it: ptrace gives a thread one tracer) runs among threads
// whose code we change. It takes our inline probes like any thread (their
// stubs record nothing for a thread without a state) but no breakpoint:
// an int3 would stop it for its own tracer. Whenever code changes, it
// waits in the park handler (heal.S), asked by a queued SIGURG, and the
// bytes around where it was interrupted are left alone, as around a
// stopped thread's rip.

// heldThread is one thread of the space we do not trace.
type heldThread struct {
	pid, tid int
	tracer   int // its tracer's pid, 0 if none (made by a held thread)
	slot     int // its park slot
	parked   bool
	rip      uint64 // where it was interrupted, while parked
}

// parking is a space's held threads and their park handler.
type parking struct {
	held      []*heldThread
	cookie    uint32
	installed bool  // the park handler is SIGURG's
	warned    bool  // a failed park was said
	extended  int64 // CLOCK_MONOTONIC ns of the last deadline written
}

// active tells whether a park is on: held threads parked, not released.
func (p *parking) active() bool {
	return slices.ContainsFunc(p.held, func(h *heldThread) bool { return h.parked })
}

const (
	parkWait  = time.Second     // how long a thread may take to park
	parkAhead = 2 * time.Second // a parked thread leaves this long after the tracer's last word
	parkKeep  = 250 * time.Millisecond
)

// errHeldTrap refuses a breakpoint in a process with a thread we do not
// trace: an int3 would stop it for its own tracer, or kill it.
var errHeldTrap = errors.New("a thread profile does not trace would take the breakpoint")

// errParkSlots: more threads not ours than the handler has slots.
var errParkSlots = fmt.Errorf("more than %d threads profile does not trace", heal.ParkSlots)

// hold adds thread tid of process pid, which we do not trace, to the
// space's held threads.
func (s *space) hold(pid, tid, tracer int) (*heldThread, error) {
	if s.park == nil {
		s.park = &parking{cookie: rand.Uint32()}
	}
	if h := s.heldThread(tid); h != nil {
		return h, nil
	}
	for i := range heal.ParkSlots {
		if !slices.ContainsFunc(s.park.held, func(h *heldThread) bool { return h.slot == i }) {
			h := &heldThread{pid: pid, tid: tid, tracer: tracer, slot: i}
			s.park.held = append(s.park.held, h)
			return h, nil
		}
	}
	return nil, errParkSlots
}

// dropHeld forgets held thread h (it ended): its slot is free again.
func (s *space) dropHeld(h *heldThread) {
	s.park.held = slices.DeleteFunc(s.park.held, func(x *heldThread) bool { return x == h })
}

// holding tells whether the space has threads we do not trace.
func (s *space) holding() bool { return s.park != nil && len(s.park.held) > 0 }

// heldRips are the rips of the parked held threads.
func (s *space) heldRips() []uint64 {
	if s.park == nil {
		return nil
	}
	var rips []uint64
	for _, h := range s.park.held {
		if h.parked {
			rips = append(rips, h.rip)
		}
	}
	return rips
}

// heldName names a held thread for a warning.
func heldName(h *heldThread) string {
	if h.tracer == 0 {
		return fmt.Sprintf("thread %d (%s), which no tracer has (a thread profile does not trace made it)", h.tid, procfs.Comm(h.tid))
	}
	return fmt.Sprintf("thread %d (%s), traced by pid %d (%s)", h.tid, procfs.Comm(h.tid), h.tracer, procfs.Comm(h.tracer))
}

// installPark makes the park handler the process's SIGURG handler; tid is
// a stopped thread and the heal area is in place.
func (e *engine) installPark(tid int, as *space) error {
	h := as.heal
	if h == nil {
		return errors.New("no heal area: the SIGTRAP handler could not be installed")
	}
	p := as.park
	if p.installed {
		return nil
	}
	old, _, err := e.parkDisposition(tid, as)
	if err != nil {
		return err
	}
	if err := heal.WriteAct(tid, heal.ParkNewAct(h.Base), heal.ParkAction(h.Base, old)); err != nil {
		return err
	}
	if err := h.SetParkCookie(tid, p.cookie); err != nil {
		return err
	}
	if err := e.sigactionOf(tid, as, unix.SIGURG, heal.ParkNewAct(h.Base), 0); err != nil {
		return fmt.Errorf("install SIGURG handler: %w", err)
	}
	p.installed = true
	return nil
}

// parkDisposition reads the process's SIGURG disposition into the heal
// area's slot for the program's own, taking back through any park handler
// a killed profiler left (each chains to what was there before it). left
// tells whether there was one.
func (e *engine) parkDisposition(tid int, as *space) (act heal.SigAction, left bool, err error) {
	base := as.heal.Base
	if err := e.sigactionOf(tid, as, unix.SIGURG, 0, heal.ParkOldAct(base)); err != nil {
		return act, false, fmt.Errorf("read the SIGURG disposition: %w", err)
	}
	if act, err = heal.ReadAct(tid, heal.ParkOldAct(base)); err != nil {
		return act, false, err
	}
	for range 8 {
		at := act.Handler - heal.ParkHandler(0)
		if act.Handler < heal.ParkHandler(0) || at == base || !heal.At(tid, at) {
			break
		}
		old, ok := heal.ParkOldOf(tid, at)
		if !ok {
			break
		}
		act, left = old, true
		e.stats.Leftover.Handlers++
	}
	if left {
		err = heal.WriteAct(tid, heal.ParkOldAct(base), act)
	}
	return act, left, err
}

// undoParkLeftover gives the program back the SIGURG disposition a
// killed profiler's park handler took.
func (e *engine) undoParkLeftover(tid int, as *space) {
	if _, left, err := e.parkDisposition(tid, as); err == nil && left {
		if err := e.sigactionOf(tid, as, unix.SIGURG, heal.ParkOldAct(as.heal.Base), 0); err != nil {
			e.warn("pid %d: put back the SIGURG disposition a killed profiler took: %v", tid, err)
		}
	}
}

// uninstallPark gives the program its SIGURG disposition back, unless it
// installed another one meanwhile.
func (e *engine) uninstallPark(tid int, as *space) {
	p, h := as.park, as.heal
	if p == nil || !p.installed || h == nil {
		return
	}
	if err := e.giveBack(tid, as, unix.SIGURG, heal.ParkOldAct(h.Base), heal.ParkNewAct(h.Base), heal.ParkHandler(h.Base)); err != nil {
		e.warn("restore the SIGURG disposition of pid %d: %v", tid, err)
		return
	}
	p.installed = false
}

// parkHeld asks every held thread of the space to park and waits until
// each has; tid is a stopped thread of ours. Held threads that ended are
// forgotten. On error none is left parked.
func (as *space) parkHeld(tid int) error {
	p, h := as.park, as.heal
	if !as.holding() {
		return nil
	}
	if !p.installed {
		return errors.New("no park handler")
	}
	if err := as.extendPark(tid); err != nil {
		return err
	}
	// fail lets every held thread go on: one asked parks, finds its slot
	// no longer asked and leaves at once.
	fail := func(err error) error {
		for _, t := range p.held {
			if !t.parked {
				h.SetPark(tid, t.slot, heal.ParkIdle)
			}
		}
		as.releaseHeld(tid)
		return err
	}
	for _, t := range append([]*heldThread(nil), p.held...) {
		if t.parked {
			continue
		}
		if err := waitUnblocked(t); err != nil {
			return fail(err)
		}
		if err := h.SetPark(tid, t.slot, heal.ParkAsked); err != nil {
			return fail(err)
		}
		if err := heal.AskPark(t.pid, t.tid, t.slot, p.cookie); err != nil {
			if errors.Is(err, unix.ESRCH) {
				h.SetPark(tid, t.slot, heal.ParkIdle)
				as.dropHeld(t) // it ended
				continue
			}
			return fail(err)
		}
	}
	give := time.Now().Add(parkWait)
	for {
		waiting := 0
		for _, t := range append([]*heldThread(nil), p.held...) {
			if t.parked {
				continue
			}
			st, rip, err := h.Park(tid, t.slot)
			if err != nil {
				return fail(err)
			}
			switch {
			case st == heal.ParkParked:
				t.parked, t.rip = true, rip
			case !procfs.Alive(t.pid, t.tid):
				h.SetPark(tid, t.slot, heal.ParkIdle)
				as.dropHeld(t)
			default:
				waiting++
			}
		}
		if waiting == 0 {
			return nil
		}
		if time.Now().After(give) {
			break
		}
		time.Sleep(20 * time.Microsecond)
	}
	var late *heldThread
	for _, t := range p.held {
		if !t.parked {
			late = t
		}
	}
	return fail(fmt.Errorf("%s did not stop within %v (its tracer holds it stopped, or keeps SIGURG from it)", heldName(late), parkWait))
}

// waitUnblocked waits up to parkWait for held thread t to take SIGURG:
// one that blocks it (jemalloc's background threads block every signal)
// is not asked at all, so that no signal of ours stays pending in it. A
// thread that ended is not waited for.
func waitUnblocked(t *heldThread) error {
	give := time.Now().Add(parkWait)
	for {
		st := procfs.Status(t.tid)
		if st == nil || procfs.Mask(st, "SigBlk")&(1<<(unix.SIGURG-1)) == 0 {
			return nil
		}
		if time.Now().After(give) {
			return fmt.Errorf("%s blocks every signal we could ask it with (SIGURG): it cannot be held still while code changes", heldName(t))
		}
		time.Sleep(time.Millisecond)
	}
}

// releaseHeld lets every parked held thread go on.
func (as *space) releaseHeld(tid int) {
	if as.park == nil {
		return
	}
	for _, t := range as.park.held {
		if t.parked {
			as.heal.SetPark(tid, t.slot, heal.ParkReleased)
			t.parked = false
		}
	}
}

// extendPark moves the parked threads' deadline parkAhead past now.
func (as *space) extendPark(tid int) error {
	now := monoNow()
	if err := as.heal.SetParkDeadline(tid, now+int64(parkAhead)); err != nil {
		return err
	}
	as.park.extended = now
	return nil
}

// keepParked is called before a function's code is planned: it keeps the
// deadline ahead, and a held thread that left meanwhile (the tracer spent
// longer than parkAhead without a word, reading debug files, say) parks
// again, where it is now, before the plan looks at the rips.
func (s *space) keepParked(tid int) error {
	left, err := s.parkedStill(tid)
	if err != nil || !left {
		return err
	}
	return s.parkHeld(tid)
}

// parkedStill keeps the deadline ahead while a park is on (it checks
// again after parkKeep at most) and tells whether a held thread left.
func (s *space) parkedStill(tid int) (left bool, err error) {
	p := s.park
	if p == nil || !p.active() || monoNow()-p.extended < int64(parkKeep) {
		return false, nil
	}
	if err := s.extendPark(tid); err != nil {
		return false, err
	}
	for _, t := range p.held {
		if !t.parked {
			continue
		}
		if st, _, err := s.heal.Park(tid, t.slot); err != nil || st != heal.ParkParked {
			t.parked, left = false, true
		}
	}
	return left, nil
}

func monoNow() int64 {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return ts.Nano()
}

// holdStill parks the held threads of process p for its set-up (tid a
// stopped thread of ours, the heal area in place) and says which threads
// the profile leaves out. Without held threads it only takes back a park
// handler a killed profiler left.
func (e *engine) holdStill(tid int, p *process) error {
	as := p.as
	if !as.holding() {
		if as.heal != nil && len(as.oldHeals) > 0 {
			e.undoParkLeftover(tid, as)
		}
		return nil
	}
	if err := e.installPark(tid, as); err != nil {
		return fmt.Errorf("attach to pid %d: %w (needed to hold still the threads another tracer has)", p.pid, err)
	}
	if err := as.parkHeld(tid); err != nil {
		return fmt.Errorf("attach to pid %d: %w", p.pid, err)
	}
	e.parked()
	for _, h := range as.park.held {
		e.leftOut(p, h)
	}
	return nil
}

// leftOut says, on stderr and in the profile, that held thread h of p is
// not traced.
func (e *engine) leftOut(p *process, h *heldThread) {
	e.stats.Held++
	msg := fmt.Sprintf("pid %d: %s is left out: its calls are not recorded (a thread has one tracer); while it runs, no function takes a breakpoint and libraries loaded later are not traced", p.pid, heldName(h))
	e.warn("%s", msg)
	e.s.Warn(msg)
}

// heldSpaces are the spaces with threads we do not trace, each with a
// process of it.
func (e *engine) heldSpaces() map[*space]*process {
	out := map[*space]*process{}
	for _, t := range e.threads {
		if as := t.proc.as; as.park != nil && as.park.installed {
			out[as] = t.proc
		}
	}
	return out
}

// parkAll parks the held threads of every space, every thread of ours
// stopped: first it takes in the threads that appeared without a clone
// we saw (a held thread made them). A failure is said once a space; the
// pause is then given up, to be tried again.
func (e *engine) parkAll() error {
	for as, p := range e.heldSpaces() {
		e.holdNew(as, p)
		if !as.holding() {
			continue // a fork child's space: the handler, no thread of another
		}
		if err := as.parkHeld(p.pid); err != nil {
			if !as.park.warned {
				as.park.warned = true
				e.warn("pid %d: %v: code is changed only when it does", p.pid, err)
			}
			e.releaseAll()
			return err
		}
		e.parked()
	}
	return nil
}

// parked counts a park of a space's held threads, and tells a test.
func (e *engine) parked() {
	e.stats.Parks++
	if e.opt.paused != nil {
		e.opt.paused()
	}
}

// releaseAll lets every parked held thread go on.
func (e *engine) releaseAll() {
	for as, p := range e.heldSpaces() {
		as.releaseHeld(p.pid)
	}
}

// holdNew holds the threads of p's process that are neither ours nor
// held: a held thread made them, and no tracer follows them. A thread
// ours made has us for its tracer before its first stop reaches us; an
// io_uring worker runs no code of the program.
func (e *engine) holdNew(as *space, p *process) {
	tids, err := procfs.Tasks(p.pid)
	if err != nil {
		return
	}
	self := os.Getpid()
	for _, tid := range tids {
		if _, ours := e.threads[tid]; ours || as.heldThread(tid) != nil || procfs.IOWorker(tid) {
			continue
		}
		tp := procfs.TracerOf(tid)
		if tp == self {
			continue
		}
		h, err := as.hold(p.pid, tid, tp)
		if err != nil {
			continue // beyond the slots: the pause then waits for none of them
		}
		e.leftOut(p, h)
	}
}

// heldThread is the held thread tid of the space, or nil.
func (s *space) heldThread(tid int) *heldThread {
	if s.park == nil {
		return nil
	}
	for _, h := range s.park.held {
		if h.tid == tid {
			return h
		}
	}
	return nil
}

// parkForDetach parks the held threads of the space for the detach, each
// outside our code: one interrupted inside a stub or a trampoline is let
// go on and asked again. It is false, said, when that cannot be had: the
// detach then leaves our code in place and mapped, as a killed profiler
// does (a later attach takes it out), rather than pull it from under a
// running thread.
func (e *engine) parkForDetach(p *process, as *space) bool {
	var err error
	for range 200 {
		if err = as.parkHeld(p.pid); err != nil {
			break
		}
		inside := false
		for _, h := range as.park.held {
			inside = inside || as.inOurCode(h.rip)
		}
		if !inside {
			e.parked()
			return true
		}
		as.releaseHeld(p.pid)
		time.Sleep(time.Millisecond)
		err = errors.New("a thread profile does not trace stayed inside profile's code")
	}
	e.warn("pid %d: detach: %v: profile's code stays in the process (it runs as after a killed profiler; a later attach takes it out)", p.pid, err)
	as.keepAreas, as.leftInPlace = true, true
	return false
}

// textChanged tells whether the space's code holds anything of ours: a
// breakpoint, an inline patch, a call site's. Until then no thread can be
// in our code, and a detach needs no park.
func (s *space) textChanged() bool {
	return len(s.bps) > 0 || s.inl != nil && (len(s.inl.Patches) > 0 || len(s.inl.Sites) > 0)
}

// inOurCode tells whether pc lies in code of ours: an out-of-line area or the
// heal area.
func (s *space) inOurCode(pc uint64) bool {
	if s.areaOf(pc) != nil {
		return true
	}
	return s.heal != nil && pc >= s.heal.Base && pc < s.heal.Base+heal.Size
}

// handlersLeft waits, the program's dispositions back, until no thread is
// inside the heal area's handlers (a held thread leaving its park); it is
// false if one stays (a thread of ours stopped inside the program's own
// handler, which returns there).
func (e *engine) handlersLeft(tid int, as *space) bool {
	give := time.Now().Add(parkWait)
	for {
		n, err := as.heal.InUseNow(tid)
		if err != nil || n == 0 {
			return err == nil
		}
		if time.Now().After(give) {
			return false
		}
		time.Sleep(100 * time.Microsecond)
	}
}
