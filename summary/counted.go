package summary

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/profile-dev/profile/internal/human"
	"github.com/profile-dev/profile/internal/tables"
)

// Counted functions and edges (FuncNumbers.Counted, EdgeNumbers.Counted):
// their calls are exact, their time was never measured, so no format
// shows it as a measured 0. The JSON leaves the times out and says
// "counted": true; the tables say "counted" in the self (or total) column
// and "-" in the other time columns; CSV leaves the time cells empty.
// With busy times from CPU samples (Totals.BusySampled) a counted
// function that was sampled has its sampled times (the contexts the
// samples made for it, model.Node.SampleOnly) and is not counted: only
// one with neither measured nor sampled time is.

// countedCell is the self (or total) cell of a counted function or edge.
const countedCell = "counted"

// funcTimes are a function's self, self %, total and total % cells.
func funcTimes(n *FuncNumbers) []string {
	if n.Counted {
		return []string{countedCell, "-", "-", "-"}
	}
	return []string{human.Duration(n.SelfNs), human.Percent(n.SelfPct), human.Duration(n.TotalNs), human.Percent(n.TotalPct)}
}

// edgeTimes are an edge's total and total % cells.
func edgeTimes(n *EdgeNumbers) []string {
	if n.Counted {
		return []string{countedCell, "-"}
	}
	return []string{human.Duration(n.TotalNs), human.Percent(n.TotalPct)}
}

// countedNote appends to note (after "; " when it has a part) the line
// under the functions table saying how many functions of the scope were
// only counted; note unchanged when none.
func countedNote(note []tables.Span, r *Report) []tables.Span {
	n := r.CountedFuncs
	if n == 0 {
		return note
	}
	text := strconv.Itoa(n) + " functions only counted (--counted): exact calls, their time is in their callers' self time"
	switch {
	case r.Totals.BusySampled && n == 1:
		text = "1 function only counted (--counted): exact calls, no CPU sample in its code"
	case r.Totals.BusySampled:
		text = strconv.Itoa(n) + " functions only counted (--counted): exact calls, no CPU sample in their code"
	case n == 1:
		text = "1 function only counted (--counted): exact calls, its time is in its callers' self time"
	}
	if note != nil {
		text = "; " + text
	}
	return append(note, tables.Span{Text: text})
}

// countedNumbers are the numbers the JSON of a counted function or edge
// carries.
type countedNumbers struct {
	Calls          int64 `json:"calls"`
	RecursiveCalls int64 `json:"recursive_calls"`
	Counted        bool  `json:"counted"`
}

// The MarshalJSON methods make encoding/json write what WriteJSON writes:
// a counted function's or edge's times left out.

func (f Function) MarshalJSON() ([]byte, error) {
	type plain Function
	if !f.Counted {
		return marshal(plain(f))
	}
	return marshal(struct {
		Name   string `json:"name"`
		Module string `json:"module"`
		countedNumbers
		TracedSinceNs int64           `json:"traced_since_ns,omitempty"`
		TracedUntilNs int64           `json:"traced_until_ns,omitempty"`
		Threads       []FunctionShare `json:"by_thread,omitempty"`
	}{f.Name, f.Module, countedNumbers{f.Calls, f.RecursiveCalls, true}, f.TracedSinceNs, f.TracedUntilNs, f.Threads})
}

func (s FunctionShare) MarshalJSON() ([]byte, error) {
	type plain FunctionShare
	if !s.Counted {
		return marshal(plain(s))
	}
	return marshal(struct {
		Thread int `json:"thread"`
		countedNumbers
	}{s.Thread, countedNumbers{s.Calls, s.RecursiveCalls, true}})
}

func (e Edge) MarshalJSON() ([]byte, error) {
	type plain Edge
	if !e.Counted {
		return marshal(plain(e))
	}
	return marshal(struct {
		Caller       string `json:"caller"`
		Callee       string `json:"callee"`
		CallerModule string `json:"caller_module"`
		CalleeModule string `json:"callee_module"`
		Kind         string `json:"kind"`
		countedNumbers
		Threads []EdgeShare `json:"by_thread,omitempty"`
	}{e.Caller, e.Callee, e.CallerModule, e.CalleeModule, e.Kind, countedNumbers{e.Calls, e.RecursiveCalls, true}, e.Threads})
}

func (s EdgeShare) MarshalJSON() ([]byte, error) {
	type plain EdgeShare
	if !s.Counted {
		return marshal(plain(s))
	}
	return marshal(struct {
		Thread  int  `json:"thread"`
		Creator *int `json:"creator,omitempty"`
		countedNumbers
	}{s.Thread, s.Creator, countedNumbers{s.Calls, s.RecursiveCalls, true}})
}

// marshal is json.Marshal without HTML escapes, as WriteJSON writes: C++
// names keep their <>.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
