package model

import "strconv"

// Thread numbers, for the "0→1" notation (thread 0 spawned or
// forked thread 1): every (member) thread of a profile is numbered by its
// position, Profile.Threads in order and a composite thread's members in
// order, whether or not a scope includes it, so that a number names the
// same thread in every scope and in every report that shows numbers
// (render --threads, summary --threads).

// NumberedThread is one (member) thread with its number.
type NumberedThread struct {
	ThreadView
	Number int
}

// ThreadNumbers holds the numbered threads of one profile.
type ThreadNumbers struct {
	p       *Profile
	Threads []NumberedThread // index = number
	byRef   map[ThreadRef]int
}

// ThreadNumbers numbers p's (member) threads: their position in
// ScopeThreads of the whole profile.
func (p *Profile) ThreadNumbers() *ThreadNumbers {
	all := p.ScopeThreads(Scope{})
	n := &ThreadNumbers{p: p, Threads: make([]NumberedThread, len(all)), byRef: make(map[ThreadRef]int, len(all))}
	for i, v := range all {
		n.Threads[i] = NumberedThread{ThreadView: v, Number: i}
		n.byRef[v.ThreadRef] = i
	}
	return n
}

// InScope lists the threads that scope s includes, by number.
func (n *ThreadNumbers) InScope(s Scope) []NumberedThread {
	var out []NumberedThread
	for _, t := range n.Threads {
		if s.match(t.Pid, t.Tid) {
			out = append(out, t)
		}
	}
	return out
}

// Number is thread r's number, -1 if the profile has no such thread. A
// whole composite thread (Member None: a fork's child in a merged
// profile) has its first member's number.
func (n *ThreadNumbers) Number(r ThreadRef) int {
	if k, ok := n.byRef[r]; ok {
		return k
	}
	if k, ok := n.byRef[ThreadRef{r.Thread, 0}]; ok && r.Member == None {
		return k
	}
	return -1
}

// Creator is the number of the thread that created thread num through an
// edge of kind: for a spawn its parent thread, for a fork the thread that
// forked its process, both of the same run. It is -1 when num is -1 or
// that thread is not in the profile.
func (n *ThreadNumbers) Creator(num int, kind EdgeKind) int {
	if num < 0 || num >= len(n.Threads) {
		return -1
	}
	t := &n.Threads[num]
	pid, tid := t.Pid, t.ParentTid
	if kind == EdgeFork {
		pr := n.p.Processes[n.p.Threads[t.Thread].Process]
		pid, tid = n.p.parentPid(pr), pr.ForkedByTid
	}
	for i := range n.Threads {
		if c := &n.Threads[i]; c.Run == t.Run && c.Pid == pid && c.Tid == tid {
			return i
		}
	}
	return -1
}

// ThreadLabel shows thread number n, "?" for -1 (a thread not in the
// profile).
func ThreadLabel(n int) string {
	if n < 0 {
		return "?"
	}
	return strconv.Itoa(n)
}

// CreationLabel is the notation "0→1": thread creator created
// thread n.
func CreationLabel(creator, n int) string { return ThreadLabel(creator) + "→" + ThreadLabel(n) }
