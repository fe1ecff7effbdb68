package export

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/profile-dev/profile/export/chrometest"
	"github.com/profile-dev/profile/internal/golden"
	"github.com/profile-dev/profile/model"
	"github.com/profile-dev/profile/model/modeltest"
)

const (
	kept     = model.DetailKept | model.DetailArgs | model.DetailReturned
	ancestor = model.DetailReturned
)

// detailed is modeltest.Sample with detail trees: pid 100's threads 100
// (three trees under a shared main, one of them a recursion entered twice
// in one nanosecond), 101 (an ancestor still open at the end) and 102
// (none) and 103 (none, spawned by 102); pid 200, forked by 100, with in-flight ancestors and a call left
// without returning, then an exec to /bin/other on the same thread.
func detailed(t testing.TB) *model.Profile {
	p := modeltest.Sample()
	p.Meta.Mode, p.Meta.StartUnixNs, p.Meta.DurationNs = "record", 1_700_000_000_123_456_789, 5_000
	p.Meta.Detail = &model.DetailRule{Funcs: "worker|compute|fib|do_fork|child_work|other_main", SlowNs: 10, Limit: 100}
	fn := func(name string) int {
		for i := range p.Functions {
			if p.FuncName(i) == name {
				return i
			}
		}
		p.Functions = append(p.Functions, model.Function{Module: p.Functions[funcIndex(t, p, "main")].Module, Name: name})
		return len(p.Functions) - 1
	}
	main := model.DetailCall{Func: fn("main"), Depth: 0, StartNs: 1100, EndNs: 2005, Flags: ancestor, NArgs: -1}
	tree := func(calls ...model.DetailCall) model.DetailTree { return model.DetailTree{Calls: calls} }
	p.Threads[0].Trees = []model.DetailTree{
		tree(main, model.DetailCall{Func: fn("fib"), Depth: 1, StartNs: 1150, EndNs: 1210, Args: [6]uint64{3, 99}, Ret: 2, Flags: kept, NArgs: 1},
			model.DetailCall{Func: fn("fib"), Depth: 2, StartNs: 1150, EndNs: 1180, Args: [6]uint64{2}, Ret: 1, Flags: kept, NArgs: 1}),
		tree(main, model.DetailCall{Func: fn("worker"), Depth: 1, StartNs: 1705, EndNs: 1905, Args: [6]uint64{7, 8, 9}, Ret: 5, Flags: kept, NArgs: 2}),
		tree(main, model.DetailCall{Func: fn("do_fork"), Depth: 1, StartNs: 1960, EndNs: 1990, Flags: kept, NArgs: -1,
			Args: [6]uint64{0xffffffff, 0x7ffd12345678, 1 << 31, 0, 1, 2}, Ret: ^uint64(0)}),
	}
	p.Threads[1].Trees = []model.DetailTree{
		tree(model.DetailCall{Func: fn("worker"), StartNs: 1003, EndNs: 5000, Flags: model.DetailOpen, NArgs: -1},
			model.DetailCall{Func: fn("compute"), Depth: 1, StartNs: 1020, EndNs: 1320, Args: [6]uint64{300}, Ret: 3, Flags: kept, NArgs: 1}),
	}
	p.Threads[3].Trees = []model.DetailTree{
		tree(model.DetailCall{Func: fn("main"), StartNs: 1000, EndNs: 1125, Flags: model.DetailInFlight, NArgs: -1},
			model.DetailCall{Func: fn("do_fork"), Depth: 1, StartNs: 1000, EndNs: 1125, Flags: model.DetailInFlight, NArgs: -1},
			model.DetailCall{Func: fn("child_work"), Depth: 2, StartNs: 1020, EndNs: 1115, Ret: 42, Flags: kept, NArgs: 0},
			model.DetailCall{Func: fn("fib"), Depth: 3, StartNs: 1025, EndNs: 1035, Args: [6]uint64{1 << 31}, Flags: kept &^ model.DetailReturned, NArgs: 1}),
	}
	// 103, spawned by 102: both without calls, flows at 0 on both sides
	p.Threads = append(p.Threads, model.Thread{Tid: 103, Process: 0, Name: "t103", ParentTid: 102, SpawnedBy: fn("compute"),
		Level: 3, Nodes: []model.Node{{Func: model.StartFunc, Parent: model.None}}})
	p.Processes = append(p.Processes, model.Process{Pid: 200, ParentPid: 100, Parent: 0, ForkedBy: model.None, ExecOf: 1,
		Exe: "/bin/other", Argv: []string{"/bin/other"}, Exited: true})
	p.Threads = append(p.Threads, model.Thread{Tid: 200, Process: len(p.Processes) - 1, Name: "other", SpawnedBy: model.None,
		Nodes: []model.Node{{Func: model.StartFunc, Parent: model.None}},
		Trees: []model.DetailTree{tree(model.DetailCall{Func: fn("other_main"), StartNs: 1200, EndNs: 1300, Flags: kept, NArgs: 0})}})
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	return p
}

func funcIndex(t testing.TB, p *model.Profile, name string) int {
	for i := range p.Functions {
		if p.FuncName(i) == name {
			return i
		}
	}
	t.Fatalf("no function %s", name)
	return 0
}

func writeChrome(t *testing.T, p *model.Profile) ([]byte, *chrometest.Trace) {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteChrome(&buf, p, Options{}); err != nil {
		t.Fatal(err)
	}
	tr, err := chrometest.Check(buf.Bytes())
	if err != nil {
		t.Fatalf("invalid trace: %v\n%s", err, buf.Bytes())
	}
	return buf.Bytes(), tr
}

func TestChromeGolden(t *testing.T) {
	for _, c := range []struct {
		file string
		p    *model.Profile
	}{
		{"detailed.trace.json", detailed(t)},
		{"sample.trace.json", modeltest.Sample()}, // no detail trees
	} {
		got, _ := writeChrome(t, c.p)
		golden.Check(t, c.file, got)
	}
}

// The events of the detailed profile, as a reader sees them.
func TestChromeEvents(t *testing.T) {
	_, tr := writeChrome(t, detailed(t))
	var x []string
	for _, e := range tr.Events {
		if e.Ph == "X" {
			x = append(x, fmt.Sprintf("%d/%d %s %s %d+%d %s", e.Pid, e.Tid, e.Cat, e.Name, e.TsNs, e.DurNs, args(e.Args)))
		}
	}
	want := []string{
		// main once, though in three trees; fib entered twice at 1150
		"100/100 ancestor main 1100+905 ret=0",
		"100/100 kept fib 1150+60 arg0=3 ret=2",
		"100/100 kept fib 1150+30 arg0=2 ret=1",
		"100/100 kept worker 1705+200 arg0=7 arg1=8 ret=5",
		`100/100 kept do_fork 1960+30 arg0=-1 arg1="0x7ffd12345678" arg2=-2147483648 arg3=0 arg4=1 arg5=2 ret=-1`,
		"100/101 ancestor worker 1003+3997 open=true",
		"100/101 kept compute 1020+300 arg0=300 ret=3",
		"200/200 ancestor main 1000+125 in_flight=true returned=false",
		"200/200 ancestor do_fork 1000+125 in_flight=true returned=false",
		"200/200 kept child_work 1020+95 ret=42",
		`200/200 kept fib 1025+10 arg0=-2147483648 returned=false`,
		"200/200 kept other_main 1200+100 ret=0",
	}
	if strings.Join(x, "\n") != strings.Join(want, "\n") {
		t.Errorf("complete events:\n%s\nwant:\n%s", strings.Join(x, "\n"), strings.Join(want, "\n"))
	}
	if got := tr.ProcessNames; len(got) != 2 || got[100] != "app" || got[200] != "app → other" {
		t.Errorf("process names %v", got)
	}
	if got := tr.ThreadNames; len(got) != 5 || got[[2]int{200, 200}] != "t200 → other" || got[[2]int{100, 102}] != "t102" {
		t.Errorf("thread names %v", got)
	}
	// Thread 102 has no calls: a marker at 0 that its flow binds to.
	var marker, flows []string
	for _, e := range tr.Events {
		switch e.Ph {
		case "i":
			marker = append(marker, fmt.Sprintf("%d/%d %s %d %s", e.Pid, e.Tid, e.Name, e.TsNs, args(e.Args)))
		case "s", "f":
			b := tr.Events[e.Enclosing]
			flows = append(flows, fmt.Sprintf("%s %s %s %d/%d %d -> %s %s", e.Ph, e.ID, e.Name, e.Pid, e.Tid, e.TsNs, b.Ph, b.Name))
		}
	}
	wantMarker := []string{
		`100/100 fork 1000 by="do_fork" pid=200`,
		`100/100 spawn 1003 by="spawn_workers" tid=101`,
		`100/101 spawn 0 by="spawn_more" tid=102`,
		"100/102 no detail calls 0 ",
		`100/102 spawn 0 by="compute" tid=103`,
		"100/103 no detail calls 0 ",
	}
	wantFlows := []string{
		"s 4 fork 100/100 1000 -> i fork",
		"s 1 spawn 100/100 1003 -> i spawn",
		"s 2 spawn 100/101 0 -> i spawn",
		"f 1 spawn 100/101 1003 -> X worker",
		"f 2 spawn 100/102 0 -> i no detail calls", // not the spawn marker after it
		"s 3 spawn 100/102 0 -> i spawn",
		"f 4 fork 200/200 1000 -> X main",
		"f 3 spawn 100/103 0 -> i no detail calls", // after pid 200: threads in the profile's order
	}
	if strings.Join(marker, "\n") != strings.Join(wantMarker, "\n") {
		t.Errorf("instants:\n%s\nwant:\n%s", strings.Join(marker, "\n"), strings.Join(wantMarker, "\n"))
	}
	if strings.Join(flows, "\n") != strings.Join(wantFlows, "\n") {
		t.Errorf("flows:\n%s\nwant:\n%s", strings.Join(flows, "\n"), strings.Join(wantFlows, "\n"))
	}
	if tr.DisplayTimeUnit != "ms" || tr.OtherData["detail"] != "worker|compute|fib|do_fork|child_work|other_main" ||
		tr.OtherData["start"] != "2023-11-14T22:13:20.123456789Z" {
		t.Errorf("displayTimeUnit %q, otherData %v", tr.DisplayTimeUnit, tr.OtherData)
	}
}

// args writes an event's arguments sorted by key, strings quoted.
func args(m map[string]any) string {
	var b bytes.Buffer
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v, _ := json.Marshal(m[k])
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s=%s", k, v)
	}
	return b.String()
}

// A profile without detail trees is still a valid trace: names, a marker
// per thread, the spawn and fork flows.
func TestChromeNoTrees(t *testing.T) {
	_, tr := writeChrome(t, modeltest.Sample())
	count := map[string]int{}
	for _, e := range tr.Events {
		count[e.Ph+" "+e.Name]++
	}
	want := map[string]int{"M process_name": 2, "M thread_name": 4, "i " + ChromeNoCalls: 4,
		"i spawn": 2, "s spawn": 2, "f spawn": 2, "i fork": 1, "s fork": 1, "f fork": 1}
	if fmt.Sprint(count) != fmt.Sprint(want) {
		t.Errorf("events %v, want %v", count, want)
	}
}

// Calls that do not nest (a profile the recorder did not make) are
// clamped to their caller: a reader would drop the overlapping event.
func TestChromeClampsOverlap(t *testing.T) {
	p := modeltest.Sample()
	f, g := funcIndex(t, p, "main"), funcIndex(t, p, "worker")
	p.Threads[0].Trees = []model.DetailTree{{Calls: []model.DetailCall{
		{Func: f, StartNs: 0, EndNs: 100, Flags: ancestor, NArgs: -1},
		{Func: g, Depth: 1, StartNs: 50, EndNs: 150, Flags: kept, NArgs: 0},
	}}}
	_, tr := writeChrome(t, p)
	for _, e := range tr.Events {
		if e.Name == "worker" && e.Ph == "X" && (e.TsNs != 50 || e.DurNs != 50) {
			t.Errorf("worker at %d+%d, want clamped to 50+50", e.TsNs, e.DurNs)
		}
	}
}

func TestChromeComposite(t *testing.T) {
	err := WriteChrome(&bytes.Buffer{}, modeltest.SampleComposite(), Options{})
	if !errors.Is(err, ErrChromeComposite) {
		t.Errorf("composite: %v", err)
	}
}

func TestFormatMicros(t *testing.T) {
	for _, c := range []struct {
		ns   int64
		want string
	}{
		{0, "0"}, {1, "0.001"}, {1000, "1"}, {1234500, "1234.5"}, {48394129, "48394.129"},
		{1001, "1.0011"}, // 1.001 reads as 1000.999... ns, truncated to 1000
		{-1500, "-1.5"},
	} {
		if got := formatMicros(c.ns); got != c.want {
			t.Errorf("formatMicros(%d) = %s, want %s", c.ns, got, c.want)
		}
	}
	// Every time reads back as its nanosecond, within a tenth of one.
	for _, ns := range append(seq(0, 200_000, 1), seq(0, 1<<50, 1<<50/100_003)...) {
		s := formatMicros(ns)
		f, _ := strconv.ParseFloat(s, 64)
		if readsAs(s) != ns || f*1000 < float64(ns)-0.01 || f*1000 > float64(ns)+0.2 {
			t.Fatalf("formatMicros(%d) = %s reads as %d", ns, s, readsAs(s))
		}
	}
}

func seq(from, to, step int64) []int64 {
	var s []int64
	for n := from; n < to; n += step {
		s = append(s, n)
	}
	return s
}

func TestRegister(t *testing.T) {
	for _, c := range []struct {
		v    uint64
		want any
	}{
		{0, int64(0)}, {50, int64(50)}, {1<<31 - 1, int64(1<<31 - 1)},
		{1 << 31, int64(-2147483648)}, // a C int: profile trees shows the same
		{0xffffffff, int64(-1)},
		{0xfffffffffffffffe, int64(-2)},
		{0xfffffffe00000000, "0xfffffffe00000000 (-8589934592)"},
		{0x7ffd12345678, "0x7ffd12345678"},
		{0x1234567800000005, "0x1234567800000005"},
	} {
		if got := register(c.v); got != c.want {
			t.Errorf("register(%#x) = %v, want %v", c.v, got, c.want)
		}
	}
}
