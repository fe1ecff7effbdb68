// Package guard is the profiler's watcher: a process of its own that
// outlives the profiler and, the moment the profiler dies without ending
// its session (SIGKILL, the OOM killer, a crash), puts back the int3s it
// left in its targets' text (heal.Mend).
//
// The targets' own SIGTRAP handler (attach/internal/heal) heals them too,
// but only at a trap, and a thread that blocks SIGTRAP cannot take one:
// the kernel kills the process instead. Until some other thread traps,
// every int3 stays for such a thread to find. The watcher leaves that to
// the milliseconds between the profiler's death and its own writes.
//
// It is the profiler's executable run again with Env set: this package's
// init serves then, before any main, so that every binary that traces
// (the profile command, the tests) can be its own watcher. It talks with
// the profiler over a socket pair: each target's memory (/proc/PID/mem,
// opened by the profiler, so the watcher needs no ptrace rights of its
// own and writes nothing to a process that has exec'd or exited) comes
// with the address of its heal area; a clean end says so. The socket's
// end without that word is the profiler's death.
package guard

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/profile-dev/profile/attach/internal/heal"
	"github.com/profile-dev/profile/attach/internal/procfs"
)

// Env, set to 1 in its environment, makes a binary that imports this
// package the watcher.
const Env = "PROFILE_GUARD"

const (
	opWatch  = 1 // id, heal area base, pid, tracer; the memory's descriptor alongside
	opForget = 2 // id
	opDone   = 3 // the session ended cleanly
	msgSize  = 33
)

func init() {
	if os.Getenv(Env) == "1" {
		os.Exit(serve(3))
	}
}

// ErrLost is a watcher that no longer listens: gone, or stopped with its
// socket full.
var ErrLost = errors.New("watcher lost")

// A Guard is the profiler's side of its watcher.
type Guard struct {
	mu   sync.Mutex
	fd   int // our end of the socket pair; -1 once closed
	proc *os.Process
	next uint64
}

// Start runs the watcher: this process's executable again, in a session
// of its own (a Ctrl-C at the terminal, a signal to the profiler's group,
// do not reach it), with nothing but the socket.
func Start() (*Guard, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("watcher: socket pair: %w", err)
	}
	theirs := os.NewFile(uintptr(fds[1]), "guard")
	defer theirs.Close()
	null, err := os.Open(os.DevNull)
	if err != nil {
		unix.Close(fds[0])
		return nil, fmt.Errorf("watcher: %w", err)
	}
	defer null.Close()
	p, err := os.StartProcess("/proc/self/exe", []string{"profile-guard"}, &os.ProcAttr{
		Env:   []string{Env + "=1"},
		Files: []*os.File{null, null, null, theirs},
		Sys:   &syscall.SysProcAttr{Setsid: true},
	})
	if err != nil {
		unix.Close(fds[0])
		return nil, fmt.Errorf("watcher: %w", err)
	}
	return &Guard{fd: fds[0], proc: p}, nil
}

// Watch gives the watcher the memory of process pid and the heal area at
// base in it; it must be called from the thread that traces pid. It
// returns the id Forget takes.
func (g *Guard) Watch(pid int, base uint64) (uint64, error) {
	mem, err := os.OpenFile(fmt.Sprintf("/proc/%d/mem", pid), os.O_RDWR, 0)
	if err != nil {
		return 0, fmt.Errorf("watcher: %w", err) // the process, not the watcher
	}
	defer mem.Close()
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.fd < 0 {
		return 0, ErrLost
	}
	g.next++
	id := g.next
	if err := g.send(opWatch, id, base, uint64(pid), uint64(unix.Gettid()), unix.UnixRights(int(mem.Fd()))); err != nil {
		return 0, err
	}
	return id, nil
}

// Forget tells the watcher that the process of id is no longer ours:
// detached, exited or exec'd.
func (g *Guard) Forget(id uint64) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.fd < 0 {
		return ErrLost
	}
	return g.send(opForget, id, 0, 0, 0, nil)
}

// Close ends the watcher cleanly: the session left nothing to mend.
func (g *Guard) Close() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.fd < 0 {
		return nil
	}
	err := g.send(opDone, 0, 0, 0, 0, nil)
	if err != nil {
		g.proc.Kill() // it would take the socket's end for our death
	}
	unix.Close(g.fd)
	g.fd = -1
	// Reaped by whoever waits first: this, or the tracer's wait for any
	// child, which takes a child it does not know for gone.
	go g.proc.Wait()
	return err
}

func (g *Guard) send(op byte, id, base, pid, tracer uint64, oob []byte) error {
	var m [msgSize]byte
	m[0] = op
	binary.LittleEndian.PutUint64(m[1:], id)
	binary.LittleEndian.PutUint64(m[9:], base)
	binary.LittleEndian.PutUint64(m[17:], pid)
	binary.LittleEndian.PutUint64(m[25:], tracer)
	// Never wait for it (a watcher someone stopped would hold the tracer
	// once its socket is full) and take no SIGPIPE from a dead one.
	for {
		err := unix.Sendmsg(g.fd, m[:], oob, nil, unix.MSG_DONTWAIT|unix.MSG_NOSIGNAL)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("%w: %w", ErrLost, err)
		}
		return nil
	}
}

// Abandon ends a watcher that stopped listening without its mending
// anything: it is killed before its socket ends.
func (g *Guard) Abandon() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.fd < 0 {
		return
	}
	g.proc.Kill()
	unix.Close(g.fd)
	g.fd = -1
	go g.proc.Wait()
}

// watched is one process the watcher mends should the profiler die:
// its memory, its heal area, and the thread that traced it.
type watched struct {
	mem         *os.File
	base        uint64
	pid, tracer int
}

// serve is the watcher: it keeps what the profiler gives it until the
// profiler says it is done (exit 0) or dies (mend every process, exit 0).
func serve(fd int) int {
	// Its own session keeps the terminal's signals away; these too.
	signal.Ignore(unix.SIGINT, unix.SIGHUP, unix.SIGQUIT, unix.SIGPIPE)
	ws := map[uint64]watched{}
	buf := make([]byte, 64)
	oob := make([]byte, unix.CmsgSpace(4))
	for {
		n, oobn, _, _, err := unix.Recvmsg(fd, buf, oob, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n == 0 {
			break // the profiler is gone
		}
		if n != msgSize {
			continue
		}
		id, base := binary.LittleEndian.Uint64(buf[1:]), binary.LittleEndian.Uint64(buf[9:])
		pid, tracer := int(binary.LittleEndian.Uint64(buf[17:])), int(binary.LittleEndian.Uint64(buf[25:]))
		switch buf[0] {
		case opWatch:
			if f := received(oob[:oobn]); f != nil {
				ws[id] = watched{f, base, pid, tracer}
			}
		case opForget:
			if w, ok := ws[id]; ok {
				w.mem.Close()
				delete(ws, id)
			}
		case opDone:
			return 0
		}
	}
	for _, w := range ws {
		w.mend()
	}
	return 0
}

// detachWait is how long the watcher waits for the kernel to detach a
// dead tracer's process: it does so right after the tracer's files
// close, which is how the watcher learnt of the death.
const detachWait = 2 * time.Second

// mend puts w's breakpoints back once its dead tracer no longer holds it,
// unless another tracer took it meanwhile: a profiler attached again (a
// supervisor restarting a killed one) reclaims what this one left, and
// writes of ours under its feet could undo its own probes, or tear a
// patch it is writing.
func (w watched) mend() {
	for start := time.Now(); ; time.Sleep(time.Millisecond) {
		st := procfs.Status(w.pid)
		if st == nil {
			return // gone
		}
		tp, _ := strconv.Atoi(st["TracerPid"])
		if tp == 0 {
			break
		}
		if tp != w.tracer || time.Since(start) > detachWait {
			return
		}
	}
	heal.Mend(&untraced{File: w.mem, pid: w.pid, checked: time.Now()}, w.base)
}

// recheck is how often the mend looks again whether a tracer took the
// process: a profiler writes its first probe some hundred ms after it
// seized a process, and the mend's writes must not wait on /proc one
// byte at a time (trap probes: thousands of breakpoints).
const recheck = 5 * time.Millisecond

// untraced is a process's memory, written only while no tracer holds it
// (looked at again every recheck).
type untraced struct {
	*os.File
	pid     int
	checked time.Time
}

func (u *untraced) WriteAt(p []byte, off int64) (int, error) {
	if time.Since(u.checked) > recheck {
		if procfs.TracerOf(u.pid) != 0 {
			return 0, errTraced
		}
		u.checked = time.Now()
	}
	return u.File.WriteAt(p, off)
}

var errTraced = errors.New("traced by another")

// received is the descriptor a message carried, or nil.
func received(oob []byte) *os.File {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil
	}
	for _, m := range msgs {
		if fds, err := unix.ParseUnixRights(&m); err == nil && len(fds) == 1 {
			return os.NewFile(uintptr(fds[0]), "mem")
		}
	}
	return nil
}
