// Package top computes what a live view of a traced process shows: per
// function numbers of the last interval and since attach, from two
// snapshots of the same session (profile top). Pure functions: the
// command draws them on a terminal or writes them as lines.
package top

import (
	"cmp"
	"regexp"
	"slices"
	"time"

	"github.com/profile-dev/profile/model"
)

// Row is one function of a view.
type Row struct {
	Func int // index into the profile's Functions
	// Name is "module:name" for library functions, in full: the JSON
	// lines, the filter, the selection and sort ties go by it.
	Name string
	// Display is Name as the table shows it: shortened (names.Short)
	// unless Options.FullNames.
	Display string
	Module  string

	// Since attach.
	Calls, SelfNs, TotalNs int64
	// In the interval.
	DCalls, DSelfNs, DTotalNs int64
	CallsPerSec               float64
	Share                     float64 // DSelfNs over the interval's traced time
	Threads                   int     // threads that called it in the interval
}

// View is one refresh: the rows of the threads in scope.
type View struct {
	Wall      bool          // measured times, waiting included (else busy times)
	Elapsed   time.Duration // since the session started
	Interval  time.Duration // since the previous snapshot
	Threads   int           // threads in scope with traced time so far
	TracedNs  int64         // since attach, summed over the threads in scope
	DTracedNs int64         // in the interval
	DCalls    int64         // calls in the interval, all functions
	Rows      []Row         // every function called so far, unsorted
	// ThreadList is every thread (ThreadRows), whatever the scope: Refresh
	// fills it.
	ThreadList []ThreadRow
}

// Scope selects the threads a view covers (Tid 0: every thread).
type Scope = model.Scope

// Options are how a view names functions and which times it shows.
type Options struct {
	// FullNames shows full names in Row.Display and Link.Display; by
	// default C++ and Rust names are shortened (names.Short).
	FullNames bool
	// Wall shows the measured times, waiting calls' included (--scope
	// wall); by default busy times (model.Profile.Busy), as summary.
	Wall bool
}

// acc sums one function's numbers over threads.
type acc struct{ calls, self, total int64 }

// threadAcc sums one thread's numbers.
type threadAcc struct {
	name          string
	traced, calls int64
}

// sums are the numbers of the threads in scope: per function, per (tid,
// function) calls, per (pid, tid) thread, and the traced time.
type sums struct {
	funcs    map[int]*acc
	calls    map[[2]int]int64
	byThread map[[2]int]threadAcc
	traced   int64
	threads  int
}

func sum(p *model.Profile, s Scope) sums {
	m := sums{funcs: map[int]*acc{}, calls: map[[2]int]int64{}, byThread: map[[2]int]threadAcc{}}
	if p == nil {
		return m
	}
	for _, tv := range p.ScopeThreads(s) {
		m.traced += tv.TracedNs
		m.threads++
		th := m.byThread[[2]int{tv.Pid, tv.Tid}]
		th.name = tv.Name
		th.traced += tv.TracedNs
		for ni, n := range p.Threads[tv.Thread].Nodes {
			v, ok := p.NodeVec(tv.ThreadRef, ni)
			if !ok || n.Func == model.StartFunc {
				continue
			}
			a := m.funcs[n.Func]
			if a == nil {
				a = &acc{}
				m.funcs[n.Func] = a
			}
			a.calls += v.Calls
			a.self += v.SelfNs
			a.total += v.TotalNs
			m.calls[[2]int{tv.Tid, n.Func}] += v.Calls
			th.calls += v.Calls
		}
		m.byThread[[2]int{tv.Pid, tv.Tid}] = th
	}
	return m
}

// Compute is the view of cur, with the interval since prev (nil: since
// the session started). Both are snapshots of one session, so function
// indices agree.
func Compute(prev, cur *model.Profile, s Scope, opt Options) View {
	was, is := sum(prev, s), sum(cur, s)
	v := View{Elapsed: time.Duration(cur.Meta.DurationNs), Threads: is.threads, TracedNs: is.traced}
	// The interval's traced time, thread by thread: a thread's busy time
	// can fall (a waiting call still open counts as busy until it returns
	// and its time is found blocked), and a thread gone from the scope took
	// nothing in the interval; neither makes the interval's time negative.
	for k, th := range is.byThread {
		v.DTracedNs += max(0, th.traced-was.byThread[k].traced)
	}
	if prev != nil {
		v.Interval = time.Duration(cur.Meta.DurationNs - prev.Meta.DurationNs)
	} else {
		v.Interval = v.Elapsed
	}
	// Threads calling a function in the interval: per-thread deltas.
	dthreads := map[int]int{}
	for k, c := range is.calls {
		if c > was.calls[k] {
			dthreads[k[1]]++
		}
	}
	for f, a := range is.funcs {
		r := Row{Func: f, Name: cur.FuncName(f), Display: cur.DisplayName(f, opt.FullNames),
			Module: cur.ModuleName(cur.Functions[f].Module), Calls: a.calls, SelfNs: a.self, TotalNs: a.total,
			Threads: dthreads[f]}
		if b := was.funcs[f]; b != nil {
			r.DCalls, r.DSelfNs, r.DTotalNs = a.calls-b.calls, a.self-b.self, a.total-b.total
		} else {
			r.DCalls, r.DSelfNs, r.DTotalNs = a.calls, a.self, a.total
		}
		if v.Interval > 0 {
			r.CallsPerSec = float64(r.DCalls) / v.Interval.Seconds()
		}
		if v.DTracedNs > 0 {
			r.Share = float64(r.DSelfNs) / float64(v.DTracedNs)
		}
		v.DCalls += r.DCalls
		v.Rows = append(v.Rows, r)
	}
	return v
}

// Refresh is the view of snapshot cur, with the interval since prev (nil:
// since the session started), in opt's times, with the thread list.
func Refresh(prev, cur *Snapshot, s Scope, opt Options) View {
	v := Compute(prev.Times(opt.Wall), cur.Times(opt.Wall), s, opt)
	v.Wall = opt.Wall
	v.ThreadList = ThreadRows(prev, cur)
	return v
}

// Column is a sort key of the rows.
type Column int

// The columns, in display order.
const (
	ByCallsPerSec Column = iota
	BySelf               // self time in the interval
	ByTotal              // total time in the interval
	ByCalls              // calls since attach
	BySelfAll            // self time since attach
	ByName
	numColumns
)

// Columns is the number of sort keys.
const Columns = int(numColumns)

var columnNames = [...]string{"calls/s", "self", "total", "calls", "self (all)", "function"}

func (c Column) String() string { return columnNames[c] }

// ParseColumn reads a sort key by its name.
func ParseColumn(s string) (Column, bool) {
	for i, n := range columnNames {
		if n == s {
			return Column(i), true
		}
	}
	switch s {
	case "calls-per-sec", "rate":
		return ByCallsPerSec, true
	case "self-all":
		return BySelfAll, true
	case "name":
		return ByName, true
	}
	return 0, false
}

// Sort orders rows by column, largest first (names ascending), ties by
// name so that a view does not flicker.
func Sort(rows []Row, c Column) {
	key := func(r Row) int64 {
		switch c {
		case ByCallsPerSec:
			return r.DCalls
		case BySelf:
			return r.DSelfNs
		case ByTotal:
			return r.DTotalNs
		case ByCalls:
			return r.Calls
		case BySelfAll:
			return r.SelfNs
		}
		return 0
	}
	slices.SortStableFunc(rows, func(a, b Row) int {
		if c != ByName {
			if d := cmp.Compare(key(b), key(a)); d != 0 {
				return d
			}
		}
		return cmp.Compare(a.Name, b.Name)
	})
}

// Filter keeps the rows whose name matches re (nil keeps all).
func Filter(rows []Row, re *regexp.Regexp) []Row {
	if re == nil {
		return rows
	}
	return slices.DeleteFunc(rows, func(r Row) bool { return !re.MatchString(r.Name) })
}
