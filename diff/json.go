package diff

import (
	"encoding/json"
	"io"
	"math"
)

// The profile-diff/1 document (docs/diff.md, docs/diff.schema.json).
type (
	jsonReport struct {
		Format    string         `json:"format"`
		Sort      SortKey        `json:"sort"`
		PerCall   bool           `json:"per_call"`
		NoiseNs   int64          `json:"noise_ns"`
		Base      jsonSide       `json:"base"`
		New       jsonSide       `json:"new"`
		Totals    jsonTotals     `json:"totals"`
		Functions []jsonFunction `json:"functions"`
		Edges     []jsonEdge     `json:"edges"`
		Gates     []jsonGate     `json:"gates"`
	}
	jsonSide struct {
		File       string   `json:"file"`
		Exe        string   `json:"exe"`
		Command    []string `json:"command"`
		Mode       string   `json:"mode"`
		DurationNs int64    `json:"duration_ns"`
		TracedNs   int64    `json:"traced_ns"`
		Partial    bool     `json:"partial"`
		Sampled    bool     `json:"sampled"`
		Times      string   `json:"times"`
	}
	jsonTotals struct {
		Functions      int `json:"functions"`
		Edges          int `json:"edges"`
		QuietFunctions int `json:"quiet_functions"`
		QuietEdges     int `json:"quiet_edges"`
	}
	jsonFunction struct {
		jsonFuncID
		Status       string    `json:"status"`
		Calls        jsonDelta `json:"calls"`
		Self         jsonDelta `json:"self"`
		Total        jsonDelta `json:"total"`
		SelfPerCall  jsonDelta `json:"self_per_call"`
		TotalPerCall jsonDelta `json:"total_per_call"`
	}
	jsonFuncID struct {
		Name   string `json:"name"`
		Module string `json:"module"`
	}
	jsonEdge struct {
		Caller       string    `json:"caller"`
		Callee       string    `json:"callee"`
		CallerModule string    `json:"caller_module"`
		CalleeModule string    `json:"callee_module"`
		Kind         string    `json:"kind"`
		Status       string    `json:"status"`
		Calls        jsonDelta `json:"calls"`
		Total        jsonDelta `json:"total"`
		TotalPerCall jsonDelta `json:"total_per_call"`
	}
	jsonDelta struct {
		Base   int64    `json:"base"`
		New    int64    `json:"new"`
		Delta  int64    `json:"delta"`
		RelPct *float64 `json:"rel_pct"` // null where the base is 0 and the new value not
	}
	jsonGate struct {
		Gate      string       `json:"gate"`
		Broken    bool         `json:"broken"`
		Functions []jsonFuncID `json:"functions"`
	}
)

func toJSONDelta(d Delta) jsonDelta {
	j := jsonDelta{Base: d.Base, New: d.New, Delta: d.Delta}
	if !math.IsInf(d.RelPct, 0) {
		rel := d.RelPct
		j.RelPct = &rel
	}
	return j
}

func toJSONSide(file string, s *Side) jsonSide {
	cmd := s.Command
	if cmd == nil {
		cmd = []string{}
	}
	return jsonSide{File: file, Exe: s.Exe, Command: cmd, Mode: s.Mode, DurationNs: s.DurationNs,
		TracedNs: s.TracedNs, Partial: s.Partial, Sampled: s.Sampled, Times: s.Times}
}

// WriteJSON writes r as the indented profile-diff/1 document. Times are
// integer nanoseconds; with --top, totals still count every row above the
// noise floor. Rows under the floor are left out, as in the tables.
func WriteJSON(w io.Writer, r *Report) error {
	doc := jsonReport{Format: r.Format, Sort: r.Sort, PerCall: r.PerCall, NoiseNs: r.NoiseNs,
		Base: toJSONSide(r.BaseName, &r.Base), New: toJSONSide(r.NewName, &r.New),
		Totals: jsonTotals{Functions: r.AllFunctions, Edges: r.AllEdges, QuietFunctions: r.QuietFunctions,
			QuietEdges: r.QuietEdges},
		Functions: make([]jsonFunction, len(r.Functions)), Edges: make([]jsonEdge, len(r.Edges)),
		Gates: make([]jsonGate, len(r.Gates))}
	for i, f := range r.Functions {
		doc.Functions[i] = jsonFunction{jsonFuncID: jsonFuncID{f.Name, f.Module}, Status: f.Status.String(),
			Calls: toJSONDelta(f.Calls), Self: toJSONDelta(f.Self), Total: toJSONDelta(f.Total),
			SelfPerCall: toJSONDelta(MetricSelfPerCall.Of(&f)), TotalPerCall: toJSONDelta(MetricTotalPerCall.Of(&f))}
	}
	for i, e := range r.Edges {
		doc.Edges[i] = jsonEdge{Caller: e.Caller.Name, Callee: e.Callee.Name, CallerModule: e.Caller.Module,
			CalleeModule: e.Callee.Module, Kind: e.Kind.String(), Status: e.Status.String(),
			Calls: toJSONDelta(e.Calls), Total: toJSONDelta(e.Total), TotalPerCall: toJSONDelta(perCallDelta(e.Total, e.Calls))}
	}
	for i, g := range r.Gates {
		doc.Gates[i] = jsonGate{Gate: g.Gate.Expr, Broken: len(g.Functions) > 0, Functions: make([]jsonFuncID, len(g.Functions))}
		for k, f := range g.Functions {
			doc.Gates[i].Functions[k] = jsonFuncID{f.Name, f.Module}
		}
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}
