package timeline

import (
	"encoding/json"
	"io"

	"github.com/profile-dev/profile/model"
)

// Format is the "format" of the JSON document: bumped when a field is
// removed or renamed or its meaning changes (docs/trees.md).
const Format = "profile-trees/1"

type jsonDoc struct {
	Format  string       `json:"format"`
	Rule    jsonRule     `json:"rule"`
	MinNs   int64        `json:"min_ns"`
	Threads []jsonThread `json:"threads"`
}

type jsonRule struct {
	Funcs  string `json:"funcs"`
	SlowNs int64  `json:"slow_ns"`
	If     string `json:"if"`
	Limit  int    `json:"limit"`
}

type jsonThread struct {
	Tid           int        `json:"tid"`
	Pid           int        `json:"pid"`
	Name          string     `json:"name"`
	RecordedTrees int        `json:"recorded_trees"`
	DroppedTrees  int64      `json:"dropped_trees"`
	Trees         []jsonTree `json:"trees"`
}

type jsonTree struct {
	Calls []jsonCall `json:"calls"`
}

type jsonCall struct {
	Name       string   `json:"name"`
	Module     string   `json:"module"`
	Depth      int      `json:"depth"`
	StartNs    int64    `json:"start_ns"`
	DurationNs int64    `json:"duration_ns"`
	Kept       bool     `json:"kept"`
	Open       bool     `json:"open"`
	InFlight   bool     `json:"in_flight"`
	Returned   bool     `json:"returned"`
	HasArgs    bool     `json:"has_args"`
	ArityKnown bool     `json:"arity_known"`
	Args       []int32  `json:"args"`
	ArgsHex    []string `json:"args_hex"`
	Ret        int32    `json:"ret"`
	RetHex     string   `json:"ret_hex"`
}

// WriteJSON writes the detail trees of p as one JSON document (Format,
// docs/trees.md): threads → trees → calls in pre-order, every field always
// present, names in full.
func WriteJSON(w io.Writer, p *model.Profile, opt Options) error {
	threads, err := selectTrees(p, opt)
	if err != nil {
		return err
	}
	doc := jsonDoc{Format: Format, MinNs: opt.MinNs, Threads: make([]jsonThread, 0, len(threads))}
	if r := p.Meta.Detail; r != nil {
		doc.Rule = jsonRule{Funcs: r.Funcs, SlowNs: r.SlowNs, If: r.If, Limit: r.Limit}
	}
	for _, tt := range threads {
		jt := jsonThread{Tid: tt.t.Tid, Pid: tt.pid, Name: tt.t.Name, RecordedTrees: len(tt.t.Trees),
			DroppedTrees: tt.t.DroppedTrees, Trees: make([]jsonTree, 0, len(tt.trees))}
		for _, tr := range tt.trees {
			calls := make([]jsonCall, len(tr.Calls))
			for i := range tr.Calls {
				calls[i] = callJSON(p, &tr.Calls[i])
			}
			jt.Trees = append(jt.Trees, jsonTree{Calls: calls})
		}
		doc.Threads = append(doc.Threads, jt)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(doc)
}

func callJSON(p *model.Profile, c *model.DetailCall) jsonCall {
	fn := p.Functions[c.Func]
	f := c.Flags
	j := jsonCall{Name: fn.Name, Module: p.ModuleName(fn.Module), Depth: c.Depth, StartNs: c.StartNs,
		DurationNs: c.EndNs - c.StartNs, Kept: f.Has(model.DetailKept), Open: f.Has(model.DetailOpen),
		InFlight: f.Has(model.DetailInFlight), Returned: f.Has(model.DetailReturned), HasArgs: f.Has(model.DetailArgs),
		Args: []int32{}, ArgsHex: []string{}}
	if j.HasArgs {
		j.ArityKnown = c.NArgs >= 0
		for _, a := range args(c) {
			j.Args = append(j.Args, Int(a))
			j.ArgsHex = append(j.ArgsHex, Hex(a))
		}
	}
	if j.Returned {
		j.Ret, j.RetHex = Int(c.Ret), Hex(c.Ret)
	}
	return j
}
