package top

import (
	"regexp"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/profile-dev/profile/model"
	"github.com/profile-dev/profile/model/modeltest"
)

// live is one thread recorded tick by tick, snapshotted like a session:
// each tick is main -> tick -> (hot, light x3), hot taking 600 ns of
// its own, every other function 10 ns.
type live struct {
	b            *modeltest.Builder
	r            *model.Recorder
	now          int64
	main, tk     int
	hot, light   int
	ticks, snaps int
}

func newLive() *live {
	l := &live{b: modeltest.NewBuilder("/bin/rate"), now: 0}
	l.b.Process(7, model.None, "", 0)
	l.main, l.tk, l.hot, l.light = l.b.Func("main"), l.b.Func("tick"), l.b.Func("hot"), l.b.Func("light")
	l.r = model.NewRecorder(0)
	l.r.Enter(l.main, 0, model.KindDirect)
	return l
}

func (l *live) step(dt int64) int64 { l.now += dt; return l.now }

// run makes n ticks.
func (l *live) run(n int) {
	for i := 0; i < n; i++ {
		l.r.Enter(l.tk, l.step(10), model.KindDirect)
		l.r.Enter(l.hot, l.step(10), model.KindDirect)
		l.r.Exit(l.step(600))
		for j := 0; j < 3; j++ {
			l.r.Enter(l.light, l.step(10), model.KindDirect)
			l.r.Exit(l.step(10))
		}
		l.r.Exit(l.step(10))
		l.ticks++
	}
}

// snapshot is the profile so far, as Session.Snapshot makes it.
func (l *live) snapshot() *model.Profile {
	p := *l.b.P
	nodes, traced := l.r.Snapshot(l.now)
	p.Threads = []model.Thread{{Tid: 7, Process: 0, Name: "rate", SpawnedBy: model.None, TracedNs: traced, Nodes: nodes}}
	p.Meta.DurationNs = l.now
	return &p
}

func row(t *testing.T, v View, name string) Row {
	t.Helper()
	for _, r := range v.Rows {
		if r.Name == name {
			return r
		}
	}
	t.Fatalf("no row %q in %+v", name, v.Rows)
	return Row{}
}

func TestComputeIntervalAndSinceAttach(t *testing.T) {
	l := newLive()
	l.run(100)
	first := l.snapshot()
	l.run(250)
	second := l.snapshot()

	v := Compute(first, second, Scope{}, Options{})
	hot := row(t, v, "hot")
	if hot.DCalls != 250 || hot.Calls != 350 || hot.DSelfNs != 250*600 || hot.SelfNs != 350*600 {
		t.Fatalf("hot %+v", hot)
	}
	light := row(t, v, "light")
	if light.DCalls != 750 || light.Threads != 1 {
		t.Fatalf("light %+v", light)
	}
	if v.Interval != time.Duration(second.Meta.DurationNs-first.Meta.DurationNs) {
		t.Fatalf("interval %v", v.Interval)
	}
	if want := 250 / v.Interval.Seconds(); hot.CallsPerSec != want {
		t.Fatalf("hot calls/s %v, want %v", hot.CallsPerSec, want)
	}
	if want := float64(250*600) / float64(v.DTracedNs); hot.Share != want {
		t.Fatalf("hot share %v, want %v", hot.Share, want)
	}
	// The first view counts from the start.
	v0 := Compute(nil, first, Scope{}, Options{})
	if r := row(t, v0, "tick"); r.DCalls != 100 || r.Calls != 100 {
		t.Fatalf("first tick %+v", r)
	}
	// Another thread's scope has nothing.
	if v := Compute(first, second, Scope{Tid: 8}, Options{}); len(v.Rows) != 0 || v.Threads != 0 {
		t.Fatalf("tid 8: %+v", v)
	}
}

// The interval calls of every view add up to the last one's counts.
func TestIntervalsAddUp(t *testing.T) {
	l := newLive()
	var prev *model.Profile
	sum := map[string]int64{}
	for _, n := range []int{3, 0, 17, 1, 40} {
		l.run(n)
		cur := l.snapshot()
		for _, r := range Compute(prev, cur, Scope{}, Options{}).Rows {
			sum[r.Name] += r.DCalls
		}
		prev = cur
	}
	for _, r := range Compute(nil, prev, Scope{}, Options{}).Rows {
		if sum[r.Name] != r.Calls {
			t.Errorf("%s: intervals sum to %d, counts %d", r.Name, sum[r.Name], r.Calls)
		}
	}
	if sum["tick"] != 61 || sum["light"] != 183 {
		t.Fatalf("sums %v", sum)
	}
}

func TestSortAndFilter(t *testing.T) {
	l := newLive()
	l.run(10)
	v := Compute(nil, l.snapshot(), Scope{}, Options{})
	names := func(rows []Row) string {
		var s []string
		for _, r := range rows {
			s = append(s, r.Name)
		}
		return strings.Join(s, " ")
	}
	for _, c := range []struct {
		col  Column
		want string
	}{
		{BySelf, "hot tick light main"},
		{ByCallsPerSec, "light hot tick main"},
		{ByName, "hot light main tick"},
	} {
		Sort(v.Rows, c.col)
		if got := names(v.Rows); got != c.want {
			t.Errorf("by %s: %s, want %s", c.col, got, c.want)
		}
	}
	if got := names(Filter(v.Rows, regexp.MustCompile("^(hot|main)$"))); got != "hot main" {
		t.Errorf("filter: %s", got)
	}
}

func TestNeighbours(t *testing.T) {
	l := newLive()
	l.run(5)
	first := l.snapshot()
	l.run(7)
	callers, callees := Neighbours(first, l.snapshot(), Scope{}, l.tk, Options{})
	if len(callers) != 1 || callers[0].Name != "main" || callers[0].DCalls != 7 || callers[0].Calls != 12 {
		t.Fatalf("callers %+v", callers)
	}
	if len(callees) != 2 || callees[0].Name != "light" || callees[0].DCalls != 21 || callees[1].Name != "hot" || callees[1].DCalls != 7 {
		t.Fatalf("callees %+v", callees)
	}
}

func key(s string) tea.KeyMsg { return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s)} }

func TestScreenKeys(t *testing.T) {
	l := newLive()
	quits, saves := 0, 0
	scr := NewScreen(Actions{Quit: func() { quits++ }, Save: func(*model.Profile) (string, error) {
		saves++
		return "out.1", nil
	}}, BySelf, Options{}, Tasks{})
	scr.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	if !strings.Contains(scr.View(), "waiting for the first snapshot") {
		t.Fatal(scr.View())
	}
	l.run(10)
	scr.Update(SnapshotMsg{Profile: l.snapshot(), Header: Header{Pid: 7, Exe: "rate"}})
	l.run(20)
	scr.Update(SnapshotMsg{Profile: l.snapshot(), Header: Header{Pid: 7, Exe: "rate"}})
	// The first row's name and calls since attach.
	firstRow := func() string {
		lines := strings.Split(scr.View(), "\n")
		f := strings.Fields(lines[4]) // after title, flags, filter line, column titles
		return f[len(f)-1] + " " + f[5]
	}
	if r := firstRow(); r != "hot 30" {
		t.Fatalf("first row %q in\n%s", r, scr.View())
	}
	scr.Update(key(">")) // total
	scr.Update(key(">")) // calls
	if !strings.Contains(scr.View(), "sort calls ") || firstRow() != "light 90" {
		t.Fatalf("after > >:\n%s", scr.View())
	}
	scr.Update(key("c"))
	if v := scr.View(); !strings.Contains(v, "callers of hot") || !strings.Contains(v, "tick") {
		t.Fatalf("links:\n%s", v)
	}
	scr.Update(key("/"))
	for _, r := range "^hot$" {
		scr.Update(key(string(r)))
	}
	scr.Update(tea.KeyMsg{Type: tea.KeyEnter})
	if v := scr.View(); strings.Contains(v, "light") && !strings.Contains(v, "callers of hot") || !strings.Contains(v, "filter ^hot$") {
		t.Fatalf("filtered:\n%s", v)
	}
	scr.Update(key("p"))
	l.run(5)
	scr.Update(SnapshotMsg{Profile: l.snapshot(), Header: Header{Pid: 7}})
	if v := scr.View(); !strings.Contains(v, "PAUSED") || firstRow() != "hot 30" {
		t.Fatalf("paused:\n%s", v)
	}
	scr.Update(key("p"))
	if r := firstRow(); r != "hot 35" {
		t.Fatalf("resumed: %q", r)
	}
	scr.Update(key("s"))
	scr.Update(key("q"))
	if saves != 1 || quits != 1 || !strings.Contains(scr.View(), "detaching") {
		t.Fatalf("saves %d quits %d\n%s", saves, quits, scr.View())
	}
	if _, cmd := scr.Update(DoneMsg{Text: "detached"}); cmd == nil {
		t.Fatal("DoneMsg does not quit")
	}
}

// The interval's traced time adds up each thread's growth: a thread whose
// busy time fell (a waiting call found blocked once it returned) or that
// left the scope adds nothing, rather than make the interval negative.
func TestIntervalTracedNeverNegative(t *testing.T) {
	snap := func(traced map[int]int64) *model.Profile {
		b := modeltest.NewBuilder("/bin/rate")
		b.Process(7, model.None, "", 0)
		p := *b.P
		for tid, ns := range traced {
			p.Threads = append(p.Threads, model.Thread{Tid: tid, Process: 0, SpawnedBy: model.None, TracedNs: ns,
				Nodes: []model.Node{{Func: model.StartFunc, Parent: model.None}}})
		}
		return &p
	}
	for _, c := range []struct {
		prev, cur map[int]int64
		want      int64
	}{
		{map[int]int64{7: 100, 8: 50}, map[int]int64{7: 130, 8: 60}, 40},
		{map[int]int64{7: 100, 8: 50}, map[int]int64{7: 80, 8: 60}, 10},
		{map[int]int64{7: 100, 8: 50}, map[int]int64{7: 120}, 20},
		{map[int]int64{7: 100}, map[int]int64{7: 100, 9: 30}, 30},
	} {
		if got := Compute(snap(c.prev), snap(c.cur), Scope{}, Options{}).DTracedNs; got != c.want {
			t.Errorf("%v then %v: interval traced %d, want %d", c.prev, c.cur, got, c.want)
		}
	}
}

// The title counts the traced threads live, and the profile's threads in
// the final view, which comes after the detach.
func TestTitleThreads(t *testing.T) {
	v := View{Threads: 5}
	for _, c := range []struct {
		h    Header
		want string
	}{
		{Header{Pid: 7, Exe: "rate", Threads: 3}, "  threads 3  "},
		{Header{Pid: 7, Exe: "rate", Threads: 0, Final: true}, "  threads 5  "},
	} {
		if got := Title(c.h, v); !strings.Contains(got, c.want) {
			t.Errorf("Title(%+v) = %q, want %q in it", c.h, got, c.want)
		}
	}
}
