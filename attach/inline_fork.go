package attach

import (
	"encoding/binary"

	"github.com/profile-dev/profile/attach/internal/ptrace"
	"github.com/profile-dev/profile/attach/internal/stub"
)

// spaceInUse tells whether a traced thread still runs in space as.
func (e *engine) spaceInUse(as *space) bool {
	for _, t := range e.threads {
		if t.proc.as == as {
			return true
		}
	}
	return false
}

// forkInline gives a forked child (stopped at its first stop, its space a
// copy of its parent's) rings of its own before it runs: the memfd
// mapping is shared across fork, so a new memfd replaces it at the same
// address. Its data block is a private copy: the forking thread's table
// entry and shadow stack are right for the child as they are.
func (e *engine) forkInline(parent, child *thread) {
	pis := parent.proc.as.inl
	if pis == nil {
		return
	}
	as := child.proc.as
	slot, registered := pis.TidSlot[parent.tid]
	keep := -1
	if registered {
		keep = slot
	}
	is := pis.Fork(keep)
	_, mem, err := e.mapRings(child.tid, as.areas[0].base, is.Data, is.Rings)
	if err != nil {
		// Still sharing its parent's rings: it must not write them.
		e.warn("pid %d: %v: its calls are not traced", child.proc.pid, err)
		e.stopRecording(child.tid, is)
		is.Mem = nil
	} else {
		is.Mem = mem
		if registered {
			is.Assign(slot, child.tid, pis.TidFS[parent.tid], child)
		}
	}
	// Unregistered threads of the parent do not exist in the child: their
	// table entries must not lead a new thread of the child to a slot.
	for tid := range pis.TidSlot {
		if tid != parent.tid {
			if at, ok := is.StateOf(pis.TidFS[tid]); ok {
				var w [8]byte
				ptrace.WriteMem(child.tid, at, w[:])
			}
		}
	}
	as.inl = is
	as.fast = e.forkFast(parent.proc.as.fast, parent, child, as, is)
	if is.Mem != nil {
		e.inl = append(e.inl, is)
	}
}

// stopRecording makes the stubs of a process record nothing (they still
// keep its return addresses).
func (e *engine) stopRecording(tid int, is *inlineSpace) {
	var w [8]byte
	binary.LittleEndian.PutUint64(w[:], 1)
	ptrace.WriteMem(tid, is.Data+stub.DDropping, w[:])
}

// vforkInline: a vfork child (or a CLONE_VM one, as posix_spawn makes)
// runs on its parent's memory and thread pointer until it execs or exits,
// while the parent waits in the kernel. Its events are its own: its
// parent's table entry leads to a ring and shadow stack of the child's
// until the parent's VFORK_DONE stop, where the parent's come back before
// it runs again.
func (e *engine) vforkInline(parent, child *thread) {
	is := parent.proc.as.inl
	if is == nil {
		return
	}
	if _, ok := is.TidSlot[parent.tid]; !ok {
		return
	}
	e.registerInline(child) // takes over the thread pointer's table entry
	if _, ok := is.TidSlot[child.tid]; !ok {
		return
	}
	if is.VForks == nil {
		is.VForks = map[int]*thread{}
	}
	is.VForks[child.tid] = parent
}

// vforkDone runs at a vfork parent's VFORK_DONE stop: the child has
// exec'd or exited, its events are all in its ring. The parent gets its
// table entry back.
func (e *engine) vforkDone(parent *thread) {
	is := parent.proc.as.inl
	if is == nil {
		return
	}
	for ctid, p := range is.VForks {
		if p != parent {
			continue
		}
		delete(is.VForks, ctid)
		if slot, ok := is.TidSlot[ctid]; ok {
			e.drainSlot(is, slot)
			e.freeSlot(is, ctid, slot)
		}
		if slot, ok := is.TidSlot[parent.tid]; ok {
			is.Insert(is.TidFS[parent.tid], is.State(slot), ptrace.Mem(parent.tid).Write)
		}
	}
}

// releaseInlineChild cleans a forked child that is not followed: its
// functions get their bytes back, the forking thread's stack its return
// addresses, and its stubs (should any run) record nothing, since its
// rings are still its parent's.
func (e *engine) releaseInlineChild(parent *thread, child int) {
	is := parent.proc.as.inl
	if is == nil {
		return
	}
	e.stopRecording(child, is)
	// Every change, the call sites re-aimed at their own fast paths too:
	// they would count the child's calls in its parent's counters, as the
	// owner's (the child has its thread pointer).
	for _, c := range is.Changes() {
		ptrace.PokeText(child, c.At, c.Orig)
	}
	if slot, ok := is.TidSlot[parent.tid]; ok {
		e.restoreReturnsIn(child, is, slot)
	}
}
