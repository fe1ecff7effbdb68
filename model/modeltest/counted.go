package modeltest

import "github.com/profile-dev/profile/model"

// Count adds calls counted by a counting probe (record --counted) to
// thread ti: calls of callee from caller's code ("": code of no function
// of the profile). The callee becomes a ProbeCounted function.
func (b *Builder) Count(ti int, caller, callee string, calls int64) {
	c := model.None
	if caller != "" {
		c = b.Func(caller)
	}
	f := b.Func(callee)
	b.P.Functions[f].Probe = model.ProbeCounted
	t := &b.P.Threads[ti]
	t.Arcs = model.SortArcs(append(t.Arcs, model.Arc{Caller: c, Callee: f, Calls: calls}))
}

// Counted is Sample with two counted functions, in no CCT: hash, called
// by main (thread 100, where main is the thread's first subroutine: 7),
// by itself (thread 100: 5, recursive), by compute (thread 101: 4, thread
// 102: 2), by code of no function (thread 101: 3) and by child_work (the
// forked child's thread 200: 1); and checksum, called by hash (thread
// 200: 2).
func Counted() *model.Profile {
	b := sample()
	b.Count(0, "main", "hash", 7)
	b.Count(0, "hash", "hash", 5)
	b.Count(1, "compute", "hash", 4)
	b.Count(1, "", "hash", 3)
	b.Count(2, "compute", "hash", 2)
	b.Count(3, "child_work", "hash", 1)
	b.Count(3, "hash", "checksum", 2)
	return b.P
}
