// Package chrometest checks a Chrome Trace Event Format file (the JSON
// object form) as the readers need it, for the tests of export's chrome
// format: Perfetto's trace_processor is not at hand offline, so this is
// the acceptance. It checks the fields each phase requires, each thread's
// events in time order, complete events that nest (no partial overlap),
// flow start and end events that pair up and bind to an event enclosing
// them, metadata naming every process and thread that has events, and
// times that Perfetto reads to the nanosecond they mean.
package chrometest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"
)

// Event is one checked trace event.
type Event struct {
	Index       int // position in traceEvents
	Name, Cat   string
	Ph          string
	Pid, Tid    int
	TsNs, DurNs int64 // ts and dur, exact (0 when absent)
	S, BP, ID   string
	Args        map[string]any // numbers are json.Number
	Ts, Dur     string         // as written
	HasTs       bool
	Enclosing   int // flow events: index of the event they bind to, -1 if none
	endNs       int64
}

// Trace is a checked trace.
type Trace struct {
	Events          []Event
	DisplayTimeUnit string
	OtherData       map[string]any
	ProcessNames    map[int]string
	ThreadNames     map[[2]int]string
}

// Phases this checker knows; any other is an error.
var phases = map[string]bool{"X": true, "i": true, "I": true, "M": true, "s": true, "f": true}

// metadata names this checker knows.
var metaNames = map[string]bool{"process_name": true, "thread_name": true,
	"process_sort_index": true, "thread_sort_index": true, "process_labels": true}

// Check parses and checks a trace; the error lists every problem found
// (at most 20).
func Check(data []byte) (*Trace, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var top map[string]json.RawMessage
	if err := dec.Decode(&top); err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	if _, err := dec.Token(); err == nil {
		return nil, errors.New("data after the JSON object")
	}
	c := &checker{tr: &Trace{ProcessNames: map[int]string{}, ThreadNames: map[[2]int]string{}}}
	raw, ok := top["traceEvents"]
	if !ok {
		return nil, errors.New(`no "traceEvents"`)
	}
	var events []map[string]any
	if err := decode(raw, &events); err != nil {
		return nil, fmt.Errorf("traceEvents: %w", err)
	}
	if u, ok := top["displayTimeUnit"]; ok {
		if err := decode(u, &c.tr.DisplayTimeUnit); err != nil || c.tr.DisplayTimeUnit != "ms" && c.tr.DisplayTimeUnit != "ns" {
			c.errorf(-1, "displayTimeUnit %s: want \"ms\" or \"ns\"", u)
		}
	}
	if o, ok := top["otherData"]; ok {
		if err := decode(o, &c.tr.OtherData); err != nil {
			c.errorf(-1, "otherData: %v", err)
		}
	}
	for i, m := range events {
		if e, ok := c.event(i, m); ok {
			c.tr.Events = append(c.tr.Events, e)
		}
	}
	c.threads()
	c.flows()
	c.metadata()
	return c.tr, errors.Join(c.errs...)
}

func decode(raw json.RawMessage, v any) error {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	return d.Decode(v)
}

type checker struct {
	tr   *Trace
	errs []error
}

func (c *checker) errorf(i int, format string, a ...any) {
	if len(c.errs) == 20 {
		c.errs = append(c.errs, errors.New("more problems left out"))
	}
	if len(c.errs) > 20 {
		return
	}
	msg := fmt.Sprintf(format, a...)
	if i >= 0 {
		msg = fmt.Sprintf("event %d: %s", i, msg)
	}
	c.errs = append(c.errs, errors.New(msg))
}

// event checks the fields of one event for its phase.
func (c *checker) event(i int, m map[string]any) (Event, bool) {
	e := Event{Index: i, Enclosing: -1}
	var ok bool
	if e.Ph, ok = m["ph"].(string); !ok || !phases[e.Ph] {
		c.errorf(i, "phase %v: want one of X, i, I, M, s, f", m["ph"])
		return e, false
	}
	if e.Name, ok = m["name"].(string); !ok || e.Name == "" {
		c.errorf(i, "%s: no name", e.Ph)
	}
	e.Pid = c.integer(i, m, "pid")
	e.Tid = c.integer(i, m, "tid")
	if a, present := m["args"]; present {
		if e.Args, ok = a.(map[string]any); !ok {
			c.errorf(i, "args is not an object")
		}
	}
	if v, present := m["cat"]; present {
		if e.Cat, ok = v.(string); !ok {
			c.errorf(i, "cat is not a string")
		}
	}
	if e.Ph == "M" {
		if !metaNames[e.Name] {
			c.errorf(i, "metadata %q unknown", e.Name)
		}
		if e.Name == "process_name" || e.Name == "thread_name" {
			name, _ := e.Args["name"].(string)
			if name == "" {
				c.errorf(i, "%s without args.name", e.Name)
			} else if e.Name == "process_name" {
				c.tr.ProcessNames[e.Pid] = name
			} else {
				c.tr.ThreadNames[[2]int{e.Pid, e.Tid}] = name
			}
		}
		return e, true
	}
	e.Ts, e.TsNs, e.HasTs = c.time(i, m, "ts")
	if !e.HasTs {
		return e, false
	}
	e.endNs = e.TsNs
	switch e.Ph {
	case "X":
		var has bool
		e.Dur, e.DurNs, has = c.time(i, m, "dur")
		if !has || e.DurNs < 0 {
			c.errorf(i, "X without a non-negative dur")
			return e, false
		}
		if e.Cat == "" {
			c.errorf(i, "X without cat")
		}
		e.endNs = e.TsNs + e.DurNs
	case "i", "I":
		e.S, _ = m["s"].(string)
		if s, present := m["s"]; present && s != "t" && s != "p" && s != "g" {
			c.errorf(i, "instant scope %v: want t, p or g", s)
		}
	case "s", "f":
		switch id := m["id"].(type) {
		case json.Number:
			e.ID = id.String()
		case string:
			e.ID = id
		}
		if e.ID == "" {
			c.errorf(i, "flow %s without id", e.Ph)
		}
		if e.Cat == "" {
			c.errorf(i, "flow %s without cat", e.Ph)
		}
		if bp, present := m["bp"]; present {
			e.BP, _ = bp.(string)
			if e.BP != "e" {
				c.errorf(i, "bp %v: want \"e\"", bp)
			}
		}
	}
	return e, true
}

// integer reads a required non-negative integer field that fits in 32
// bits (pid, tid).
func (c *checker) integer(i int, m map[string]any, key string) int {
	v, present := m[key]
	if !present {
		c.errorf(i, "no %s", key)
		return 0
	}
	n, ok := v.(json.Number)
	x, err := strconv.ParseInt(n.String(), 10, 64)
	if !ok || err != nil || x < 0 || x > 1<<32-1 {
		c.errorf(i, "%s %v: want an integer from 0 to 2^32-1", key, v)
		return 0
	}
	return int(x)
}

// time reads a time field (microseconds) to the nanosecond, and checks
// that both a correctly rounding reader and Perfetto read that nanosecond.
func (c *checker) time(i int, m map[string]any, key string) (string, int64, bool) {
	v, present := m[key]
	n, ok := v.(json.Number)
	if !present || !ok {
		c.errorf(i, "%s: no number %s", m["ph"], key)
		return "", 0, false
	}
	s := n.String()
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		c.errorf(i, "%s %s: not a number", key, s)
		return s, 0, false
	}
	r.Mul(r, big.NewRat(1000, 1))
	// round to the nearest nanosecond
	q, rem := new(big.Int).QuoRem(r.Num(), r.Denom(), new(big.Int))
	if new(big.Int).Mul(new(big.Int).Abs(rem), big.NewInt(2)).Cmp(r.Denom()) >= 0 {
		q.Add(q, big.NewInt(int64(r.Num().Sign())))
	}
	ns := q.Int64()
	if f, err := strconv.ParseFloat(s, 64); err != nil || int64(f*1000) != ns {
		c.errorf(i, "%s %s: a correctly rounding reader takes it for %d ns, not %d", key, s, int64(f*1000), ns)
	}
	if p := perfettoFloat(s); int64(p*1000) != ns {
		c.errorf(i, "%s %s: Perfetto takes it for %d ns, not %d", key, s, int64(p*1000), ns)
	}
	return s, ns, true
}

// perfettoFloat parses a decimal as Perfetto's JSON parser does: integer
// part, plus the decimals' integer over their power of ten.
func perfettoFloat(s string) float64 {
	mant, exp, hasExp := strings.Cut(strings.ToLower(s), "e")
	neg := strings.HasPrefix(mant, "-")
	mant = strings.TrimPrefix(mant, "-")
	whole, frac, _ := strings.Cut(mant, ".")
	var out float64
	for _, d := range whole {
		out = float64(out*10) + float64(d-'0')
	}
	if frac != "" {
		var f, div float64 = 0, 1
		for _, d := range frac {
			f = float64(f*10) + float64(d-'0')
			div = float64(div * 10)
		}
		out += float64(f / div)
	}
	if hasExp {
		x, _ := strconv.Atoi(exp)
		for ; x > 0; x-- {
			out *= 10
		}
		for ; x < 0; x++ {
			out /= 10
		}
	}
	if neg {
		return -out
	}
	return out
}

// threads checks each thread's timed events: in time order in the file,
// complete events nested, and flow events bound to an event enclosing
// them as a reader binds them: the innermost event still open when the
// flow event comes (a flow event closes nothing).
func (c *checker) threads() {
	stacks := map[[2]int][]*Event{}
	last := map[[2]int]int64{}
	for k := range c.tr.Events {
		e := &c.tr.Events[k]
		if e.Ph == "M" || e.S == "p" || e.S == "g" {
			continue
		}
		key := [2]int{e.Pid, e.Tid}
		if t, ok := last[key]; ok && e.TsNs < t {
			c.errorf(e.Index, "%s %q at %d ns before the thread's previous event at %d ns", e.Ph, e.Name, e.TsNs, t)
		}
		last[key] = e.TsNs
		st := stacks[key]
		if e.Ph == "s" || e.Ph == "f" {
			if n := len(st); n > 0 && st[n-1].TsNs <= e.TsNs && e.TsNs <= st[n-1].endNs {
				e.Enclosing = st[n-1].Index
			} else {
				c.errorf(e.Index, "flow %s %q id %s at %d ns: no event encloses it on pid %d tid %d", e.Ph, e.Name, e.ID, e.TsNs, e.Pid, e.Tid)
			}
			continue
		}
		// A slice ends where the next begins; only instants stack on an
		// instant at the same time (Perfetto's rule).
		for n := len(st); n > 0; n = len(st) {
			top := st[n-1]
			if top.endNs < e.TsNs || top.endNs == e.TsNs && !(top.endNs == top.TsNs && e.endNs == e.TsNs) {
				st = st[:n-1]
				continue
			}
			break
		}
		if n := len(st); n > 0 && e.endNs > st[n-1].endNs {
			top := st[n-1]
			c.errorf(e.Index, "%q [%d, %d] ns overlaps %q [%d, %d] ns (event %d) on pid %d tid %d without nesting",
				e.Name, e.TsNs, e.endNs, top.Name, top.TsNs, top.endNs, top.Index, e.Pid, e.Tid)
		}
		stacks[key] = append(st, e)
	}
}

// flows checks that every flow start has one end with the same id,
// category and name, no earlier than it.
func (c *checker) flows() {
	type key struct{ cat, name, id string }
	starts, ends := map[key][]*Event{}, map[key][]*Event{}
	var order []key
	for k := range c.tr.Events {
		e := &c.tr.Events[k]
		kk := key{e.Cat, e.Name, e.ID}
		switch e.Ph {
		case "s":
			if len(starts[kk]) == 0 && len(ends[kk]) == 0 {
				order = append(order, kk)
			}
			starts[kk] = append(starts[kk], e)
		case "f":
			if len(starts[kk]) == 0 && len(ends[kk]) == 0 {
				order = append(order, kk)
			}
			ends[kk] = append(ends[kk], e)
		}
	}
	for _, k := range order {
		s, f := starts[k], ends[k]
		if len(s) != 1 || len(f) != 1 {
			c.errorf(-1, "flow %s/%s id %s: %d starts and %d ends, want one of each", k.cat, k.name, k.id, len(s), len(f))
			continue
		}
		if f[0].TsNs < s[0].TsNs {
			c.errorf(f[0].Index, "flow %s/%s id %s ends at %d ns before it starts at %d ns", k.cat, k.name, k.id, f[0].TsNs, s[0].TsNs)
		}
	}
}

// metadata checks that every process and thread with events is named.
func (c *checker) metadata() {
	told := map[[2]int]bool{}
	for _, e := range c.tr.Events {
		if e.Ph == "M" {
			continue
		}
		if _, ok := c.tr.ProcessNames[e.Pid]; !ok && !told[[2]int{e.Pid, -1}] {
			c.errorf(e.Index, "pid %d has no process_name", e.Pid)
			told[[2]int{e.Pid, -1}] = true
		}
		if _, ok := c.tr.ThreadNames[[2]int{e.Pid, e.Tid}]; !ok && !told[[2]int{e.Pid, e.Tid}] {
			c.errorf(e.Index, "pid %d tid %d has no thread_name", e.Pid, e.Tid)
			told[[2]int{e.Pid, e.Tid}] = true
		}
	}
}
