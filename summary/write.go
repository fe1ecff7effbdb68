package summary

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/profile-dev/profile/internal/human"
	"github.com/profile-dev/profile/internal/tables"
	"github.com/profile-dev/profile/model"
	"github.com/profile-dev/profile/names"
)

// CSVHeader is the header record of WriteCSV. Every record names its
// section (a key of the JSON document) first and fills the columns of
// that section's fields; meta and totals are key/value records.
var CSVHeader = []string{
	"section", "key", "value",
	"name", "module", "caller", "callee", "caller_module", "callee_module", "kind",
	"calls", "recursive_calls", "self_ns", "total_ns", "self_pct", "total_pct",
	"tid", "pid", "parent_tid", "spawned_by", "nesting_level", "traced_ns",
	"parent_pid", "forked_by", "exe", "exit_code", "signal", "state",
	"counted",
}

// WriteCSV writes r as one CSV: the CSVHeader record, then the records of
// the sections meta, totals, functions, edges, modules, threads and
// processes, with the numbers of WriteJSON (meta's command is a JSON
// array of strings, its cpu_samples a JSON object or null): a counted
// function or edge has counted "true" and its time cells empty. Quoting
// follows encoding/csv.
func WriteCSV(w io.Writer, r *Report) error {
	c := &csvWriter{w: w, cells: make([][]byte, len(CSVHeader)), col: make(map[string]int, len(CSVHeader))}
	for i, h := range CSVHeader {
		c.col[h] = i
		c.cells[i] = append(c.cells[i], h...)
	}
	c.end()
	cmd, _ := json.Marshal(r.Meta.Command)
	m := r.Meta
	samples, err := json.Marshal(m.CPUSamples)
	if err != nil {
		return err
	}
	for _, kv := range [][2]any{{"format", r.Format}, {"command", string(cmd)}, {"exe", m.Exe}, {"pid", m.Pid},
		{"mode", m.Mode}, {"duration_ns", m.DurationNs}, {"partial", m.Partial}, {"detached", m.Detached}, {"stops", m.Stops},
		{"traced_calls", m.TracedCalls}, {"cpu_samples", string(samples)}} {
		c.rec("meta", "key", kv[0], "value", kv[1])
	}
	t := r.Totals
	for _, kv := range [][2]any{{"nodes", t.Nodes}, {"edges", t.Edges}, {"calls", t.Calls},
		{"direct_calls", t.DirectCalls}, {"indirect_calls", t.IndirectCalls}, {"plt_calls", t.PLTCalls},
		{"threads", t.Threads}, {"processes", t.Processes}, {"max_nesting_level", t.MaxNestingLevel},
		{"max_recursion_depth", t.MaxRecursionDepth}, {"traced_ns", t.TracedNs}, {"blocked_ns", t.BlockedNs}, {"waiting_cpu_ns", t.WaitingCPUNs},
		{"wall_ns", t.WallNs}, {"times", t.Times}, {"sampled", t.Sampled}, {"busy_sampled", t.BusySampled},
		{"waiting_cpu_sampled", t.WaitingCPU}} {
		c.rec("totals", "key", kv[0], "value", kv[1])
	}
	col := c.col
	for i := range r.Functions {
		f := &r.Functions[i]
		c.str(0, "functions")
		c.str(col["name"], f.Name)
		c.str(col["module"], f.Module)
		c.int(col["calls"], f.Calls)
		c.int(col["recursive_calls"], f.RecursiveCalls)
		if f.Counted {
			c.str(col["counted"], "true")
		} else {
			c.int(col["self_ns"], f.SelfNs)
			c.int(col["total_ns"], f.TotalNs)
			c.float(col["self_pct"], f.SelfPct)
			c.float(col["total_pct"], f.TotalPct)
		}
		c.end()
	}
	cCaller, cCallee, cCallerMod, cCalleeMod := col["caller"], col["callee"], col["caller_module"], col["callee_module"]
	cKind, cCalls, cRC, cTotal, cPct := col["kind"], col["calls"], col["recursive_calls"], col["total_ns"], col["total_pct"]
	cCounted := col["counted"]
	for i := range r.Edges {
		e := &r.Edges[i]
		c.str(0, "edges")
		c.str(cCaller, e.Caller)
		c.str(cCallee, e.Callee)
		c.str(cCallerMod, e.CallerModule)
		c.str(cCalleeMod, e.CalleeModule)
		c.str(cKind, e.Kind)
		c.int(cCalls, e.Calls)
		c.int(cRC, e.RecursiveCalls)
		if e.Counted {
			c.str(cCounted, "true")
		} else {
			c.int(cTotal, e.TotalNs)
			c.float(cPct, e.TotalPct)
		}
		c.end()
	}
	for _, md := range r.Modules {
		c.rec("modules", "module", md.Module, "self_ns", md.SelfNs, "self_pct", md.SelfPct)
	}
	for _, th := range r.Threads {
		c.rec("threads", "tid", th.Tid, "pid", th.Pid, "name", th.Name, "parent_tid", th.ParentTid,
			"spawned_by", th.SpawnedBy, "nesting_level", th.NestingLevel, "traced_ns", th.TracedNs)
	}
	for _, p := range r.Processes {
		c.rec("processes", "pid", p.Pid, "parent_pid", p.ParentPid, "forked_by", p.ForkedBy, "exe", p.Exe,
			"exit_code", p.ExitCode, "signal", p.Signal, "state", p.State)
	}
	return c.flush(true)
}

// csvWriter builds one record at a time in reused cells.
type csvWriter struct {
	w     io.Writer
	b     []byte
	cells [][]byte
	col   map[string]int
	err   error
}

// rec writes a record of section with (column, value) pairs.
func (c *csvWriter) rec(section string, kv ...any) {
	c.str(0, section)
	for i := 0; i < len(kv); i += 2 {
		k := c.col[kv[i].(string)]
		switch x := kv[i+1].(type) {
		case string:
			c.str(k, x)
		case int:
			c.int(k, int64(x))
		case int64:
			c.int(k, x)
		case float64:
			c.float(k, x)
		case bool:
			c.cells[k] = strconv.AppendBool(c.cells[k][:0], x)
		default:
			panic(fmt.Sprintf("summary: csv value %T", x))
		}
	}
	c.end()
}

func (c *csvWriter) int(k int, v int64) { c.cells[k] = strconv.AppendInt(c.cells[k][:0], v, 10) }

func (c *csvWriter) float(k int, v float64) {
	c.cells[k] = strconv.AppendFloat(c.cells[k][:0], v, 'f', -1, 64)
}

// str sets a text cell, quoted as encoding/csv would quote it.
func (c *csvWriter) str(k int, s string) {
	b := c.cells[k][:0]
	if !csvNeedsQuotes(s) {
		c.cells[k] = append(b, s...)
		return
	}
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' {
			b = append(b, '"')
		}
		b = append(b, s[i])
	}
	c.cells[k] = append(b, '"')
}

func csvNeedsQuotes(s string) bool {
	if s == "" {
		return false
	}
	if s == `\.` || strings.ContainsAny(s, "\",\r\n") {
		return true
	}
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsSpace(r)
}

// end writes the record and clears the cells.
func (c *csvWriter) end() {
	for i, cell := range c.cells {
		if i > 0 {
			c.b = append(c.b, ',')
		}
		c.b = append(c.b, cell...)
		c.cells[i] = cell[:0]
	}
	c.b = append(c.b, '\n')
	c.flush(false)
}

func (c *csvWriter) flush(final bool) error {
	if c.err == nil && (final || len(c.b) >= 1<<15) {
		_, c.err = c.w.Write(c.b)
		c.b = c.b[:0]
	}
	return c.err
}

// cell kinds of the human formats
const text, symbol, number = tables.Text, tables.Symbol, tables.Number

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// detachedText is the "detached" row: a detach is how a window of a
// running target ends, said so that "partial no" is not read as "it ran
// to its end".
func detachedText(detached bool) string {
	if detached {
		return "yes (the target went on running)"
	}
	return "no"
}

// exitText is the "exit code" cell: the status of an image that exited,
// never a 0 for one that did not.
func exitText(x Process) string {
	switch x.State {
	case ProcRunning, ProcExec:
		return x.State
	case ProcKilled:
		return "-" // the signal column says how
	}
	return strconv.Itoa(x.ExitCode)
}

func levelSuffix(l int) string {
	if l == model.None {
		return ""
	}
	return fmt.Sprintf(" [L%d]", l)
}

// sections lays r out for the human formats: times with three significant
// digits, percentages with two decimals, empty names as "-".
func sections(r *Report) []tables.Table {
	d, pc, n := human.Duration, human.Percent, func(v int64) string { return strconv.FormatInt(v, 10) }
	i := func(v int) string { return strconv.Itoa(v) }
	calls := n // call counts; a sampled profile has none
	if r.Totals.Sampled {
		calls = func(int64) string { return "-" }
	}
	kv := []tables.Kind{text, number}
	m, t := r.Meta, r.Totals
	scope := cmp.Or(r.Scope.String(), "whole profile")
	timeRow := []string{"traced time", d(t.TracedNs)}
	switch {
	case t.BusySampled:
		timeRow = []string{"busy time (sampled CPU)", d(t.TracedNs)}
	case t.Times == "busy":
		timeRow = []string{"busy time (blocked taken out)", d(t.TracedNs)}
	}
	out := []tables.Table{
		{Title: "Profile", Header: []string{"field", "value"}, Kinds: []tables.Kind{text, text}, Rows: [][]string{
			{"command", orDash(strings.Join(m.Command, " "))}, {"exe", orDash(m.StartedAs)}, {"pid", i(m.Pid)},
			{"mode", orDash(m.Mode)}, {"duration", d(m.DurationNs)}, {"partial", yesNo(m.Partial)}, {"detached", detachedText(m.Detached)},
			{"stops", n(m.Stops)}, {"traced calls", n(m.TracedCalls)}, {"scope", scope},
		}},
		{Title: "Totals", Header: []string{"metric", "value"}, Kinds: kv, Rows: [][]string{
			{"nodes", i(t.Nodes)}, {"edges", i(t.Edges)}, {"calls", calls(t.Calls)},
			{"direct calls", calls(t.DirectCalls)}, {"indirect calls", calls(t.IndirectCalls)}, {"PLT calls", calls(t.PLTCalls)},
			{"threads", i(t.Threads)}, {"processes", i(t.Processes)}, {"max nesting level", i(t.MaxNestingLevel)},
			{"max recursion depth", i(t.MaxRecursionDepth)}, timeRow,
			{"blocked time", d(t.BlockedNs)}, {"blocked share", pc(pctOf(t.BlockedNs, t.WallNs))},
		}},
	}
	if t.WaitingCPU {
		out[1].Rows = append(out[1].Rows, []string{"on a CPU in waiting calls", d(t.WaitingCPUNs)})
	}
	if t.Sampled {
		out[0].Rows = append(out[0].Rows, []string{"values", r.Values})
	}
	if c := m.CPUSamples; c != nil {
		out[0].Rows = append(out[0].Rows, []string{"busy times", busyTimesText(c, t.Times == "busy")})
	}
	for _, w := range m.Warnings {
		out[0].Rows = append(out[0].Rows, []string{"warning", w})
	}
	fs := tables.Table{Title: fmt.Sprintf("Hottest functions (by self time, %d of %d)", len(r.Functions), r.AllFuncs),
		Header: []string{"function", "module", "calls", "rc", "self", "self %", "total", "total %"},
		Kinds:  []tables.Kind{symbol, text, number, number, number, number, number, number}}
	for _, f := range r.Functions {
		fs.Rows = append(fs.Rows, append([]string{r.shown(f.Name), orDash(f.Module), calls(f.Calls), calls(f.RecursiveCalls)},
			funcTimes(&f.FuncNumbers)...))
	}
	fs.Note = countedNote(tracedLaterNote(r), r)
	es := tables.Table{Title: fmt.Sprintf("Hottest edges (by total time, %d of %d)", len(r.Edges), r.AllEdges),
		Header: []string{"caller", "callee", "kind", "calls", "rc", "total", "total %"},
		Kinds:  []tables.Kind{symbol, symbol, text, number, number, number, number}}
	for _, e := range r.Edges {
		es.Rows = append(es.Rows, append([]string{e.CallerDisplay, e.CalleeDisplay, e.Kind, calls(e.Calls), calls(e.RecursiveCalls)},
			edgeTimes(&e.EdgeNumbers)...))
	}
	hp := tables.Table{Title: "Hottest path (from START, hottest callee by total time)",
		Header: []string{"step", "function", "calls", "total", "total %"},
		Kinds:  []tables.Kind{number, symbol, number, number, number}}
	for k, s := range r.HottestPath {
		hp.Rows = append(hp.Rows, []string{i(k + 1), s.Display + levelSuffix(s.Level), calls(s.Calls), d(s.TotalNs), pc(s.TotalPct)})
	}
	rs := tables.Table{Title: "Recursion (rc: recursive calls; depth: most activations on one path)",
		Header: []string{"function", "calls", "rc", "max depth"}, Kinds: []tables.Kind{symbol, number, number, number}}
	for _, x := range r.Recursion {
		rs.Rows = append(rs.Rows, []string{x.Display, calls(x.Calls), calls(x.RecursiveCalls), i(x.MaxDepth)})
	}
	bs := tables.Table{Title: "Blocked in waiting calls (outermost only)",
		Header: []string{"function", "calls", "blocked", "blocked %"}, Kinds: []tables.Kind{symbol, number, number, number}}
	if t.WaitingCPU {
		bs.Title = "Blocked in waiting calls (outermost only; on-CPU: CPU time sampled inside them, not blocked)"
		bs.Header = []string{"function", "calls", "wall", "on-CPU", "blocked", "blocked %"}
		bs.Kinds = []tables.Kind{symbol, number, number, number, number, number}
	}
	for _, x := range r.Blocking {
		row := []string{x.Display, calls(x.Calls), d(x.BlockedNs), pc(x.Pct)}
		if t.WaitingCPU {
			row = []string{x.Display, calls(x.Calls), d(x.WallNs), d(x.OnCPUNs), d(x.BlockedNs), pc(x.Pct)}
		}
		bs.Rows = append(bs.Rows, row)
	}
	ms := tables.Table{Title: "Modules (self time of their functions)",
		Header: []string{"module", "self", "self %"}, Kinds: []tables.Kind{text, number, number}}
	for _, x := range r.Modules {
		name := x.Module
		if x.DynamicOnly {
			name += " (dynamic symbols only)"
		}
		ms.Rows = append(ms.Rows, []string{name, d(x.SelfNs), pc(x.SelfPct)})
	}
	ts := tables.Table{Title: "Threads",
		Header: []string{"tid", "pid", "name", "parent tid", "spawned by", "level", "traced"},
		Kinds:  []tables.Kind{number, number, text, number, symbol, number, number}}
	for _, x := range r.Threads {
		ts.Rows = append(ts.Rows, []string{i(x.Tid), i(x.Pid), orDash(x.Name), i(x.ParentTid), orDash(r.shown(x.SpawnedBy)),
			i(x.NestingLevel), d(x.TracedNs)})
	}
	ls := tables.Table{Title: "Levels of multithreading", Header: []string{"level", "threads", "traced"},
		Kinds: []tables.Kind{number, number, number}}
	for _, x := range r.Levels {
		ls.Rows = append(ls.Rows, []string{i(x.Level), i(x.Threads), d(x.TracedNs)})
	}
	ps := tables.Table{Title: "Processes",
		Header: []string{"pid", "parent pid", "forked by", "exe", "exit code", "signal"},
		Kinds:  []tables.Kind{number, number, symbol, text, number, text}}
	for _, x := range r.Processes {
		ps.Rows = append(ps.Rows, []string{i(x.Pid), i(x.ParentPid), orDash(r.shown(x.ForkedBy)), orDash(x.StartedAs), exitText(x),
			orDash(x.Signal)})
	}
	ts, byThread := threadSections(r, ts)
	return append(append(out, fs, es, hp, rs, bs, ms, ts, ls, ps), byThread...)
}

// busyTimesText is the profile table's "busy times" row of a profile
// with CPU samples: sampled, how, and whether these tables show them.
func busyTimesText(c *CPUSamples, busy bool) string {
	if busy {
		return "sampled: " + c.model().String()
	}
	return "sampled (not shown: --scope wall): " + c.model().String()
}

// tracedLaterNote is the note under the functions table when some listed
// function was traced only from later in the run (record --auto-expand)
// or only until its hot trap probe was taken out,
// in the table's order with names as the table shows them; nil when none.
func tracedLaterNote(r *Report) []tables.Span {
	note := timesNote(nil, r, "traced only from later in the run (counts from then on): ", " from ",
		func(f Function) int64 { return f.TracedSinceNs })
	return timesNote(note, r, "traced only until its probe was taken out (a hot trap probe; counts until then): ", " until ",
		func(f Function) int64 { return f.TracedUntilNs })
}

// timesNote appends to note, after head (and "; " when note has a part
// already), each listed function whose time at is set, with word and the
// time; note unchanged when none.
func timesNote(note []tables.Span, r *Report, head, word string, at func(Function) int64) []tables.Span {
	first := true
	for _, f := range r.Functions {
		if at(f) <= 0 {
			continue
		}
		sep := ", "
		if first {
			sep, first = head, false
			if note != nil {
				sep = "; " + head
			}
		}
		note = append(note, tables.Span{Text: sep}, tables.Span{Text: r.shown(f.Name), Symbol: true},
			tables.Span{Text: word + model.FormatOffset(at(f))})
	}
	return note
}

// shown is a function's name as the tables show it: shortened
// (names.Short) unless FullNames. JSON and CSV carry names in full.
func (r *Report) shown(name string) string {
	if r.FullNames {
		return name
	}
	return names.Short(name)
}

func pctOf(ns, base int64) float64 {
	if base <= 0 {
		return 0
	}
	return 100 * float64(ns) / float64(base)
}

// WriteTable writes r as text tables for a terminal.
func WriteTable(w io.Writer, r *Report) error { return tables.WriteText(w, sections(r)) }

// WriteMarkdown writes r as GitHub-flavoured markdown: a heading and a
// pipe table per section. Function names are code spans.
func WriteMarkdown(w io.Writer, r *Report) error {
	return tables.WriteMarkdown(w, "Profile summary", sections(r))
}
