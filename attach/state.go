package attach

import (
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/profile-dev/profile/model"
)

// engine is one tracing session. It is owned by the tracer thread; only
// stopRequested and wakers are touched from elsewhere.
type engine struct {
	opt   Options
	prof  *model.Profile
	in    *model.Interner
	base  time.Time
	start time.Time

	libsSeen map[string]bool // --lib names that selected a loaded library

	threads  map[int]*thread
	early    map[int]unix.WaitStatus
	deferred []deferredStop

	rootPid    int
	rootExit   *unix.WaitStatus
	launched   bool // we started the root process (record)
	stats      Stats
	nextReport time.Duration

	stopRequested atomic.Bool
	wakers        atomic.Int64
	detaching     bool
	spin          int   // wait4 polls before sleeping (see spinBudget)
	fatal         error // the session failed after the target started
}

type deferredStop struct {
	tid int
	ws  unix.WaitStatus
}

// process is one traced process image.
type process struct {
	pid      int
	idx      int // index into prof.Processes
	as       *space
	exe      string
	alive    int  // live threads
	noFollow bool // a vfork child under --no-follow-fork: let go at exec
	stripped bool // its executable has no symbols: only libraries are traced
}

// thread is one traced thread.
type thread struct {
	tid    int
	proc   *process
	idx    int // index into prof.Threads
	rec    *model.Recorder
	frames []frame
	level  int

	// The stack mapping the thread's sp was last seen in: a signal
	// handler on a sigaltstack runs on another one.
	stackLo, stackHi uint64

	// unreaped: its SIGTRAP stop was peeked, not reaped, so the signal
	// stays pending until the thread is resumed (which discards the stop's
	// notification): should the tracer die first, the SIGTRAP is delivered
	// to the heal handler. trapAt is the breakpoint it sits on, until the
	// tracer moves it on.
	unreaped bool
	trapAt   uint64

	stopped   bool // in a ptrace-stop we know of (detach)
	listening bool // in a group-stop, resumed with PTRACE_LISTEN
	held      bool // attach: a stop of its own is kept for the loop
	done      bool
}

// frame is the engine's side of one open activation: the stack pointer at
// entry (where the return address lies) and the return address.
type frame struct {
	sp, ret uint64
	stack   uint64 // end of the stack mapping holding sp: its identity
}

func newEngine(opt Options) *engine {
	now := time.Now()
	p := model.New()
	p.Meta = opt.Meta
	p.Meta.StartUnixNs = now.UnixNano()
	return &engine{
		opt: opt, prof: p, in: model.NewInterner(p), base: now, start: now,
		threads: map[int]*thread{}, early: map[int]unix.WaitStatus{}, libsSeen: map[string]bool{},
	}
}

// now is the session's monotonic clock in nanoseconds.
func (e *engine) now() int64 { return int64(time.Since(e.base)) }

func (e *engine) deferStop(tid int, ws unix.WaitStatus) {
	e.deferred = append(e.deferred, deferredStop{tid, ws})
}

// newProcess records a process image.
func (e *engine) newProcess(pid int, as *space, parent *thread, forkedBy int, execOf int) *process {
	pr := model.Process{Pid: pid, Parent: model.None, ForkedBy: forkedBy, ExecOf: execOf}
	if parent != nil {
		pr.Parent = parent.proc.idx
		pr.ParentPid = parent.proc.pid
		pr.ForkedByTid = parent.tid
	}
	if execOf != model.None {
		pr.Parent = e.prof.Processes[execOf].Parent
		pr.ParentPid = e.prof.Processes[execOf].ParentPid
	}
	pr.Exe, pr.Argv = readExe(pid), readArgv(pid)
	e.prof.Processes = append(e.prof.Processes, pr)
	p := &process{pid: pid, idx: len(e.prof.Processes) - 1, as: as, exe: pr.Exe}
	e.stats.Processes++
	return p
}

// newThread records a thread, starting its clock now.
func (e *engine) newThread(tid int, p *process, parent *thread, spawnedBy int) *thread {
	t := &thread{tid: tid, proc: p, rec: model.NewRecorder(e.now())}
	mt := model.Thread{Tid: tid, Process: p.idx, Name: readComm(tid), SpawnedBy: spawnedBy}
	if parent != nil && parent.proc == p {
		mt.ParentTid = parent.tid
		t.level = parent.level + 1
	}
	mt.Level = t.level
	e.prof.Threads = append(e.prof.Threads, mt)
	t.idx = len(e.prof.Threads) - 1
	e.threads[tid] = t
	p.alive++
	e.stats.AllThreads++
	return t
}

// finishThread closes a thread's open activations and stores its CCT.
func (e *engine) finishThread(t *thread) {
	if t.done {
		return
	}
	t.done = true
	nodes, traced := t.rec.Finish(e.now())
	mt := &e.prof.Threads[t.idx]
	mt.Nodes, mt.TracedNs = nodes, traced
	if name := readComm(t.tid); name != "" {
		mt.Name = name
	}
	t.frames = nil
}

// forget drops a thread that is gone.
func (e *engine) forget(t *thread) {
	e.finishThread(t)
	delete(e.threads, t.tid)
	t.proc.alive--
}

// creator reports whether fn is a thread/process creation call, which the
// spawning subroutine skips (§2.3).
func (e *engine) creator(fn int) bool {
	switch e.prof.Functions[fn].Name {
	case "pthread_create", "clone", "clone3", "fork", "vfork", "__libc_fork", "_Fork", "posix_spawn", "posix_spawnp", "system":
		return true
	}
	return false
}

// spawner is the innermost traced function on t's stack that is not a
// creation call, or None.
func (e *engine) spawner(t *thread) int {
	st := t.rec.Stack()
	for i := len(st) - 1; i >= 0; i-- {
		if !e.creator(st[i]) {
			return st[i]
		}
	}
	return model.None
}
