package export_test

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/profile-dev/profile/export"
	"github.com/profile-dev/profile/model"
)

// vec is one CCT node's numbers, keyed by its path.
type vec struct{ calls, self, total, dropped int64 }

// nodesByPath lists a thread's nodes by their path of (module, name)
// identities, so that two profiles compare whatever their tables' order.
func nodesByPath(p *model.Profile, t *model.Thread) map[string]vec {
	out := map[string]vec{}
	for i := range t.Nodes {
		var names []string
		for j := i; j > 0; j = t.Nodes[j].Parent {
			f := p.Functions[t.Nodes[j].Func]
			names = append(names, p.Modules[f.Module].Path+"!"+f.Name)
		}
		slices.Reverse(names)
		n := &t.Nodes[i]
		out[strings.Join(names, ";")] = vec{n.Calls, n.SelfNs, n.TotalNs, n.DroppedNs}
	}
	return out
}

// An export of ours imports back exactly: every thread (tid and name),
// every node's calls, self, total and pruned time, the command line.
func TestImportExportRoundTrip(t *testing.T) {
	for name, mk := range profiles {
		t.Run(name, func(t *testing.T) {
			p := mk(t)
			// The facts a user reads first survive the round trip.
			p.Meta.Partial, p.Meta.PartialReason, p.Meta.Detached = true, "calls dropped", true
			var buf bytes.Buffer
			if err := export.WritePprof(&buf, p, export.Options{}); err != nil {
				t.Fatal(err)
			}
			q, err := export.ReadPprof(&buf, export.ImportOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if q.Meta.Sampled() || q.Meta.Mode != "import" || !slices.Equal(q.Meta.Command, p.Meta.Command) ||
				q.Meta.DurationNs != p.Meta.DurationNs || !q.Meta.Partial || q.Meta.PartialReason != "calls dropped" || !q.Meta.Detached {
				t.Errorf("meta %+v", q.Meta)
			}
			if len(q.Threads) != len(p.Threads) {
				t.Fatalf("%d threads, want %d", len(q.Threads), len(p.Threads))
			}
			for ti := range p.Threads {
				a, b := &p.Threads[ti], &q.Threads[ti]
				if a.Tid != b.Tid || a.Name != b.Name || a.TracedNs != b.TracedNs || len(a.Nodes) != len(b.Nodes) {
					t.Errorf("thread %d: tid %d %q traced %d, %d nodes; want tid %d %q traced %d, %d nodes",
						ti, b.Tid, b.Name, b.TracedNs, len(b.Nodes), a.Tid, a.Name, a.TracedNs, len(a.Nodes))
				}
				want, got := nodesByPath(p, a), nodesByPath(q, b)
				for _, path := range slices.Sorted(maps.Keys(want)) {
					if got[path] != want[path] {
						t.Errorf("thread %d %s: %+v, want %+v", a.Tid, path, got[path], want[path])
					}
				}
			}
		})
	}
}

// builder makes small pprof profiles: frames are "name" (in /bin/app) or
// "lib.so:name" (in /lib/lib.so); "outer/inner" is one location whose
// function inner was inlined into outer; "@0x1234" an unsymbolized one.
type builder struct {
	pp    *profile.Profile
	maps  map[string]*profile.Mapping
	funcs map[string]*profile.Function
	locs  map[string]*profile.Location
}

func newBuilder(types ...string) *builder {
	b := &builder{pp: &profile.Profile{}, maps: map[string]*profile.Mapping{},
		funcs: map[string]*profile.Function{}, locs: map[string]*profile.Location{}}
	for _, t := range types {
		typ, unit, _ := strings.Cut(t, "/")
		b.pp.SampleType = append(b.pp.SampleType, &profile.ValueType{Type: typ, Unit: unit})
	}
	b.mapping("/bin/app")
	return b
}

func (b *builder) mapping(file string) *profile.Mapping {
	if m := b.maps[file]; m != nil {
		return m
	}
	m := &profile.Mapping{ID: uint64(len(b.pp.Mapping) + 1), File: file, Start: uint64(len(b.pp.Mapping)+1) << 20,
		Limit: uint64(len(b.pp.Mapping)+2) << 20, Offset: 0x1000}
	b.pp.Mapping = append(b.pp.Mapping, m)
	b.maps[file] = m
	return m
}

func (b *builder) location(frame string) *profile.Location {
	if l := b.locs[frame]; l != nil {
		return l
	}
	file, rest := "/bin/app", frame
	if lib, name, ok := strings.Cut(frame, ":"); ok {
		file, rest = "/lib/"+lib, name
	}
	l := &profile.Location{ID: uint64(len(b.pp.Location) + 1), Mapping: b.mapping(file)}
	if a, ok := strings.CutPrefix(rest, "@"); ok {
		off, _ := strconv.ParseUint(a, 0, 64)
		l.Address = l.Mapping.Start + off - l.Mapping.Offset
	} else {
		names := strings.Split(rest, "/")
		for i := len(names) - 1; i >= 0; i-- { // innermost first
			f := b.funcs[names[i]]
			if f == nil {
				f = &profile.Function{ID: uint64(len(b.pp.Function) + 1), Name: names[i], SystemName: names[i], Filename: "app.go"}
				b.pp.Function = append(b.pp.Function, f)
				b.funcs[names[i]] = f
			}
			l.Line = append(l.Line, profile.Line{Function: f, Line: int64(10 + i)})
		}
	}
	b.pp.Location = append(b.pp.Location, l)
	b.locs[frame] = l
	return l
}

// add adds a sample: a stack root first, ";"-separated, and its values.
func (b *builder) add(stack string, values ...int64) *profile.Sample {
	s := &profile.Sample{Value: values}
	if stack != "" {
		frames := strings.Split(stack, ";")
		for i := len(frames) - 1; i >= 0; i-- {
			s.Location = append(s.Location, b.location(frames[i]))
		}
	}
	b.pp.Sample = append(b.pp.Sample, s)
	return s
}

// goCPU is a Go CPU profile as runtime/pprof writes it: samples (count)
// and cpu (ns) at 100 Hz, no labels; fib recursion, an inlined helper and
// an unsymbolized libc frame.
func goCPU() *builder {
	b := newBuilder("samples/count", "cpu/nanoseconds")
	b.pp.PeriodType, b.pp.Period = &profile.ValueType{Type: "cpu", Unit: "nanoseconds"}, 10_000_000
	b.pp.DurationNanos = 2_000_000_000
	b.add("main;burn/spin", 30, 300_000_000)
	b.add("main;burn", 10, 100_000_000)
	b.add("main;fib;fib;fib", 4, 40_000_000)
	b.add("main;fib", 1, 10_000_000)
	b.add("main;libc.so.6:@0x12a0;libc.so.6:write", 2, 20_000_000)
	b.add("main;burn/spin", 5, 50_000_000) // the same stack again adds up
	return b
}

// imported runs FromPprof and lists the result as
// "tid name: path calls/self/total" lines of non-empty nodes, sorted.
func imported(t *testing.T, pp *profile.Profile, opt export.ImportOptions) (*model.Profile, []string) {
	t.Helper()
	p, err := export.FromPprof(pp, opt)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for ti := range p.Threads {
		th := &p.Threads[ti]
		for i := range th.Nodes {
			n := &th.Nodes[i]
			var names []string
			for j := i; j > 0; j = th.Nodes[j].Parent {
				names = append(names, p.FuncName(th.Nodes[j].Func))
			}
			slices.Reverse(names)
			lines = append(lines, fmt.Sprintf("%d %s: %s %d/%d/%d", th.Tid, th.Name, strings.Join(names, ";"),
				n.Calls, n.SelfNs, n.TotalNs))
		}
	}
	slices.Sort(lines)
	return p, lines
}

// A foreign profile is sampled: self at the leaves, totals of the subtree
// on outermost activations only, inlined frames expanded, no call counts.
func TestImportGoCPU(t *testing.T) {
	p, got := imported(t, goCPU().pp, export.ImportOptions{})
	want := []string{
		"1 all threads:  0/0/0",
		"1 all threads: main 0/0/520000000",
		"1 all threads: main;burn 0/100000000/450000000",
		"1 all threads: main;burn;spin 0/350000000/350000000",
		"1 all threads: main;fib 0/10000000/50000000",
		"1 all threads: main;fib;fib 0/0/0", // recursive: its time is inside the outer fib's
		"1 all threads: main;fib;fib;fib 0/40000000/0",
		"1 all threads: main;libc.so.6:0x12a0 0/0/20000000",
		"1 all threads: main;libc.so.6:0x12a0;libc.so.6:write 0/20000000/20000000",
	}
	if !slices.Equal(got, want) {
		t.Errorf("nodes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	m := p.Meta
	if m.Mode != "import" || m.Exe != "/bin/app" || m.DurationNs != 2_000_000_000 ||
		m.Values() != "sampled (cpu nanoseconds, 100 Hz), call counts unknown" {
		t.Errorf("meta %+v: %s", m, m.Values())
	}
	if len(p.Processes) != 1 || p.Processes[0].Pid != 1 || p.Threads[0].TracedNs != 520_000_000 ||
		!slices.Equal(m.Warnings, []string{"pprof names no process: pid 1 stands for the profiled one"}) {
		t.Errorf("processes %+v, traced %d, warnings %q", p.Processes, p.Threads[0].TracedNs, m.Warnings)
	}
}

// Thread labels split the samples into threads: ours ("tid name"),
// perf_to_profile's pid and tid numbers with comm, Go's goroutine.
func TestImportThreads(t *testing.T) {
	b := newBuilder("cpu-clock_sample/count", "cpu-clock_event/count")
	b.add("main;work", 1, 1000).NumLabel = map[string][]int64{"pid": {42}, "tid": {42}}
	b.add("main;work", 1, 2000).NumLabel = map[string][]int64{"pid": {42}, "tid": {43}}
	s := b.add("work", 1, 500)
	s.NumLabel, s.Label = map[string][]int64{"pid": {42}, "tid": {43}}, map[string][]string{"comm": {"worker"}}
	b.add("other", 1, 700).NumLabel = map[string][]int64{"pid": {50}, "tid": {51}}
	b.add("main", 1, 100).Label = map[string][]string{"thread": {"7 loop"}}
	b.add("main", 1, 200).Label = map[string][]string{"goroutine": {"19"}}
	p, got := imported(t, b.pp, export.ImportOptions{})
	want := []string{
		"7 loop:  0/0/0", "7 loop: main 0/100/100",
		"19 goroutine 19:  0/0/0", "19 goroutine 19: main 0/200/200",
		"42 app:  0/0/0", "42 app: main 0/0/1000", "42 app: main;work 0/1000/1000",
		"43 app:  0/0/0", "43 app: main 0/0/2000", "43 app: main;work 0/2000/2000",
		"43 worker:  0/0/0", "43 worker: work 0/500/500",
		"51 app:  0/0/0", "51 app: other 0/700/700",
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("nodes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var pids []int
	for _, pr := range p.Processes {
		pids = append(pids, pr.Pid)
	}
	levels := map[int]int{}
	for _, th := range p.Threads {
		levels[th.Tid] += th.Level
	}
	if !slices.Equal(pids, []int{42, 50, 1}) || levels[42] != 0 || levels[43] != 2 || levels[51] != 0 {
		t.Errorf("pids %v, levels by tid %v", pids, levels)
	}
	if v := p.Meta.Values(); v != "sampled (cpu-clock_event count), call counts unknown" {
		t.Errorf("values %s", v)
	}
}

// The sample value: chosen by name or index, the default type, or the
// last time; converted to nanoseconds.
func TestImportSampleValue(t *testing.T) {
	self := func(p *model.Profile) int64 { return p.Threads[0].TracedNs }
	for _, c := range []struct {
		name   string
		mk     func() *profile.Profile
		index  string
		traced int64
		values string
	}{
		{"go default", func() *profile.Profile { return goCPU().pp }, "", 520_000_000, "cpu nanoseconds, 100 Hz"},
		{"samples by name", func() *profile.Profile { return goCPU().pp }, "samples", 520_000_000, "samples count, 100 Hz"},
		{"samples by index", func() *profile.Profile { return goCPU().pp }, "0", 520_000_000, "samples count, 100 Hz"},
		{"microseconds", func() *profile.Profile {
			b := newBuilder("wall/microseconds", "allocs/count")
			b.add("main", 7, 1)
			return b.pp
		}, "", 7000, "wall microseconds"},
		{"default type", func() *profile.Profile {
			b := newBuilder("delay/nanoseconds", "wall/seconds")
			b.pp.DefaultSampleType = "delay"
			b.add("main", 5, 1)
			return b.pp
		}, "", 5, "delay nanoseconds"},
	} {
		p, err := export.FromPprof(c.mk(), export.ImportOptions{SampleIndex: c.index})
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if self(p) != c.traced || p.Meta.Sampling.String() != c.values {
			t.Errorf("%s: traced %d (%s), want %d (%s)", c.name, self(p), p.Meta.Sampling, c.traced, c.values)
		}
	}
}

func TestImportErrors(t *testing.T) {
	var own bytes.Buffer
	if err := export.WritePprof(&own, profiles["sample"](t), export.Options{}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		mk    func() *profile.Profile
		index string
		want  string
	}{
		{"heap", func() *profile.Profile {
			b := newBuilder("alloc_objects/count", "alloc_space/bytes")
			b.pp.DefaultSampleType = "alloc_space"
			b.add("main", 1, 64)
			return b.pp
		}, "", "sample type alloc_space is in bytes, not a time: choose a time with --sample-index (this profile has alloc_objects (count), alloc_space (bytes))"},
		{"no time", func() *profile.Profile {
			b := newBuilder("cycles_sample/count", "cycles_event/count")
			b.add("main", 1, 64)
			return b.pp
		}, "", "no sample type of this profile is a time (it has cycles_sample (count), cycles_event (count)): profile keeps times only"},
		{"unknown index", func() *profile.Profile { return goCPU().pp }, "wall", "--sample-index wall: no such sample type (this profile has samples (count), cpu (nanoseconds))"},
		{"negative", func() *profile.Profile {
			b := newBuilder("cpu/nanoseconds")
			b.add("main", -5)
			return b.pp
		}, "", "negative cpu value -5 (a pprof -diff_base profile?): only measured times can be imported"},
		{"own export with index", func() *profile.Profile {
			pp, err := profile.Parse(bytes.NewReader(own.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			return pp
		}, "self", "--sample-index self: this profile was written by profile export: its calls, self and total are imported exactly"},
	} {
		_, err := export.FromPprof(c.mk(), export.ImportOptions{SampleIndex: c.index})
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: err = %v\nwant %s", c.name, err, c.want)
		}
	}
	if _, err := export.ReadPprof(strings.NewReader("hello"), export.ImportOptions{}); err == nil ||
		!strings.HasPrefix(err.Error(), "not a pprof profile: ") || strings.Contains(err.Error(), "\n") {
		t.Errorf("text input: %v", err)
	}
}
