package attach

import (
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/profile-dev/profile/attach/internal/procfs"
	"github.com/profile-dev/profile/attach/internal/ptrace"
	"github.com/profile-dev/profile/instrument"
	"github.com/profile-dev/profile/model"
)

// spawned handles a clone, fork or vfork of t that created task child.
func (e *engine) spawned(t *thread, child int, ev int) {
	if _, ok := e.early[child]; ok {
		delete(e.early, child)
	} else if ws, err := ptrace.Wait(child); err != nil || !ws.Stopped() {
		return // killed before its first stop: gone
	}
	isThread := ev == unix.PTRACE_EVENT_CLONE && procfs.Tgid(child) == t.proc.pid
	shared := ev == unix.PTRACE_EVENT_VFORK || (!isThread && e.sharesMemory(child, t))
	if isThread || shared {
		// A new task in t's memory: the owner words name no thread until
		// the next look (it may have a gone owner's thread pointer, or, a
		// vfork child, its parent's).
		e.disarmFast(t.proc.as, t.tid)
	}
	if isThread {
		nt := e.newThread(child, t.proc, t, e.s.Spawner(t.st))
		if e.detaching {
			// Created as we let go: it has run nothing yet, and its
			// first stop is one to detach from.
			nt.stopped = true
			return
		}
		e.threadAppeared(nt)
		if e.pausing {
			nt.stopped = true // it has run nothing yet: resumeAll lets it go
			return
		}
		e.resume(nt, 0)
		return
	}
	if (e.opt.NoFollowFork || e.detaching) && !shared {
		// Clean the child's copy of every breakpoint and probe, then let
		// it go.
		for _, b := range t.proc.as.bps {
			ptrace.PokeText(child, b.Addr, []byte{b.Orig})
		}
		e.releaseInlineChild(t, child)
		c := t.proc.as.chain // the child's copy goes, not ours
		c.Remove(child)
		ptrace.Detach(child, 0)
		return
	}
	as := t.proc.as // shared until the child execs
	if !shared {
		as = as.clone()
	}
	np := e.newProcess(child, as, t, e.s.Spawner(t.st), nil)
	e.watchHeal(child, as) // a fork's copy of the area
	// A vfork child shares its parent's breakpoints, so it is traced even
	// with --no-follow-fork, but only until it execs.
	np.noFollow = e.opt.NoFollowFork
	nt := e.newThread(child, np, t, model.None)
	if ev == unix.PTRACE_EVENT_VFORK {
		nt.vforkOf = t
	}
	// Fresh accounting: the forking thread's open frames, timed from now,
	// no calls counted.
	e.s.Forked(t.st, nt.st, e.now())
	for _, k := range e.probes {
		k.forked(t, nt, shared)
	}
	if e.pausing {
		nt.stopped = true
		return
	}
	e.resume(nt, 0)
}

// sharesMemory tells whether a new process kept its parent's memory
// (CLONE_VM, as vfork and posix_spawn do): kcmp compares the two mms.
func (e *engine) sharesMemory(child int, t *thread) bool {
	const kcmpVM = 1
	r, _, errno := unix.Syscall6(unix.SYS_KCMP, uintptr(child), uintptr(t.tid), kcmpVM, 0, 0, 0)
	return errno == 0 && r == 0
}

// execed handles PTRACE_EVENT_EXEC: the old image and all its threads are
// gone; a new image with the same pid starts, to be instrumented afresh.
// It reports whether the thread is still ours to resume.
func (e *engine) execed(t *thread) bool {
	pid := t.proc.pid
	old := t.proc
	if former, err := ptrace.EventMsg(pid); err == nil && int(former) != t.tid {
		if ft := e.threads[int(former)]; ft != nil {
			e.forget(ft)
		}
	}
	for _, o := range e.threads {
		if o.proc == old {
			e.forget(o)
		}
	}

	if old.noFollow || e.detaching {
		// Its own image now, free of breakpoints: let it go (a vfork
		// child under --no-follow-fork, or any image as we detach).
		ptrace.Detach(pid, 0)
		return false
	}
	if exe := procfs.Exe(pid); !e.opt.Force && instrument.IsGoProgram(exe) {
		e.warn("pid %d runs %s, a Go program: left untraced (--force traces it)", pid, exe)
		e.s.Warn(fmt.Sprintf("pid %d exec'd %s, a Go program, which was left untraced", pid, baseName(exe)))
		ptrace.Detach(pid, 0)
		return false
	}
	np := e.newProcess(pid, newSpace(), nil, model.None, old)
	nt := e.newThread(pid, np, nil, model.None)
	if err := e.instrumentFresh(nt, true); err != nil {
		e.warn("instrument %s after exec: %v", np.exe, err)
	}
	// event resumes the thread: a second PTRACE_CONT could land in the
	// entry breakpoint's stop and swallow its SIGTRAP.
	return true
}
