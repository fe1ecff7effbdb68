package export

import (
	"math"

	"github.com/profile-dev/profile/model"
)

// chromeFlows adds a flow arrow from every spawning thread to the thread
// it spawned and from every forking thread to the forked process's first
// thread. The profile keeps no time of a spawn or fork, so an arrow is
// drawn at the child's first call (0 when it has none): the flow starts
// there on the parent, at a marker naming the child and the spawning
// function (a flow binds to the event enclosing it, and the marker is one
// where the parent runs nothing kept), and ends on the child, bound to its
// first call (or its no-calls marker).
func chromeFlows(p *model.Profile, of []*track) {
	id := 0
	flow := func(cat string, parent, child int, args map[string]any) {
		id++
		from, to := of[parent], of[child]
		ts, after := childStart(p, child, to)
		to.add(after, flowEnd, ts, chromeEvent{Name: cat, Cat: cat, Ph: "f", BP: "e", Ts: at(ts), Pid: to.pid, Tid: to.tid, ID: id})
		from.add(from.firstCall(ts+1)-1, flowStart, ts,
			chromeEvent{Name: cat, Cat: cat, Ph: "i", S: "t", Ts: at(ts), Pid: from.pid, Tid: from.tid, Args: args},
			chromeEvent{Name: cat, Cat: cat, Ph: "s", Ts: at(ts), Pid: from.pid, Tid: from.tid, ID: id})
	}
	for ti := range p.Threads {
		t := &p.Threads[ti]
		if t.ParentTid == 0 {
			continue
		}
		parent := threadOf(p, t.Process, t.ParentTid)
		if parent < 0 {
			continue // not traced
		}
		args := map[string]any{"tid": t.Tid}
		if t.SpawnedBy != model.None {
			args["by"] = p.FuncName(t.SpawnedBy)
		}
		flow(ChromeSpawn, parent, ti, args)
	}
	for pi := range p.Processes {
		pr := &p.Processes[pi]
		if pr.Parent == model.None || pr.ExecOf != model.None {
			continue // a first process, or an image replacing another (same track)
		}
		child := threadOf(p, pi, 0)
		parent := threadOf(p, pr.Parent, pr.ForkedByTid)
		if child < 0 || parent < 0 {
			continue
		}
		args := map[string]any{"pid": pr.Pid}
		if pr.ForkedBy != model.None {
			args["by"] = p.FuncName(pr.ForkedBy)
		}
		flow(ChromeFork, parent, child, args)
	}
}

// threadOf finds the thread tid of process pi, or for tid 0 the process's
// first thread (the one with no parent thread); -1 if none.
func threadOf(p *model.Profile, pi, tid int) int {
	for i := range p.Threads {
		t := &p.Threads[i]
		if t.Process == pi && (tid != 0 && t.Tid == tid || tid == 0 && t.ParentTid == 0) {
			return i
		}
	}
	return -1
}

// childStart is where a flow into thread ti ends: its first call's start
// and the index of that call on its track, or when it has none, the
// track's first call (another image's thread) or the track's no-calls
// marker at 0 (after -1).
func childStart(p *model.Profile, ti int, tr *track) (ts int64, after int) {
	first := int64(math.MaxInt64)
	for _, tree := range p.Threads[ti].Trees {
		for _, c := range tree.Calls {
			first = min(first, c.StartNs)
		}
	}
	switch {
	case first != math.MaxInt64:
	case len(tr.calls) > 0:
		first = tr.calls[0].StartNs
	default:
		return 0, -1
	}
	return first, tr.firstCall(first)
}
