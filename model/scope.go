package model

import (
	"fmt"
	"iter"
)

// The walk over a scope's threads, written once. A scope (one thread, one
// process, or everything) covers (member) threads: a recorded thread, or
// one member of a composite thread after merge, whose numbers are its
// Contribs. The call graph, thread numbers, waiting time, summary and
// render all visit a scope through ScopeThreads and Contexts.

// ThreadView is one (member) thread with the facts of its own: a recorded
// thread's, or a composite thread's member's.
type ThreadView struct {
	ThreadRef
	Run       int // index into Meta.Sources; 0 for a recorded thread
	Pid, Tid  int
	ParentTid int // 0 for a process's first thread
	SpawnedBy int // function index of the spawning subroutine, None if none
	Level     int // nesting level
	Name      string
	TracedNs  int64
}

// ScopeThreads lists the (member) threads scope s includes, in profile
// order: Profile.Threads in order, a composite thread's members in order.
func (p *Profile) ScopeThreads(s Scope) []ThreadView {
	var out []ThreadView
	for ti := range p.Threads {
		t := &p.Threads[ti]
		if len(t.Members) == 0 {
			pid := p.Processes[t.Process].Pid
			if s.match(pid, t.Tid) {
				out = append(out, ThreadView{ThreadRef: ThreadRef{ti, None}, Pid: pid, Tid: t.Tid, ParentTid: t.ParentTid,
					SpawnedBy: t.SpawnedBy, Level: t.Level, Name: t.Name, TracedNs: t.TracedNs})
			}
			continue
		}
		for mi := range t.Members {
			m := &t.Members[mi]
			if s.match(m.Pid, m.Tid) {
				out = append(out, ThreadView{ThreadRef: ThreadRef{ti, mi}, Run: m.Run, Pid: m.Pid, Tid: m.Tid,
					ParentTid: m.ParentTid, SpawnedBy: m.SpawnedBy, Level: m.Level, Name: m.Name, TracedNs: m.TracedNs})
			}
		}
	}
	return out
}

// CheckScope is Scope.NotFound when scope s is not the whole profile and
// matches none of p's (member) threads, else nil.
func (p *Profile) CheckScope(s Scope) error {
	if s != (Scope{}) && len(p.ScopeThreads(s)) == 0 {
		return s.NotFound()
	}
	return nil
}

// NodeVec is CCT node i of thread r as that (member) thread saw it: the
// whole node for a recorded thread, the member's contribution in a
// composite. ok is false for a context the member never reached, and for
// one CPU samples alone made (Node.SampleOnly) while its numbers are the
// measured ones: it has none. The root is always reached.
func (p *Profile) NodeVec(r ThreadRef, i int) (v Vec, ok bool) {
	n := &p.Threads[r.Thread].Nodes[i]
	v = nodeVec(n, r.Member)
	if i == 0 || v != (Vec{}) {
		return v, true
	}
	return v, r.Member == None && !n.SampleOnly(None)
}

// SampleOnly reports whether node n (member m's share of it, or the whole
// node for None) was made by CPU samples alone: sampled time but no
// activation, as Recorder.Sample makes for a function without frames (a
// counted one). Busy gives it a self time; measured, it has none. A root
// (START) is never one: it has the thread's time outside any function.
func (n *Node) SampleOnly(m int) bool {
	if n.Func == StartFunc || n.InFlight != 0 {
		return false
	}
	if m == None {
		return n.Calls == 0 && n.SampledNs+n.DroppedSampledNs > 0
	}
	for _, c := range n.Contribs {
		if c.Member == m {
			return c.Calls == 0 && c.SampledNs+c.DroppedSampledNs > 0
		}
	}
	return false
}

// Context is one CCT node of a (member) thread.
type Context struct {
	Index int   // into Thread.Nodes
	Node  *Node // the node; its numbers are the whole composite's
	Key   Key   // its node in the function-level graph
	Vec         // the (member) thread's numbers
}

// ContextKey is the graph key of node i of thread t: a thread's first
// subroutine is keyed with the thread's nesting level (a function only
// sampled there, never called, is none).
func (t *Thread) ContextKey(i int) Key {
	n := &t.Nodes[i]
	if i > 0 && n.Parent == 0 && !n.SampleOnly(None) {
		return Key{n.Func, t.Level}
	}
	return Key{n.Func, None}
}

// Contexts yields the contexts of thread r that r reached, in node order
// (parents before children), the root first.
func (p *Profile) Contexts(r ThreadRef) iter.Seq[Context] {
	return func(yield func(Context) bool) {
		t := &p.Threads[r.Thread]
		for i := range t.Nodes {
			v, ok := p.NodeVec(r, i)
			if !ok {
				continue
			}
			if !yield(Context{Index: i, Node: &t.Nodes[i], Key: t.ContextKey(i), Vec: v}) {
				return
			}
		}
	}
}

// Only is p with the recorded threads of scope s alone (the whole profile
// for the whole scope): what writers that take whole threads (the
// exports) give a scope. A composite thread (merge) whose members s
// divides is an error: its stacks are one.
func (p *Profile) Only(s Scope) (*Profile, error) {
	if s == (Scope{}) {
		return p, nil
	}
	if err := p.CheckScope(s); err != nil {
		return nil, err
	}
	in := map[int]int{} // thread index -> its (member) threads in s
	for _, v := range p.ScopeThreads(s) {
		in[v.Thread]++
	}
	out := *p
	out.Threads = nil
	for ti := range p.Threads {
		t := &p.Threads[ti]
		switch n := in[ti]; {
		case n == 0:
		case len(t.Members) > 1 && n < len(t.Members):
			return nil, fmt.Errorf("%s: thread %d of this merged profile combines %d threads of its runs; it cannot be divided", s, t.Tid, len(t.Members))
		default:
			out.Threads = append(out.Threads, *t)
		}
	}
	return &out, nil
}
