package attach

import (
	"encoding/binary"
	"maps"
	"slices"

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
	slot, registered := pis.tidSlot[parent.tid]
	is := &inlineSpace{data: pis.data, dataLen: pis.dataLen, rings: pis.rings, retstub: pis.retstub,
		stubs: maps.Clone(pis.stubs), patches: maps.Clone(pis.patches), tramps: slices.Clone(pis.tramps),
		slotTable: slotTable{table: maps.Clone(pis.table), used: pis.used,
			slots: map[int]*thread{}, tidSlot: map[int]int{}, tidFS: map[int]uint64{}, next: pis.next}}
	for s := 0; s < pis.next; s++ {
		if !registered || s != slot {
			is.free = append(is.free, s)
		}
	}
	_, mem, err := e.mapRings(child.tid, as.areas[0].base, is.data, is.rings)
	if err != nil {
		// Still sharing its parent's rings: it must not write them.
		e.warn("pid %d: %v: its calls are not traced", child.proc.pid, err)
		e.stopRecording(child.tid, is)
		is.mem = nil
	} else {
		is.mem = mem
		if registered {
			is.slots[slot] = child
			is.tidSlot[child.tid] = slot
			is.tidFS[child.tid] = pis.tidFS[parent.tid]
		}
	}
	// Unregistered threads of the parent do not exist in the child: their
	// table entries must not lead a new thread of the child to a slot.
	for tid := range pis.tidSlot {
		if tid != parent.tid {
			if idx, ok := is.table[pis.tidFS[tid]]; ok {
				var w [8]byte
				ptrace.WriteMem(child.tid, is.data+stub.DTable+uint64(idx)*16+8, w[:])
			}
		}
	}
	as.inl = is
	if is.mem != nil {
		e.inl = append(e.inl, is)
	}
}

// stopRecording makes the stubs of a process record nothing (they still
// keep its return addresses).
func (e *engine) stopRecording(tid int, is *inlineSpace) {
	var w [8]byte
	binary.LittleEndian.PutUint64(w[:], 1)
	ptrace.WriteMem(tid, is.data+stub.DDropping, w[:])
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
	if _, ok := is.tidSlot[parent.tid]; !ok {
		return
	}
	e.registerInline(child) // takes over the thread pointer's table entry
	if _, ok := is.tidSlot[child.tid]; !ok {
		return
	}
	if is.vforks == nil {
		is.vforks = map[int]*thread{}
	}
	is.vforks[child.tid] = parent
}

// vforkDone runs at a vfork parent's VFORK_DONE stop: the child has
// exec'd or exited, its events are all in its ring. The parent gets its
// table entry back.
func (e *engine) vforkDone(parent *thread) {
	is := parent.proc.as.inl
	if is == nil {
		return
	}
	for ctid, p := range is.vforks {
		if p != parent {
			continue
		}
		delete(is.vforks, ctid)
		if slot, ok := is.tidSlot[ctid]; ok {
			e.drainSlot(is, slot)
			e.freeSlot(is, ctid, slot)
		}
		if slot, ok := is.tidSlot[parent.tid]; ok {
			is.insert(parent.tid, is.tidFS[parent.tid], is.state(slot))
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
	for _, ip := range is.patches {
		ptrace.PokeText(child, ip.p.At, ip.p.Orig)
	}
	if slot, ok := is.tidSlot[parent.tid]; ok {
		e.restoreReturnsIn(child, is, slot)
	}
}
