package export

import (
	"bufio"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/profile-dev/profile/model"
)

// The Chrome Trace Event Format (docs/export.md): the JSON Perfetto UI,
// chrome://tracing and speedscope open. A profile's detail trees
// (record --detail) become complete events on their threads' timelines;
// processes and threads are named by metadata events; a spawned thread or
// forked process is a flow arrow from its parent. The CCTs have no
// timeline and are left out: a profile without detail trees is a trace
// with names only (and a marker per thread).

// ErrChromeComposite is the error of a merged profile: its threads are
// composites of several runs' threads, with no timeline of their own.
var ErrChromeComposite = errors.New("a merged profile has no timeline (merge keeps no detail trees): export the recorded profiles one by one")

// Chrome event categories.
const (
	ChromeKept     = "kept"     // a call that met the --detail rule
	ChromeAncestor = "ancestor" // a call kept for a kept call inside it
	ChromeSpawn    = "spawn"    // a thread spawned by another (flow, marker)
	ChromeFork     = "fork"     // a process forked by another (flow, marker)
	ChromeThread   = "thread"   // the marker of a thread without detail calls
)

// ChromeNoCalls names the marker of a thread without detail calls.
const ChromeNoCalls = "no detail calls"

// chromeEvent is one trace event; field order is the JSON's.
type chromeEvent struct {
	Name string         `json:"name"`
	Cat  string         `json:"cat,omitempty"`
	Ph   string         `json:"ph"`
	Ts   *micros        `json:"ts,omitempty"`  // absent on metadata
	Dur  *micros        `json:"dur,omitempty"` // complete events only
	Pid  int            `json:"pid"`
	Tid  int            `json:"tid"`
	S    string         `json:"s,omitempty"`  // instant scope: "t" (thread)
	ID   int            `json:"id,omitempty"` // flow id
	BP   string         `json:"bp,omitempty"` // flow end binding: "e" (enclosing)
	Args map[string]any `json:"args,omitempty"`
}

// chromeOther is the trace's otherData: how the profile was made.
type chromeOther struct {
	Tool         string `json:"tool"`
	Command      string `json:"command,omitempty"`
	Mode         string `json:"mode,omitempty"`
	Start        string `json:"start,omitempty"` // RFC 3339, ns
	DurationNs   int64  `json:"duration_ns"`
	Detail       string `json:"detail"` // the functions' regular expression, "" for none
	DetailSlowNs int64  `json:"detail_slow_ns,omitempty"`
	DetailIf     string `json:"detail_if,omitempty"`
	DetailLimit  int    `json:"detail_limit,omitempty"`
	DroppedTrees int64  `json:"dropped_trees,omitempty"`
	Partial      string `json:"partial,omitempty"`
	Warnings     string `json:"warnings,omitempty"`
}

// CheckChrome tells whether p can be a Chrome trace: not a merged
// profile (ErrChromeComposite).
func CheckChrome(p *model.Profile) error {
	for i := range p.Threads {
		if len(p.Threads[i].Members) > 0 {
			return ErrChromeComposite
		}
	}
	return nil
}

// ChromeTrees counts p's detail trees: with none, a Chrome trace has
// nothing to show but names.
func ChromeTrees(p *model.Profile) int {
	n := 0
	for i := range p.Threads {
		n += len(p.Threads[i].Trees)
	}
	return n
}

// WriteChrome writes p's detail trees in the Chrome Trace Event Format's
// object form: {"traceEvents": [...], "displayTimeUnit": "ms",
// "otherData": {...}}, one event a line.
func WriteChrome(w io.Writer, p *model.Profile, _ Options) error {
	events, err := chromeEvents(p)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	// Function names keep their <, > and &: nothing here is HTML.
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	bw.WriteString(`{"traceEvents":[` + "\n")
	for i := range events {
		if i > 0 {
			bw.WriteString(",")
		}
		if err := enc.Encode(&events[i]); err != nil {
			return fmt.Errorf("chrome: %w", err)
		}
	}
	bw.WriteString(`],` + "\n" + `"displayTimeUnit":"ms",` + "\n" + `"otherData":`)
	if err := enc.Encode(chromeOtherData(p)); err != nil {
		return fmt.Errorf("chrome: %w", err)
	}
	bw.WriteString("}\n")
	return bw.Flush()
}

// track is one timeline: the threads of one (pid, tid), several when an
// exec replaced the process image.
type track struct {
	pid, tid int
	names    []string
	calls    []model.DetailCall // deduplicated, in file order once sorted
	seen     map[callKey]int    // index in calls
	extras   []extra
}

// callKey identifies a call of a thread: an ancestor is repeated in every
// tree cut while it ran. Depth is the call's depth on the thread's stack,
// so that a recursive call entered in the same nanosecond stays apart.
type callKey struct {
	fn, depth int
	start     int64
}

// extra are events other than calls, placed after calls[after] (-1:
// before them all): at one place, a thread's no-calls marker, then the
// flow ends that bind to it or to calls[after] (at its time), then the
// flow starts (at their time, no earlier), each kind in time order.
type extra struct {
	after  int
	kind   extraKind
	ts     int64
	events []chromeEvent
}

type extraKind int

const (
	noCallsMarker extraKind = iota
	flowEnd
	flowStart
)

// chromeEvents builds the trace: metadata first, then each track's events
// in time order.
func chromeEvents(p *model.Profile) ([]chromeEvent, error) {
	if err := CheckChrome(p); err != nil {
		return nil, fmt.Errorf("chrome: %w", err)
	}
	tracks, of := chromeTracks(p)
	for _, tr := range tracks {
		if len(tr.calls) == 0 {
			tr.add(-1, noCallsMarker, 0, chromeEvent{Name: ChromeNoCalls, Cat: ChromeThread, Ph: "i", S: "t",
				Ts: at(0), Pid: tr.pid, Tid: tr.tid})
		}
	}
	chromeFlows(p, of)

	var events []chromeEvent
	events = append(events, processNames(p)...)
	for _, tr := range tracks {
		events = append(events, chromeEvent{Name: "thread_name", Ph: "M", Pid: tr.pid, Tid: tr.tid,
			Args: map[string]any{"name": strings.Join(tr.names, " → ")}})
	}
	for _, tr := range tracks {
		events = tr.emit(p, events)
	}
	return events, nil
}

// chromeTracks gathers the threads into tracks, in thread order, with
// their calls sorted and nested; of maps a thread index to its track.
func chromeTracks(p *model.Profile) (tracks []*track, of []*track) {
	byKey := map[[2]int]*track{}
	of = make([]*track, len(p.Threads))
	for ti := range p.Threads {
		t := &p.Threads[ti]
		key := [2]int{p.Processes[t.Process].Pid, t.Tid}
		tr := byKey[key]
		if tr == nil {
			tr = &track{pid: key[0], tid: key[1], seen: map[callKey]int{}}
			byKey[key] = tr
			tracks = append(tracks, tr)
		}
		of[ti] = tr
		name := cmp.Or(t.Name, "thread")
		if !slices.Contains(tr.names, name) {
			tr.names = append(tr.names, name)
		}
		for _, tree := range t.Trees {
			for _, c := range tree.Calls {
				tr.addCall(c)
			}
		}
	}
	for _, tr := range tracks {
		tr.sortCalls()
	}
	return tracks, of
}

// addCall adds c unless the track has it already. The copies of a call
// are alike (the trees share their ancestors); should one be the kept
// call and another not, the kept one wins.
func (tr *track) addCall(c model.DetailCall) {
	k := callKey{c.Func, c.Depth, c.StartNs}
	i, ok := tr.seen[k]
	switch {
	case !ok:
		tr.seen[k] = len(tr.calls)
		tr.calls = append(tr.calls, c)
	case c.Flags.Has(model.DetailKept) && !tr.calls[i].Flags.Has(model.DetailKept):
		tr.calls[i] = c
	}
}

// sortCalls orders the calls by start, the longer (the caller) first on
// ties, then clamps a call that would end after its caller: complete
// events must nest, and the calls of one thread do, but a reader drops an
// overlapping event rather than show it, so the trace never has one.
func (tr *track) sortCalls() {
	slices.SortStableFunc(tr.calls, func(a, b model.DetailCall) int {
		return cmp.Or(cmp.Compare(a.StartNs, b.StartNs), cmp.Compare(b.EndNs, a.EndNs), cmp.Compare(a.Depth, b.Depth))
	})
	var open []int64 // ends of the enclosing calls
	for i := range tr.calls {
		c := &tr.calls[i]
		for len(open) > 0 && open[len(open)-1] <= c.StartNs {
			open = open[:len(open)-1]
		}
		if len(open) > 0 && c.EndNs > open[len(open)-1] {
			c.EndNs = open[len(open)-1]
		}
		open = append(open, c.EndNs)
	}
	tr.seen = nil
}

// firstCall is the index of the track's first call starting at or after
// ns; len(calls) if none.
func (tr *track) firstCall(ns int64) int {
	i, _ := slices.BinarySearchFunc(tr.calls, ns, func(c model.DetailCall, ns int64) int { return cmp.Compare(c.StartNs, ns) })
	return i
}

// add places events after calls[after].
func (tr *track) add(after int, kind extraKind, ts int64, events ...chromeEvent) {
	tr.extras = append(tr.extras, extra{after: after, kind: kind, ts: ts, events: events})
}

// emit appends the track's calls and extras to events, in time order.
func (tr *track) emit(p *model.Profile, events []chromeEvent) []chromeEvent {
	slices.SortStableFunc(tr.extras, func(a, b extra) int {
		return cmp.Or(cmp.Compare(a.after, b.after), cmp.Compare(a.kind, b.kind), cmp.Compare(a.ts, b.ts))
	})
	x := 0
	flush := func(after int) {
		for ; x < len(tr.extras) && tr.extras[x].after == after; x++ {
			events = append(events, tr.extras[x].events...)
		}
	}
	flush(-1)
	for i := range tr.calls {
		events = append(events, callEvent(p, tr, &tr.calls[i]))
		flush(i)
	}
	return events
}

// callEvent is a call's complete event: its arguments when they were read
// (only the function's parameters when their number is known), its return
// value when it returned, and what else its flags say.
func callEvent(p *model.Profile, tr *track, c *model.DetailCall) chromeEvent {
	e := chromeEvent{Name: p.FuncName(c.Func), Cat: ChromeAncestor, Ph: "X", Ts: at(c.StartNs), Dur: at(c.EndNs - c.StartNs),
		Pid: tr.pid, Tid: tr.tid}
	if c.Flags.Has(model.DetailKept) {
		e.Cat = ChromeKept
	}
	args := map[string]any{}
	if c.Flags.Has(model.DetailArgs) {
		n := c.NArgs
		if n < 0 || n > len(c.Args) {
			n = len(c.Args)
		}
		for i := range n {
			args[fmt.Sprintf("arg%d", i)] = register(c.Args[i])
		}
	}
	if c.Flags.Has(model.DetailReturned) {
		args["ret"] = register(c.Ret)
	}
	if c.Flags.Has(model.DetailOpen) {
		args["open"] = true // still running at the end: dur runs to then
	} else if !c.Flags.Has(model.DetailReturned) {
		args["returned"] = false // left by longjmp, an exception or a tail call
	}
	if c.Flags.Has(model.DetailInFlight) {
		args["in_flight"] = true // running before tracing began: ts is then
	}
	if len(args) > 0 {
		e.Args = args
	}
	return e
}

// processNames are the process_name metadata events, one per pid: its
// images' names, in order, when an exec replaced one.
func processNames(p *model.Profile) []chromeEvent {
	var pids []int
	names := map[int][]string{}
	for _, pr := range p.Processes {
		name := filepath.Base(pr.Exe)
		if pr.Exe == "" && len(pr.Argv) > 0 {
			name = filepath.Base(pr.Argv[0])
		}
		if name == "." || name == "" {
			name = fmt.Sprintf("pid %d", pr.Pid)
		}
		if _, ok := names[pr.Pid]; !ok {
			pids = append(pids, pr.Pid)
		}
		if n := names[pr.Pid]; len(n) == 0 || n[len(n)-1] != name {
			names[pr.Pid] = append(n, name)
		}
	}
	events := make([]chromeEvent, 0, len(pids))
	for _, pid := range pids {
		events = append(events, chromeEvent{Name: "process_name", Ph: "M", Pid: pid, Tid: pid,
			Args: map[string]any{"name": strings.Join(names[pid], " → ")}})
	}
	return events
}

func chromeOtherData(p *model.Profile) chromeOther {
	m := &p.Meta
	o := chromeOther{Tool: strings.TrimSpace("profile " + m.ToolVersion), Command: strings.Join(m.Command, " "),
		Mode: m.Mode, DurationNs: m.DurationNs, Partial: m.PartialReason, Warnings: strings.Join(m.Warnings, "; ")}
	if m.StartUnixNs != 0 {
		o.Start = time.Unix(0, m.StartUnixNs).UTC().Format(time.RFC3339Nano)
	}
	if m.Partial && o.Partial == "" {
		o.Partial = "yes"
	}
	if d := m.Detail; d != nil {
		o.Detail, o.DetailSlowNs, o.DetailIf, o.DetailLimit = d.Funcs, d.SlowNs, d.If, d.Limit
	}
	for i := range p.Threads {
		o.DroppedTrees += p.Threads[i].DroppedTrees
	}
	return o
}
