package summary_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/profile-dev/profile/internal/human"
	"github.com/profile-dev/profile/model"
	"github.com/profile-dev/profile/model/modeltest"
	"github.com/profile-dev/profile/names"
	"github.com/profile-dev/profile/summary"
)

// visible keeps the fields of a report that the JSON and CSV carry.
func visible(r *summary.Report) summary.Report {
	v := summary.Report{Format: r.Format, Meta: r.Meta, Totals: r.Totals, Modules: r.Modules, Threads: r.Threads}
	v.Meta.StartedAs = "" // the tables' name, as Display
	for _, pr := range r.Processes {
		pr.StartedAs = ""
		v.Processes = append(v.Processes, pr)
	}
	for _, f := range r.Functions {
		f.Display = ""
		v.Functions = append(v.Functions, f)
	}
	for _, e := range r.Edges {
		e.CallerDisplay, e.CalleeDisplay = "", ""
		v.Edges = append(v.Edges, e)
	}
	return v
}

// csvVisible is what CSV carries of a report: neither warnings, module
// flags nor when a function began to be traced.
func csvVisible(r *summary.Report) summary.Report {
	v := visible(r)
	v.Meta.Warnings = nil
	v.Modules = slices.Clone(v.Modules)
	for i := range v.Modules {
		v.Modules[i].DynamicOnly = false
	}
	for i := range v.Functions {
		v.Functions[i].TracedSinceNs = 0
	}
	return v
}

func reports(t *testing.T) map[string]*summary.Report {
	sample := modeltest.Sample()
	sample.Meta.Command = []string{"./app", "-x", "a b"}
	sample.Meta.DurationNs, sample.Meta.Stops, sample.Meta.TracedCalls, sample.Meta.Partial = 2_500_000, 40, 19, true
	sample.Processes[1].Signal, sample.Processes[1].ExitCode = "SIGSEGV", -1
	// attach --duration: detached, the first process still running, the
	// forked one replaced by an exec (its new image added by hand).
	detached := modeltest.Sample()
	detached.Meta.Mode, detached.Meta.Detached = "attach", true
	detached.Processes[0].Exited = false
	img := detached.Processes[1]
	img.ExecOf, img.Exe, img.Argv, img.Exited = 1, "/bin/other", []string{"/bin/other"}, false
	detached.Processes[1].Exited = false
	detached.Processes = append(detached.Processes, img)
	cpp := modeltest.NewBuilder("/opt/my app/bin")
	pr := cpp.Process(7, model.None, "", 0)
	cpp.Thread(pr, 7, 0, "", 0, nil, []modeltest.Step{
		{Dt: 1, Func: "main", Kind: model.KindDirect},
		{Dt: 2, Func: `std::vector<int, std::allocator<int> >::operator|(char const*, "q")`, Kind: model.KindDirect},
		{Dt: 3, Func: "libstdc++.so.6:operator new(unsigned long)", Kind: model.KindPLT}, {Dt: 1234567}, {Dt: 5},
		{Dt: 7, Func: "ns::f`1_*x*_[a]", Kind: model.KindIndirect}, {Dt: 9_876_543_210}, {Dt: 1},
	})
	out := map[string]*summary.Report{}
	for name, c := range map[string]struct {
		p   *model.Profile
		opt summary.Options
	}{
		"sample":       {sample, summary.Options{}},
		"sample-top3":  {sample, summary.Options{Top: 3}},
		"detached":     {detached, summary.Options{}},
		"sample-tid":   {sample, summary.Options{Tid: 101}},
		"blocking":     {blockingProfile(), summary.Options{}},
		"composite":    {composite(t), summary.Options{}},
		"cpp":          {cpp.P, summary.Options{}},
		"cpp-full":     {cpp.P, summary.Options{FullNames: true}},
		"cpp-threads":  {modeltest.CPP(), summary.Options{}},
		"empty-thread": {modeltest.Sample(), summary.Options{Pid: 200}},
		"traced-later": {cppTracedLater(), summary.Options{}},
		"counted":      {modeltest.Counted(), summary.Options{}},
		"counted-tid":  {modeltest.Counted(), summary.Options{Tid: 101}},
		"cpu-sampled":  {modeltest.CPUSampled(), summary.Options{Busy: true}},
		"cpu-wall":     {modeltest.CPUSampled(), summary.Options{}},
		"cpu-merged":   {cpuMerged(t), summary.Options{Busy: true}},
	} {
		out[name] = mustCompute(t, c.p, c.opt)
	}
	return out
}

func TestJSONRoundTrip(t *testing.T) {
	for name, r := range reports(t) {
		var buf bytes.Buffer
		if err := summary.WriteJSON(&buf, r); err != nil {
			t.Fatal(err)
		}
		var back summary.Report
		dec := json.NewDecoder(&buf)
		dec.DisallowUnknownFields()
		if err := dec.Decode(&back); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if want := visible(r); !reflect.DeepEqual(visible(&back), want) {
			t.Errorf("%s: JSON round trip differs:\n got %+v\nwant %+v", name, visible(&back), want)
		}
	}
}

// parseCSV reads WriteCSV's output back into a report.
func parseCSV(t *testing.T, data []byte) summary.Report {
	t.Helper()
	recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(recs[0], summary.CSVHeader) {
		t.Fatalf("header %v", recs[0])
	}
	col := map[string]int{}
	for i, c := range recs[0] {
		col[c] = i
	}
	r := summary.Report{Functions: []summary.Function{}, Edges: []summary.Edge{}, Modules: []summary.Module{},
		Threads: []summary.Thread{}, Processes: []summary.Process{}}
	for _, rec := range recs[1:] {
		s := func(c string) string { return rec[col[c]] }
		i := func(c string) int { v, err := strconv.Atoi(rec[col[c]]); must(t, err); return v }
		n := func(c string) int64 { v, err := strconv.ParseInt(rec[col[c]], 10, 64); must(t, err); return v }
		f := func(c string) float64 { v, err := strconv.ParseFloat(rec[col[c]], 64); must(t, err); return v }
		// a record fills only its section's columns
		for c, v := range rec {
			if v != "" && !csvColumn(rec[0], recs[0][c]) {
				t.Errorf("%s record fills column %s", rec[0], recs[0][c])
			}
		}
		switch rec[0] {
		case "meta":
			m := &r.Meta
			switch v := s("value"); s("key") {
			case "format":
				r.Format = v
			case "command":
				must(t, json.Unmarshal([]byte(v), &m.Command))
			case "exe":
				m.Exe = v
			case "pid":
				m.Pid, _ = strconv.Atoi(v)
			case "mode":
				m.Mode = v
			case "duration_ns":
				m.DurationNs, _ = strconv.ParseInt(v, 10, 64)
			case "partial":
				m.Partial, _ = strconv.ParseBool(v)
			case "detached":
				m.Detached, _ = strconv.ParseBool(v)
			case "stops":
				m.Stops, _ = strconv.ParseInt(v, 10, 64)
			case "traced_calls":
				m.TracedCalls, _ = strconv.ParseInt(v, 10, 64)
			case "cpu_samples":
				must(t, json.Unmarshal([]byte(v), &m.CPUSamples))
			default:
				t.Errorf("meta key %q", s("key"))
			}
		case "totals":
			tt := &r.Totals
			if s("key") == "times" {
				tt.Times = s("value")
				continue
			}
			if b := map[string]*bool{"sampled": &tt.Sampled, "busy_sampled": &tt.BusySampled, "waiting_cpu_sampled": &tt.WaitingCPU}[s("key")]; b != nil {
				var err error
				*b, err = strconv.ParseBool(s("value"))
				must(t, err)
				continue
			}
			v := n("value")
			ptr := map[string]any{"nodes": &tt.Nodes, "edges": &tt.Edges, "calls": &tt.Calls,
				"direct_calls": &tt.DirectCalls, "indirect_calls": &tt.IndirectCalls, "plt_calls": &tt.PLTCalls,
				"threads": &tt.Threads, "processes": &tt.Processes, "max_nesting_level": &tt.MaxNestingLevel,
				"max_recursion_depth": &tt.MaxRecursionDepth, "traced_ns": &tt.TracedNs, "blocked_ns": &tt.BlockedNs,
				"waiting_cpu_ns": &tt.WaitingCPUNs, "wall_ns": &tt.WallNs}[s("key")]
			switch p := ptr.(type) {
			case *int:
				*p = int(v)
			case *int64:
				*p = v
			default:
				t.Errorf("totals key %q", s("key"))
			}
		case "functions":
			fn := summary.Function{Name: s("name"), Module: s("module"), FuncNumbers: summary.FuncNumbers{
				Calls: n("calls"), RecursiveCalls: n("recursive_calls")}}
			if fn.Counted = counted(t, s("counted")); fn.Counted {
				for _, c := range []string{"self_ns", "total_ns", "self_pct", "total_pct"} {
					if s(c) != "" {
						t.Errorf("counted function %s has %s %q", fn.Name, c, s(c))
					}
				}
			} else {
				fn.SelfNs, fn.TotalNs, fn.SelfPct, fn.TotalPct = n("self_ns"), n("total_ns"), f("self_pct"), f("total_pct")
			}
			r.Functions = append(r.Functions, fn)
		case "edges":
			e := summary.Edge{Caller: s("caller"), Callee: s("callee"), CallerModule: s("caller_module"),
				CalleeModule: s("callee_module"), Kind: s("kind"), EdgeNumbers: summary.EdgeNumbers{Calls: n("calls"),
					RecursiveCalls: n("recursive_calls")}}
			if e.Counted = counted(t, s("counted")); e.Counted {
				if s("total_ns") != "" || s("total_pct") != "" {
					t.Errorf("counted edge %s -> %s has a total %q %q", e.Caller, e.Callee, s("total_ns"), s("total_pct"))
				}
			} else {
				e.TotalNs, e.TotalPct = n("total_ns"), f("total_pct")
			}
			r.Edges = append(r.Edges, e)
		case "modules":
			r.Modules = append(r.Modules, summary.Module{Module: s("module"), SelfNs: n("self_ns"), SelfPct: f("self_pct")})
		case "threads":
			r.Threads = append(r.Threads, summary.Thread{Tid: i("tid"), Pid: i("pid"), Name: s("name"),
				ParentTid: i("parent_tid"), SpawnedBy: s("spawned_by"), NestingLevel: i("nesting_level"), TracedNs: n("traced_ns")})
		case "processes":
			r.Processes = append(r.Processes, summary.Process{Pid: i("pid"), ParentPid: i("parent_pid"),
				ForkedBy: s("forked_by"), Exe: s("exe"), ExitCode: i("exit_code"), Signal: s("signal"), State: s("state")})
		default:
			t.Errorf("unknown section %q", rec[0])
		}
	}
	return r
}

// counted reads the counted cell: "true" or empty.
func counted(t *testing.T, cell string) bool {
	t.Helper()
	if cell != "" && cell != "true" {
		t.Errorf("counted cell %q, want true or nothing", cell)
	}
	return cell == "true"
}

func csvColumn(section, column string) bool {
	cols := map[string]string{
		"meta": "section key value", "totals": "section key value",
		"functions": "section name module calls recursive_calls self_ns total_ns self_pct total_pct counted",
		"edges":     "section caller callee caller_module callee_module kind calls recursive_calls total_ns total_pct counted",
		"modules":   "section module self_ns self_pct",
		"threads":   "section tid pid name parent_tid spawned_by nesting_level traced_ns",
		"processes": "section pid parent_pid forked_by exe exit_code signal state",
	}[section]
	for _, c := range strings.Fields(cols) {
		if c == column {
			return true
		}
	}
	return false
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestCSVRoundTrip(t *testing.T) {
	for name, r := range reports(t) {
		var buf bytes.Buffer
		must(t, summary.WriteCSV(&buf, r))
		back := parseCSV(t, buf.Bytes())
		want := csvVisible(r)
		back.Meta.Warnings = nil
		if !reflect.DeepEqual(back, want) {
			t.Errorf("%s: CSV round trip differs:\n got %+v\nwant %+v", name, back, want)
		}
	}
}

// tsection is one titled table read back from the human formats.
type tsection struct {
	title  string
	header []string
	rows   [][]string
}

func parseTable(t *testing.T, text string) []tsection {
	var out []tsection
	rowsSeen := 0
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		switch {
		case line == "":
		case strings.HasPrefix(line, "┌"):
			rowsSeen = 0
		case strings.HasPrefix(line, "├"), strings.HasPrefix(line, "└"):
		case strings.HasPrefix(line, "│"):
			parts := strings.Split(line, "│")
			cells := make([]string, 0, len(parts)-2)
			for _, c := range parts[1 : len(parts)-1] {
				cells = append(cells, strings.TrimSpace(c))
			}
			s := &out[len(out)-1]
			if rowsSeen == 0 {
				s.header = cells
			} else {
				s.rows = append(s.rows, cells)
			}
			rowsSeen++
		case line == "  (none)":
		default:
			out = append(out, tsection{title: line})
		}
	}
	return out
}

// splitMD splits a markdown table row on its unescaped pipes.
func splitMD(line string) []string {
	var cells []string
	var cur strings.Builder
	for i := 0; i < len(line); i++ {
		switch c := line[i]; {
		case c == '\\' && i+1 < len(line):
			cur.WriteByte(c)
			cur.WriteByte(line[i+1])
			i++
		case c == '|':
			cells = append(cells, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(c)
		}
	}
	cells = append(cells, cur.String())
	return cells[1 : len(cells)-1]
}

func unMD(cell string) string {
	cell = strings.TrimSpace(cell)
	if strings.HasPrefix(cell, "`") {
		n := len(cell) - len(strings.TrimLeft(cell, "`"))
		inner := cell[n : len(cell)-n]
		if n > 1 {
			inner = inner[1 : len(inner)-1]
		}
		return strings.ReplaceAll(inner, `\|`, "|")
	}
	var b strings.Builder
	for i := 0; i < len(cell); i++ {
		if cell[i] == '\\' && i+1 < len(cell) {
			i++
		}
		b.WriteByte(cell[i])
	}
	return b.String()
}

func parseMarkdown(t *testing.T, text string) []tsection {
	var out []tsection
	rowsSeen := 0
	for _, line := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(line, "## "):
			out = append(out, tsection{title: unMD(line[3:])})
			rowsSeen = 0
		case strings.HasPrefix(line, "|"):
			var cells []string
			for _, c := range splitMD(line) {
				cells = append(cells, unMD(c))
			}
			s := &out[len(out)-1]
			switch rowsSeen {
			case 0:
				for i := range cells {
					cells[i] = strings.ToUpper(cells[i])
				}
				s.header = cells
			case 1: // alignment row
			default:
				s.rows = append(s.rows, cells)
			}
			rowsSeen++
		}
	}
	return out
}

// humanChecker compares cells with a report's numbers at the precision
// the human formats print: exact counts and names, times to three
// significant digits, percentages to two decimals.
type humanChecker struct {
	t    *testing.T
	what string
}

func (h humanChecker) str(cell, want string) {
	if want == "" {
		want = "-"
	}
	if cell != want {
		h.t.Errorf("%s: %q, want %q", h.what, cell, want)
	}
}

func (h humanChecker) num(cell string, want int64) {
	if cell != strconv.FormatInt(want, 10) {
		h.t.Errorf("%s: %q, want %d", h.what, cell, want)
	}
}

func (h humanChecker) dur(cell string, want int64) {
	v, err := human.ParseDuration(cell)
	if err != nil || math.Abs(v-float64(want)) > 0.005*math.Abs(float64(want))+0.5 {
		h.t.Errorf("%s: %q, want %d ns", h.what, cell, want)
	}
}

func (h humanChecker) pct(cell string, want float64) {
	v, err := strconv.ParseFloat(strings.TrimSuffix(cell, "%"), 64)
	if err != nil || !strings.HasSuffix(cell, "%") || math.Abs(v-want) > 0.005+1e-9 {
		h.t.Errorf("%s: %q, want %.4f%%", h.what, cell, want)
	}
}

// totalsRows is the Totals table's length: one more row with the time
// on a CPU inside waiting calls.
func totalsRows(r *summary.Report) int {
	if r.Totals.WaitingCPU {
		return 14
	}
	return 13
}

func checkHuman(t *testing.T, name string, secs []tsection, r *summary.Report) {
	// the tables shorten names unless told not to; JSON and CSV do not
	shown := names.Short
	if r.FullNames {
		shown = func(s string) string { return s }
	}
	byTitle := map[string]tsection{}
	for _, s := range secs {
		key := s.title
		if i := strings.Index(key, " ("); i > 0 {
			key = key[:i]
		}
		byTitle[key] = s
	}
	get := func(title string, n int) tsection {
		s, ok := byTitle[title]
		if !ok {
			t.Fatalf("%s: no section %q in %v", name, title, secs)
		}
		if len(s.rows) != n {
			t.Fatalf("%s: section %q has %d rows, want %d", name, title, len(s.rows), n)
		}
		return s
	}
	kv := func(s tsection) map[string]string {
		m := map[string]string{}
		for _, row := range s.rows {
			m[row[0]] = row[1]
		}
		return m
	}
	h := func(format string, a ...any) humanChecker {
		return humanChecker{t, name + ": " + fmt.Sprintf(format, a...)}
	}
	rows := 10
	if r.Meta.CPUSamples != nil {
		rows++
	}
	p := kv(get("Profile", rows))
	h("command").str(p["command"], strings.Join(r.Meta.Command, " "))
	h("exe").str(p["exe"], r.Meta.StartedAs)
	h("pid").num(p["pid"], int64(r.Meta.Pid))
	h("mode").str(p["mode"], r.Meta.Mode)
	h("duration").dur(p["duration"], r.Meta.DurationNs)
	h("partial").str(p["partial"], map[bool]string{true: "yes", false: "no"}[r.Meta.Partial])
	h("detached").str(p["detached"], map[bool]string{true: "yes (the target went on running)", false: "no"}[r.Meta.Detached])
	h("stops").num(p["stops"], r.Meta.Stops)
	h("traced calls").num(p["traced calls"], r.Meta.TracedCalls)
	if c := r.Meta.CPUSamples; c != nil {
		h("busy times").str(p["busy times"], busyTimesText(c, r.Totals.Times == "busy"))
	}
	tt := kv(get("Totals", totalsRows(r)))
	for k, v := range map[string]int64{"nodes": int64(r.Totals.Nodes), "edges": int64(r.Totals.Edges),
		"calls": r.Totals.Calls, "direct calls": r.Totals.DirectCalls, "indirect calls": r.Totals.IndirectCalls,
		"PLT calls": r.Totals.PLTCalls, "threads": int64(r.Totals.Threads), "processes": int64(r.Totals.Processes),
		"max nesting level": int64(r.Totals.MaxNestingLevel), "max recursion depth": int64(r.Totals.MaxRecursionDepth)} {
		h("totals %s", k).num(tt[k], v)
	}
	timeRow := map[string]string{"wall": "traced time", "busy": "busy time (blocked taken out)"}[r.Totals.Times]
	if r.Totals.BusySampled {
		timeRow = "busy time (sampled CPU)"
	}
	h("traced").dur(tt[timeRow], r.Totals.TracedNs)
	h("blocked").dur(tt["blocked time"], r.Totals.BlockedNs)
	h("blocked share").pct(tt["blocked share"], pctOf(r.Totals.BlockedNs, r.Totals.WallNs))

	fs := get("Hottest functions", len(r.Functions))
	for i, f := range r.Functions {
		row := fs.rows[i]
		h("function %d name", i).str(row[0], shown(f.Name))
		h("function %d module", i).str(row[1], f.Module)
		h("function %d calls", i).num(row[2], f.Calls)
		h("function %d rc", i).num(row[3], f.RecursiveCalls)
		if f.Counted { // no time measured: none shown
			h("function %d times", i).str(strings.Join(row[4:8], " "), "counted - - -")
			continue
		}
		h("function %d self", i).dur(row[4], f.SelfNs)
		h("function %d self%%", i).pct(row[5], f.SelfPct)
		h("function %d total", i).dur(row[6], f.TotalNs)
		h("function %d total%%", i).pct(row[7], f.TotalPct)
	}
	es := get("Hottest edges", len(r.Edges))
	for i, e := range r.Edges {
		row := es.rows[i]
		h("edge %d caller", i).str(row[0], e.CallerDisplay)
		h("edge %d callee", i).str(row[1], e.CalleeDisplay)
		h("edge %d kind", i).str(row[2], e.Kind)
		h("edge %d calls", i).num(row[3], e.Calls)
		h("edge %d rc", i).num(row[4], e.RecursiveCalls)
		if e.Counted {
			h("edge %d times", i).str(strings.Join(row[5:7], " "), "counted -")
			continue
		}
		h("edge %d total", i).dur(row[5], e.TotalNs)
		h("edge %d total%%", i).pct(row[6], e.TotalPct)
	}
	// the displays name the same functions as name and module
	disp := map[string]bool{}
	for _, f := range r.Functions {
		disp[f.Display] = true
		if n := shown(f.Name); f.Display != n && f.Display != f.Module+":"+n {
			t.Errorf("%s: display %q of %s in %s", name, f.Display, f.Name, f.Module)
		}
	}
	hp := get("Hottest path", len(r.HottestPath))
	for i, s := range r.HottestPath {
		row := hp.rows[i]
		h("path %d", i).num(row[0], int64(i+1))
		want := s.Display
		if s.Level >= 0 {
			want += fmt.Sprintf(" [L%d]", s.Level)
		}
		h("path %d function", i).str(row[1], want)
		h("path %d calls", i).num(row[2], s.Calls)
		h("path %d total", i).dur(row[3], s.TotalNs)
		h("path %d total%%", i).pct(row[4], s.TotalPct)
	}
	rs := get("Recursion", len(r.Recursion))
	for i, x := range r.Recursion {
		row := rs.rows[i]
		h("recursion %d", i).str(row[0], x.Display)
		h("recursion %d calls", i).num(row[1], x.Calls)
		h("recursion %d rc", i).num(row[2], x.RecursiveCalls)
		h("recursion %d depth", i).num(row[3], int64(x.MaxDepth))
	}
	bs := get("Blocked in waiting calls", len(r.Blocking))
	for i, x := range r.Blocking {
		row := bs.rows[i]
		h("blocking %d", i).str(row[0], x.Display)
		h("blocking %d calls", i).num(row[1], x.Calls)
		if r.Totals.WaitingCPU {
			h("blocking %d wall", i).dur(row[2], x.WallNs)
			h("blocking %d on-CPU", i).dur(row[3], x.OnCPUNs)
			row = append(row[:2:2], row[4:]...)
		}
		h("blocking %d time", i).dur(row[2], x.BlockedNs)
		h("blocking %d pct", i).pct(row[3], x.Pct)
	}
	ms := get("Modules", len(r.Modules))
	for i, x := range r.Modules {
		row := ms.rows[i]
		h("module %d", i).str(row[0], x.Module)
		h("module %d self", i).dur(row[1], x.SelfNs)
		h("module %d pct", i).pct(row[2], x.SelfPct)
	}
	ts := get("Threads", len(r.Threads))
	for i, x := range r.Threads {
		row := ts.rows[i]
		h("thread %d tid", i).num(row[0], int64(x.Tid))
		h("thread %d pid", i).num(row[1], int64(x.Pid))
		h("thread %d name", i).str(row[2], x.Name)
		h("thread %d parent", i).num(row[3], int64(x.ParentTid))
		h("thread %d spawned by", i).str(row[4], shown(x.SpawnedBy))
		h("thread %d level", i).num(row[5], int64(x.NestingLevel))
		h("thread %d traced", i).dur(row[6], x.TracedNs)
	}
	ls := get("Levels of multithreading", len(r.Levels))
	for i, x := range r.Levels {
		row := ls.rows[i]
		h("level %d", i).num(row[0], int64(x.Level))
		h("level %d threads", i).num(row[1], int64(x.Threads))
		h("level %d traced", i).dur(row[2], x.TracedNs)
	}
	ps := get("Processes", len(r.Processes))
	for i, x := range r.Processes {
		row := ps.rows[i]
		h("process %d pid", i).num(row[0], int64(x.Pid))
		h("process %d parent", i).num(row[1], int64(x.ParentPid))
		h("process %d forked by", i).str(row[2], shown(x.ForkedBy))
		h("process %d exe", i).str(row[3], x.StartedAs)
		switch x.State {
		case summary.ProcExited:
			h("process %d exit", i).num(row[4], int64(x.ExitCode))
		case summary.ProcKilled:
			h("process %d exit", i).str(row[4], "")
		default: // running, exec: never an exit code 0
			h("process %d exit", i).str(row[4], x.State)
		}
		h("process %d signal", i).str(row[5], x.Signal)
	}
}

// TestFormatsAgree reads every format back and compares it with the
// report: JSON and CSV exactly, table and markdown at their precision.
func TestFormatsAgree(t *testing.T) {
	for name, r := range reports(t) {
		var tb, md bytes.Buffer
		must(t, summary.WriteTable(&tb, r))
		must(t, summary.WriteMarkdown(&md, r))
		checkHuman(t, name+" table", parseTable(t, tb.String()), r)
		checkHuman(t, name+" markdown", parseMarkdown(t, md.String()), r)
		// the JSON and CSV read back equal the report (tests above), so
		// the four formats carry the same numbers.
		var js, cs bytes.Buffer
		must(t, summary.WriteJSON(&js, r))
		must(t, summary.WriteCSV(&cs, r))
		var fromJSON summary.Report
		must(t, json.Unmarshal(js.Bytes(), &fromJSON))
		fromCSV := parseCSV(t, cs.Bytes())
		fromCSV.Meta.Warnings = nil
		if !reflect.DeepEqual(csvVisible(&fromJSON), fromCSV) {
			t.Errorf("%s: JSON and CSV differ", name)
		}
	}
}

// encodingJSON is r as encoding/json writes it, indented by two spaces
// and without HTML escapes: the layout WriteJSON keeps.
func encodingJSON(t *testing.T, r *summary.Report) string {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	must(t, enc.Encode(r))
	return b.String()
}

// TestJSONLayout checks that WriteJSON writes exactly what encoding/json
// would, so the layout stays the standard one.
func TestJSONLayout(t *testing.T) {
	rs := reports(t)
	odd := mustCompute(t, modeltest.Sample(), summary.Options{})
	odd.Meta.Command = []string{}
	odd.Meta.Exe = "/tmp/\"q\"\\ \u2028 \x01 é <&>"
	odd.Functions[0].SelfPct, odd.Functions[1].SelfPct, odd.Functions[2].SelfPct = 1e-7, 3e21, 0.1+0.2
	odd.Edges = odd.Edges[:0]
	rs["odd"] = odd
	for name, r := range rs {
		var got bytes.Buffer
		must(t, summary.WriteJSON(&got, r))
		if want := encodingJSON(t, r); got.String() != want {
			t.Errorf("%s: WriteJSON differs from encoding/json:\n%s\nwant\n%s", name, got.String(), want)
		}
	}
}

// TestCSVLayout checks that WriteCSV quotes as encoding/csv does: its
// records, written again by encoding/csv, give the same bytes.
func TestCSVLayout(t *testing.T) {
	rs := reports(t)
	odd := mustCompute(t, modeltest.Sample(), summary.Options{})
	odd.Meta.Exe = " lead\"q\",x\ny\r\\."
	odd.Functions[0].Name, odd.Functions[1].Name = `\.`, "\tf"
	rs["odd"] = odd
	for name, r := range rs {
		var got, want bytes.Buffer
		must(t, summary.WriteCSV(&got, r))
		recs, err := csv.NewReader(bytes.NewReader(got.Bytes())).ReadAll()
		must(t, err)
		cw := csv.NewWriter(&want)
		must(t, cw.WriteAll(recs))
		if got.String() != want.String() {
			t.Errorf("%s: WriteCSV differs from encoding/csv:\n%s\nwant\n%s", name, got.String(), want.String())
		}
	}
}
