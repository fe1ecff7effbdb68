package model

import (
	"fmt"
	"slices"
	"strings"
)

// Repair fixes in place what a timing measurement can break in a
// structurally valid profile (clocks read apart within a thread, a clock
// stepping back) and returns what it did for Meta.Warnings: one line per
// repaired thread, the threads past the first few summed up in one line;
// nil when nothing needed repair, as for every valid profile. The rules:
//
//   - self times not adding up to the thread's traced time: the traced
//     time is set to their sum. Each self time is a measurement of its
//     own and every function-level number is made of them, while the
//     traced time is one number and which node took the error cannot be
//     told: the sum keeps every node's self time and moves the thread's
//     time by the error alone. (Taking the difference into START's self
//     time instead would put the error in a node, and START's self may
//     be smaller than an excess.) A composite thread's members: see
//     repairMembers;
//   - a node's total above its thread's traced time: clamped to it, the
//     longest a context can have run (a composite node's member shares:
//     see fitContribs);
//   - a detail call ending before it starts: it ends at its start, a
//     call of no measurable length placed where it began.
//
// A profile that breaks a structural invariant is left as it is, for
// Validate to report. Repair replaces, rather than writes into, every
// slice it changes (nodes, member shares, members, detail trees): a
// shallow copy of a profile, as Write makes, is repaired without touching
// the original, whose nodes a running session may share.
func (p *Profile) Repair() []string {
	if p.validateStructure() != nil {
		return nil
	}
	return p.repair()
}

// repair is Repair on a profile known to be structurally valid.
func (p *Profile) repair() []string {
	var done []threadRepair
	for i := range p.Threads {
		if r := repairThread(&p.Threads[i]); r.any() {
			r.thread, r.tid = i, p.Threads[i].Tid
			done = append(done, r)
		}
	}
	return describeRepairs(done)
}

// threadRepair is what Repair did to one thread, for its line.
type threadRepair struct {
	thread, tid  int
	summed       bool  // traced time set to the self times' sum
	self, traced int64 // that sum, and the traced time it replaced
	members      memberRepair
	totals       int   // node totals clamped to the traced time
	totalsOver   int64 // by how much at most
	calls        int   // detail calls ended at their start
	callsOver    int64 // by how much they ended before it at most
}

func (r *threadRepair) any() bool { return r.summed || r.totals > 0 || r.calls > 0 }

// memberRepair is what the sum repair did to a composite thread's members.
type memberRepair int

const (
	noMembers   memberRepair = iota // a recorded thread
	membersSet                      // each member's traced time set to its own sum
	membersKept                     // left as recorded: see repairMembers
)

func repairThread(t *Thread) threadRepair {
	var r threadRepair
	if self := selfSum(t); self != t.TracedNs {
		r.summed, r.self, r.traced = true, self, t.TracedNs
		t.TracedNs = self
		if len(t.Members) > 0 {
			r.members = repairMembers(t)
		}
	}
	cloned := false
	for i := range t.Nodes {
		if t.Nodes[i].TotalNs <= t.TracedNs {
			continue
		}
		total, ok := fitContribs(t, &t.Nodes[i])
		if !ok {
			continue // Validate refuses it: see fitContribs
		}
		if !cloned {
			t.Nodes, cloned = slices.Clone(t.Nodes), true
		}
		n := &t.Nodes[i]
		r.totals++
		r.totalsOver = max(r.totalsOver, n.TotalNs-t.TracedNs)
		if len(n.Contribs) > 0 {
			n.Contribs = slices.Clone(n.Contribs)
			for k := range n.Contribs {
				n.Contribs[k].TotalNs = shareCap(t, n.Contribs[k])
			}
		}
		n.TotalNs = total
	}
	repairTrees(t, &r)
	return r
}

// repairMembers gives a composite thread's members the sum repair of
// their own, so that the thread's traced time stays their sum (as merge
// makes it): each member's traced time becomes its shares' self times.
// That is exact only when every self time of the thread is split by
// member: the time prune folded into DroppedNs is not, so with any of it
// which member's clock erred cannot be told and the members are left as
// recorded. The shares are not changed, so they still add up to the nodes.
func repairMembers(t *Thread) memberRepair {
	self := make([]int64, len(t.Members))
	for i := range t.Nodes {
		n := &t.Nodes[i]
		if n.DroppedNs != 0 || n.SelfNs != 0 && len(n.Contribs) == 0 {
			return membersKept
		}
		for _, c := range n.Contribs {
			self[c.Member] += c.SelfNs
		}
	}
	t.Members = slices.Clone(t.Members)
	for m := range t.Members {
		t.Members[m].TracedNs = self[m]
	}
	return membersSet
}

// fitContribs is the total node n gets when clamped to its thread's traced
// time. A composite node's total is its members' shares, which must still
// add up: each share is cut to its member's traced time (no member's
// share of a context outlasts the member), and the node's total becomes
// their sum. As a composite thread's traced time is its members' sum,
// that always fits; when it does not (ok false) the thread's traced time
// is below its members' sum, which neither a recording (no members) nor
// merge writes: the file is damaged rather than mismeasured, and Validate
// refuses it as structural instead of guessing whose share to cut.
func fitContribs(t *Thread, n *Node) (total int64, ok bool) {
	if len(n.Contribs) == 0 {
		return t.TracedNs, true
	}
	for _, c := range n.Contribs {
		x := shareCap(t, c)
		if x < 0 {
			return 0, false
		}
		total += x
		if total > t.TracedNs { // before any overflow: both are below 2^63
			return 0, false
		}
	}
	return total, true
}

func shareCap(t *Thread, c Contrib) int64 { return min(c.TotalNs, t.Members[c.Member].TracedNs) }

func repairTrees(t *Thread, r *threadRepair) {
	clonedTrees := false
	for i := range t.Trees {
		clonedCalls := false
		for k := range t.Trees[i].Calls {
			if c := &t.Trees[i].Calls[k]; c.EndNs >= c.StartNs {
				continue
			}
			if !clonedTrees {
				t.Trees, clonedTrees = slices.Clone(t.Trees), true
			}
			if !clonedCalls {
				t.Trees[i].Calls, clonedCalls = slices.Clone(t.Trees[i].Calls), true
			}
			c := &t.Trees[i].Calls[k]
			r.calls++
			r.callsOver = max(r.callsOver, c.StartNs-c.EndNs)
			c.EndNs = c.StartNs
		}
	}
}

// shownRepairs is how many threads' repairs are told one by one; more
// are summed up in one line, so that Meta.Warnings stays readable.
const shownRepairs = 3

func describeRepairs(done []threadRepair) []string {
	if len(done) == 0 {
		return nil
	}
	shown := done
	if len(done) > shownRepairs+1 { // a summary of one thread says no less than its line
		shown = done[:shownRepairs]
	}
	out := make([]string, 0, len(shown)+1)
	for i := range shown {
		out = append(out, shown[i].line())
	}
	if rest := done[len(shown):]; len(rest) > 0 {
		out = append(out, summaryLine(rest))
	}
	return out
}

func (r *threadRepair) line() string {
	var parts []string
	if r.summed {
		s := fmt.Sprintf("self times added up to %d ns against a traced time of %d ns (off by %d ns, a measurement error): traced time set to their sum",
			r.self, r.traced, abs(r.self-r.traced))
		switch r.members {
		case membersSet:
			s += ", each member's to the sum of its own"
		case membersKept:
			s += " (its members' kept: the time prune folded away is not split by member)"
		}
		parts = append(parts, s)
	}
	if r.totals > 0 {
		parts = append(parts, fmt.Sprintf("%s above the traced time by up to %d ns (a measurement error): clamped to it",
			count(r.totals, "node total", "node totals"), r.totalsOver))
	}
	if r.calls > 0 {
		parts = append(parts, fmt.Sprintf("%s ending up to %d ns before the start (a measurement error): ended at the start",
			count(r.calls, "detail call", "detail calls"), r.callsOver))
	}
	return fmt.Sprintf("thread %d (tid %d): %s", r.thread, r.tid, strings.Join(parts, "; "))
}

func summaryLine(rest []threadRepair) string {
	var summed, totals, calls int
	var off, totalsOver, callsOver int64
	for _, r := range rest {
		if r.summed {
			summed++
			off = max(off, abs(r.self-r.traced))
		}
		totals += r.totals
		totalsOver = max(totalsOver, r.totalsOver)
		calls += r.calls
		callsOver = max(callsOver, r.callsOver)
	}
	var parts []string
	if summed > 0 {
		parts = append(parts, fmt.Sprintf("traced time set to the sum of the self times in %d (off by up to %d ns)", summed, off))
	}
	if totals > 0 {
		parts = append(parts, fmt.Sprintf("%s clamped to the traced time (above by up to %d ns)", count(totals, "node total", "node totals"), totalsOver))
	}
	if calls > 0 {
		parts = append(parts, fmt.Sprintf("%s ended at the start (ending up to %d ns before it)", count(calls, "detail call", "detail calls"), callsOver))
	}
	return fmt.Sprintf("... and %s (measurement errors): %s", count(len(rest), "more thread", "more threads"), strings.Join(parts, ", "))
}

func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}
